"""View > Gateway: the MCP clients connected through the gateway and their latest calls, live."""

from __future__ import annotations

import asyncio

from PySide6.QtCore import QTimer
from PySide6.QtGui import (
    QBrush,
    QColor,
    QHideEvent,
    QShowEvent,
    QStandardItem,
    QStandardItemModel,
)
from PySide6.QtWidgets import QHeaderView, QLabel, QTreeView, QVBoxLayout, QWidget

from foundry.gateway.activity import GatewayCall, GatewayClient, gateway_clients
from foundry.store import Store
from foundry.ui.background import BackgroundTasks

REFRESH_MS = 1000
COLUMNS = ("Client / call", "Agent / decision", "When (UTC)", "Result")
DENIED = QColor("#C44E52")


class GatewayView(QWidget):
    """A tree: each client connection, under it its latest calls (newest first)."""

    def __init__(self, store: Store, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._store = store
        self.model = QStandardItemModel(0, len(COLUMNS), self)
        self.model.setHorizontalHeaderLabels(COLUMNS)
        self.tree = QTreeView()
        self.tree.setModel(self.model)
        self.tree.setAlternatingRowColors(True)
        self.tree.setUniformRowHeights(True)
        self.tree.header().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.tree.header().setStretchLastSection(True)
        self.note = QLabel(
            "Clients connect with `foundry gateway AGENT` (see docs/gateway.md); every call "
            "they make is decided by the agent's policy and listed here."
        )
        self.note.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addWidget(self.note)
        layout.addWidget(self.tree, 1)
        self._tasks = BackgroundTasks("gateway view", self.note.setText)
        self._timer = QTimer(self)
        self._timer.setInterval(REFRESH_MS)
        self._timer.timeout.connect(self.refresh)
        self._expanded: set[str] = set()
        self._refreshing = False

    def showEvent(self, event: QShowEvent) -> None:
        """Polled while shown only: a closed or hidden tab (or a closed window) reads nothing."""
        super().showEvent(event)
        self._timer.start()
        self.refresh()

    def hideEvent(self, event: QHideEvent) -> None:
        self._timer.stop()
        super().hideEvent(event)

    def polling(self) -> bool:
        return self._timer.isActive()

    def refresh(self) -> None:
        if not self._refreshing:
            self._refreshing = True
            self._tasks.spawn(self._refresh())

    async def _refresh(self) -> None:
        try:
            clients = await asyncio.to_thread(gateway_clients, self._store)
        finally:
            self._refreshing = False
        self.show_clients(clients)

    def show_clients(self, clients: list[GatewayClient]) -> None:
        self._remember_expanded()
        self.model.removeRows(0, self.model.rowCount())
        for client in clients:
            row = _row(client.client, client.agent, f"{client.started:%Y-%m-%d %H:%M:%S}", "")
            row[0].setData(client.session_id)
            row[3].setText(f"{len(client.calls)} recent call{'s' * (len(client.calls) != 1)}")
            for call in client.calls:
                row[0].appendRow(_call_row(call))
            self.model.appendRow(row)
            if client.session_id in self._expanded or len(clients) == 1:
                self.tree.expand(row[0].index())

    def _remember_expanded(self) -> None:
        for number in range(self.model.rowCount()):
            item = self.model.item(number)
            if item is not None and self.tree.isExpanded(item.index()):
                self._expanded.add(str(item.data()))


def _row(*texts: str) -> list[QStandardItem]:
    items = [QStandardItem(text) for text in texts]
    for item in items:
        item.setEditable(False)
    return items


def _call_row(call: GatewayCall) -> list[QStandardItem]:
    decision = f"{'allowed' if call.allowed else 'denied'} by {call.by}"
    result = call.result if call.allowed else call.reason
    if call.allowed and not call.result:
        result = "running…"
    row = _row(call.tool, decision, f"{call.time:%H:%M:%S}", result.replace("\n", " "))
    if not call.allowed or call.is_error:
        for item in row[1:]:
            item.setForeground(QBrush(DENIED))
    row[3].setToolTip(call.result or call.reason)
    return row
