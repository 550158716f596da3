"""Item models of the tools section: the agent's MCP servers with their state, a server's tools."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QAbstractListModel, QAbstractTableModel, QModelIndex, Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPixmap

from foundry.agent.models import IncludeMode
from foundry.tools import ServerStatus
from foundry.ui.editor.items_model import Index

STATE_LABELS = {
    "stopped": "stopped",
    "starting": "starting…",
    "running": "running",
    "failed": "failed to start",
    "crashed": "crashed",
    "internal": "internal",
}
STATE_COLORS = {
    "stopped": QColor("#9e9e9e"),
    "starting": QColor("#f9a825"),
    "running": QColor("#2e7d32"),
    "failed": QColor("#c62828"),
    "crashed": QColor("#c62828"),
    "internal": QColor("#1565c0"),
}
DOT_SIZE = 12


def _dot(color: QColor) -> QIcon:
    pixmap = QPixmap(DOT_SIZE, DOT_SIZE)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(color)
    painter.drawEllipse(1, 1, DOT_SIZE - 2, DOT_SIZE - 2)
    painter.end()
    return QIcon(pixmap)


@dataclass(frozen=True)
class ServerRow:
    name: str
    transport: str
    state: str = "stopped"
    detail: str = ""

    @property
    def label(self) -> str:
        return STATE_LABELS.get(self.state, self.state)


class ServerListModel(QAbstractListModel):
    """The agent's servers in file order; each shows its state and a coloured dot."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.rows: list[ServerRow] = []
        self._statuses: dict[str, ServerStatus] = {}
        self._crashed: set[str] = set()  # failed after running, rather than failed to start
        self._dots = {state: _dot(color) for state, color in STATE_COLORS.items()}

    def set_servers(self, servers: list[tuple[str, str]]) -> None:
        """(name, transport) of each server; states come from the statuses seen so far."""
        self.beginResetModel()
        self.rows = [self._row(name, transport) for name, transport in servers]
        self.endResetModel()

    def set_status(self, status: ServerStatus) -> None:
        previous = self._statuses.get(status.name)
        if status.state == "failed" and previous is not None and previous.state == "running":
            self._crashed.add(status.name)
        elif status.state != "failed":
            self._crashed.discard(status.name)
        self._statuses[status.name] = status
        for number, row in enumerate(self.rows):
            if row.name == status.name:
                self.rows[number] = self._row(row.name, row.transport)
                index = self.index(number)
                self.dataChanged.emit(index, index)

    def status(self, name: str) -> ServerStatus | None:
        return self._statuses.get(name)

    def forget(self, name: str) -> None:
        self._statuses.pop(name, None)

    def row_of(self, name: str) -> int | None:
        return next((n for n, row in enumerate(self.rows) if row.name == name), None)

    def _row(self, name: str, transport: str) -> ServerRow:
        if transport == "internal":
            return ServerRow(name, transport, "internal", "provided by Foundry itself")
        status = self._statuses.get(name)
        if status is None:
            return ServerRow(name, transport)
        detail = status.error or ""
        if status.state == "running":
            detail = f"{len(status.tools)} tool(s)"
        state = "crashed" if name in self._crashed else status.state
        return ServerRow(name, transport, state, detail)

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.rows)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row = self.rows[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return f"{row.name}  ·  {row.label}\n{row.transport}"
        if role == Qt.ItemDataRole.DecorationRole:
            return self._dots.get(row.state)
        if role == Qt.ItemDataRole.ToolTipRole:
            return row.detail or row.label
        return None


@dataclass(frozen=True)
class ToolRow:
    tool: str
    description: str
    include: IncludeMode
    permission_required: bool
    known: bool  # listed by a run of the server (else only named in the agent's settings)


TOOL_COLUMNS = ("Tool", "Include", "Approval", "Description")


class ToolTableModel(QAbstractTableModel):
    """A server's tools with the include mode and approval setting the agent gives each."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.rows: list[ToolRow] = []

    def set_rows(self, rows: list[ToolRow]) -> None:
        self.beginResetModel()
        self.rows = rows
        self.endResetModel()

    def row_of(self, tool: str) -> int | None:
        return next((n for n, row in enumerate(self.rows) if row.tool == tool), None)

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(TOOL_COLUMNS)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row = self.rows[index.row()]
        if role == Qt.ItemDataRole.ToolTipRole:
            return row.description or None
        if role == Qt.ItemDataRole.ForegroundRole and not row.known:
            return QColor("#9e9e9e")
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        approval = "ask first" if row.permission_required else "runs freely"
        description = row.description.splitlines()[0] if row.description else ""
        if not row.known:
            description = "(start the server to see this tool)"
        return (row.tool, row.include.value, approval, description)[index.column()]

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation is Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return TOOL_COLUMNS[section]
        return None
