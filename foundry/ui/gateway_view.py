"""View > Gateway: the MCP clients connected through the gateway and their latest calls, live,
and the configuration a client needs to connect through the open agent."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import (
    QBrush,
    QColor,
    QHideEvent,
    QShowEvent,
    QStandardItem,
    QStandardItemModel,
)
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QStackedWidget,
    QToolButton,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from foundry.gateway.activity import GatewayCall, GatewayClient, gateway_clients
from foundry.gateway.client_config import CLIENTS, CONFIG_FILES, client_config
from foundry.ui.background import BackgroundTasks
from foundry.ui.clock import local_time

if TYPE_CHECKING:
    from foundry.runtime.engine import Engine

REFRESH_MS = 1000
COLUMNS = ("Client / call", "Agent / decision", "When", "Result")
DENIED = QColor("#C44E52")
WARNING = QColor("#AD1457")
CLIENT_NAMES = {
    "claude-desktop": "Claude Desktop",
    "cursor": "Cursor",
    "vscode": "VS Code",
    "claude-code": "Claude Code",
}
NO_CLIENT_YET = (
    "No MCP client has connected yet. Add the configuration above to a client and restart it: "
    "its calls are listed here as they are decided."
)
SNIPPET_LINES = 14  # the longest configuration (VS Code's, 13 lines) and a margin: no scroll bar
CONNECT = "Connect a client"
WAITING = "asked in the Approvals tab; the client waits"
NO_AGENT = "Open an agent first (Ctrl+O): the configuration names the agent whose policy decides."


def engine_clients(engine: Engine) -> Callable[[], list[GatewayClient]]:
    """What the view shows of the engine: the gateway's clients in its store."""
    return functools.partial(gateway_clients, engine.store)


class GatewayView(QWidget):
    """A tree: each client connection, under it its latest calls (newest first), as
    `read_clients` finds them (gateway_clients of the store, read off the GUI thread)."""

    def __init__(
        self, read_clients: Callable[[], list[GatewayClient]], parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self._read_clients = read_clients
        self.model = QStandardItemModel(0, len(COLUMNS), self)
        self.model.setHorizontalHeaderLabels(COLUMNS)
        self.tree = QTreeView()
        self.tree.setModel(self.model)
        self.tree.setAlternatingRowColors(True)
        self.tree.setUniformRowHeights(True)
        self.tree.header().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.tree.header().setStretchLastSection(True)
        self.note = QLabel(
            "MCP clients connect through `foundry gateway AGENT`: every tool call they make is "
            "decided by the agent's policy, asked in the Approvals tab when it must be, and "
            "listed here."
        )
        self.note.setWordWrap(True)
        self.connect_panel = ConnectPanel()
        self.connect_toggle = QToolButton()
        self.connect_toggle.setText(CONNECT)
        self.connect_toggle.setToolTip("Show or hide the configuration a client needs")
        self.connect_toggle.setCheckable(True)
        self.connect_toggle.setChecked(True)
        self.connect_toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.connect_toggle.setAutoRaise(True)
        self.connect_toggle.toggled.connect(self._show_connect_panel)
        self._show_connect_panel(True)
        self._folded_once = False  # folded when the first client is listed, never again by itself
        self.empty = QLabel(NO_CLIENT_YET)
        self.empty.setWordWrap(True)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.empty.setStyleSheet("color: palette(mid); padding: 12px;")
        self.listing = QStackedWidget()
        self.listing.addWidget(self.empty)
        self.listing.addWidget(self.tree)
        layout = QVBoxLayout(self)
        layout.addWidget(self.note)
        layout.addWidget(self.connect_toggle)
        layout.addWidget(self.connect_panel)
        layout.addWidget(self.listing, 1)
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
            clients = await asyncio.to_thread(self._read_clients)
        finally:
            self._refreshing = False
        self.show_clients(clients)

    def set_agent(self, agent: Path | None) -> None:
        """The agent the client configuration names: the one open in the window."""
        self.connect_panel.set_agent(agent)

    def _show_connect_panel(self, shown: bool) -> None:
        self.connect_panel.setVisible(shown)
        arrow = Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow
        self.connect_toggle.setArrowType(arrow)

    def show_clients(self, clients: list[GatewayClient]) -> None:
        """List the clients; the first time there are some, the connect panel folds away to
        leave their calls the room (its toggle opens it again)."""
        if clients and not self._folded_once:
            self._folded_once = True
            self.connect_toggle.setChecked(False)
        self.listing.setCurrentWidget(self.tree if clients else self.empty)
        self._remember_expanded()
        self.model.removeRows(0, self.model.rowCount())
        for client in clients:
            row = _row(client.client, client.agent, local_time(client.started), "")
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


class ConnectPanel(QGroupBox):
    """The JSON a client's configuration file needs to start the gateway with the open agent
    (what `foundry gateway --print-config CLIENT AGENT` prints), with a button to copy it."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.client = QComboBox()
        for client in CLIENTS:
            self.client.addItem(CLIENT_NAMES[client], client)
        self.where = QLabel()
        self.where.setWordWrap(True)
        self.snippet = QPlainTextEdit()
        self.snippet.setReadOnly(True)
        self.snippet.setStyleSheet("font-family: monospace;")
        self.copy = QPushButton("&Copy")
        self.copy.setToolTip("Copy the configuration to the clipboard")
        self.copy.clicked.connect(self.copy_snippet)
        self.copied = QLabel()
        choice = QHBoxLayout()
        choice.addWidget(self.client)
        choice.addWidget(self.copy)
        choice.addWidget(self.copied, 1)
        form = QFormLayout(self)
        form.addRow("Client:", choice)
        form.addRow("Add to:", self.where)
        form.addRow(self.snippet)
        self._agent: Path | None = None
        self._tasks = BackgroundTasks("client configuration", self._show_text)
        self.client.currentIndexChanged.connect(self._update)
        self._update()

    def set_agent(self, agent: Path | None) -> None:
        if agent != self._agent:
            self._agent = agent
            self._update()

    def _update(self) -> None:
        client = str(self.client.currentData())
        self.where.setText(CONFIG_FILES[client])
        self.copied.clear()
        if self._agent is None:
            self._show_text(NO_AGENT)
            self.copy.setEnabled(False)
            return
        self._tasks.spawn(self._show_config(client, self._agent))

    async def _show_config(self, client: str, agent: Path) -> None:
        # the command's and the agent's absolute paths are looked up on the filesystem
        text = await asyncio.to_thread(client_config, client, agent)
        if client == self.client.currentData() and agent == self._agent:
            self._show_text(text)
            self.copy.setEnabled(True)

    def _show_text(self, text: str) -> None:
        """Show `text` in a box just tall enough for it (up to SNIPPET_LINES lines)."""
        self.snippet.setPlainText(text)
        lines = min(max(text.count("\n") + 1, 2), SNIPPET_LINES)
        spacing = self.snippet.fontMetrics().lineSpacing()
        margins = 2 * self.snippet.frameWidth() + 2 * int(self.snippet.document().documentMargin())
        self.snippet.setFixedHeight(lines * spacing + margins + 4)

    def copy_snippet(self) -> None:
        QApplication.clipboard().setText(self.snippet.toPlainText())
        name = self.client.currentText()
        self.copied.setText(f"Copied: paste it into {name}'s configuration, then restart {name}.")


def _row(*texts: str) -> list[QStandardItem]:
    items = [QStandardItem(text) for text in texts]
    for item in items:
        item.setEditable(False)
    return items


def _call_row(call: GatewayCall) -> list[QStandardItem]:
    if call.warning and call.by == "supervision":  # about the tool, not one call
        return _warning(_row(call.tool, f"⚠ {call.warning}", local_time(call.time), call.reason))
    if call.waiting:
        what = f"⚠ held: {call.warning}" if call.warning else WAITING
        row = _row(call.tool, "waiting for a person", local_time(call.time), what)
        row[3].setToolTip(call.reason)
        return _warning(row) if call.warning else row
    decision = f"{'allowed' if call.allowed else 'denied'} by {call.by}"
    result = call.result if call.allowed else call.reason
    if call.allowed and not call.result:
        result = "running…"
    row = _row(call.tool, decision, local_time(call.time), result.replace("\n", " "))
    if not call.allowed or call.is_error:
        for item in row[1:]:
            item.setForeground(QBrush(DENIED))
    row[3].setToolTip(call.result or call.reason)
    if call.warning:  # its result was flagged
        row[1].setText(f"{decision} · ⚠ {call.warning}")
        return _warning(row)
    return row


def _warning(row: list[QStandardItem]) -> list[QStandardItem]:
    for item in row[1:]:
        item.setForeground(QBrush(WARNING))
    return row
