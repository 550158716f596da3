"""ContextItemModel: the rules or references of an agent, sorted by priority, as a table."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt

from foundry.agent.models import ContextItem

COLUMNS = ("Name", "Include", "Enabled", "Priority")
Index = QModelIndex | QPersistentModelIndex


class ContextItemModel(QAbstractTableModel):
    """Rows are items in priority order (lowest first); each remembers its place in the agent."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._rows: list[tuple[int, ContextItem]] = []

    def set_items(self, items: Sequence[ContextItem]) -> None:
        self.beginResetModel()
        order = sorted(enumerate(items), key=lambda pair: (pair[1].priority_level, pair[1].name))
        self._rows = list(order)
        self.endResetModel()

    def agent_index(self, row: int) -> int | None:
        """Where the item on `row` sits in the agent's list."""
        return self._rows[row][0] if 0 <= row < len(self._rows) else None

    def row_of(self, agent_index: int) -> int | None:
        return next((row for row, (i, _) in enumerate(self._rows) if i == agent_index), None)

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or role != Qt.ItemDataRole.DisplayRole:
            return None
        item = self._rows[index.row()][1]
        values = (
            item.name,
            str(item.include),
            "yes" if item.enabled else "no",
            item.priority_level,
        )
        return values[index.column()]

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation is Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None
