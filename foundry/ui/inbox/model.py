"""The inbox's item models: a table of approvals sorted in Python, and a filtering proxy.

Sorting happens in the source model (a Python sort over the records), not in the proxy:
QSortFilterProxyModel would call back into Python for every comparison, which takes seconds
for 10,000 rows. The proxy only filters, keeping the source's order.
"""

from __future__ import annotations

import fnmatch
from bisect import bisect_right
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import IntEnum
from functools import cached_property
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
)
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QApplication, QStyle

from foundry.runtime.approvals import ApprovalRecord, utc_now
from foundry.runtime.grant_scopes import describe_duration
from foundry.ui.clock import local_time
from foundry.ui.theme import themed_colour

Index = QModelIndex | QPersistentModelIndex
RECORD_ROLE = Qt.ItemDataRole.UserRole + 1
RESOLVED = frozenset({"approved", "denied", "timed_out"})
LEVELS = {"L0": "L0 policy", "L1": "L1 supervisor", "supervisor": "message review"}
STATUS_COLOURS = {
    "pending": "#ef6c00",
    "approved": "#2e7d32",
    "denied": "#c62828",
    "timed_out": "#757575",
}


def status_colour(status: str) -> str:
    """The colour an approval's status is written in, themed_colour on the theme in force."""
    return themed_colour(STATUS_COLOURS.get(status, "#757575"))


ROLES = frozenset(
    {
        Qt.ItemDataRole.DisplayRole,
        Qt.ItemDataRole.DecorationRole,
        Qt.ItemDataRole.ToolTipRole,
        Qt.ItemDataRole.ForegroundRole,
        RECORD_ROLE,
    }
)
BULK_INSERT = 50  # more new rows than this arrive as one insertion and one re-sort
EARLIEST = datetime.min.replace(tzinfo=UTC)
LATEST = datetime.max.replace(tzinfo=UTC)


class Column(IntEnum):
    TOOL = 0
    AGENT = 1
    LEVEL = 2
    STATUS = 3
    WAITED = 4
    EXPIRES = 5
    RESOLVED_BY = 6
    RESOLVED_AT = 7


HEADERS = {
    Column.TOOL: "Tool",
    Column.AGENT: "Agent",
    Column.LEVEL: "Escalated by",
    Column.STATUS: "Status",
    Column.WAITED: "Waited",
    Column.EXPIRES: "Expires in",
    Column.RESOLVED_BY: "Resolved by",
    Column.RESOLVED_AT: "Resolved at",
}


def waited(record: ApprovalRecord, now: datetime) -> timedelta:
    """How long it waited for a decision (so far, while it is pending)."""
    return (record.resolved_at or now) - record.created_at


def remaining(record: ApprovalRecord, now: datetime) -> timedelta | None:
    """Time left before a pending approval times out; None once resolved or without a limit."""
    if record.status != "pending" or record.expires_at is None:
        return None
    return record.expires_at - now


def describe_remaining(left: timedelta | None) -> str:
    if left is None:
        return "—"
    seconds = int(left.total_seconds())
    if seconds <= 0:
        return "expired"
    minutes, seconds = divmod(seconds, 60)
    return f"{minutes}:{seconds:02d}" if minutes < 60 else describe_duration(left)


def _sort_key(column: Column, now: datetime) -> Callable[[ApprovalRecord], Any]:
    keys: dict[Column, Callable[[ApprovalRecord], Any]] = {
        Column.TOOL: lambda r: r.tool.lower(),
        Column.AGENT: lambda r: r.agent_id.lower(),
        Column.LEVEL: lambda r: r.level,
        Column.STATUS: lambda r: r.status,
        Column.WAITED: lambda r: waited(r, now),
        Column.EXPIRES: lambda r: r.expires_at or LATEST,
        Column.RESOLVED_BY: lambda r: r.resolved_by or "",
        Column.RESOLVED_AT: lambda r: r.resolved_at or EARLIEST,
    }
    primary = keys[column]
    return lambda record: (primary(record), record.created_at, record.id)


class _Descending:
    """Wraps a sort key so that ascending order of the wrappers is descending order of keys."""

    __slots__ = ("key",)

    def __init__(self, key: Any) -> None:
        self.key = key

    def __lt__(self, other: _Descending) -> bool:
        return bool(other.key < self.key)


class ApprovalTableModel(QAbstractTableModel):
    """Approvals as rows, kept sorted; `resolved_only` keeps pending ones out (the history)."""

    def __init__(self, resolved_only: bool = False, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.rows: list[ApprovalRecord] = []
        self.resolved_only = resolved_only
        self._row_of: dict[str, int] = {}
        self._pending: set[str] = set()
        self._column = Column.WAITED
        self._order = Qt.SortOrder.DescendingOrder
        self._warning = QApplication.style().standardIcon(
            QStyle.StandardPixmap.SP_MessageBoxWarning
        )

    # -- Qt's model interface -------------------------------------------------------------------

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 (Qt's signature)
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(Column)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return HEADERS[Column(section)]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role not in ROLES or not index.isValid():  # views ask for many roles; answer fast
            return None
        record = self.rows[index.row()]
        column = Column(index.column())
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(record, column, utc_now())
        if role == RECORD_ROLE:
            return record
        if role == Qt.ItemDataRole.ForegroundRole and column == Column.STATUS:
            return QColor(status_colour(record.status))
        if role == Qt.ItemDataRole.DecorationRole and column == Column.TOOL:
            return self._warning if record.injection_risk else None
        if role == Qt.ItemDataRole.ToolTipRole and column == Column.TOOL:
            risk = "\nThe parameters read like a prompt injection." if record.injection_risk else ""
            return f"{record.tool} ({record.id}){risk}"
        return None

    def _text(self, record: ApprovalRecord, column: Column, now: datetime) -> str:
        if column == Column.TOOL:
            return record.tool
        if column == Column.AGENT:
            return record.agent_id
        if column == Column.LEVEL:
            return LEVELS.get(record.level, record.level)
        if column == Column.STATUS:
            return record.status.replace("_", " ")
        if column == Column.WAITED:
            return describe_duration(waited(record, now))
        if column == Column.EXPIRES:
            return describe_remaining(remaining(record, now))
        if column == Column.RESOLVED_BY:
            return record.resolved_by or "—"
        return local_time(record.resolved_at)

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        self._column, self._order = Column(column), order
        self._relayout()

    # -- changes --------------------------------------------------------------------------------

    def reset(self, records: Iterable[ApprovalRecord]) -> None:
        self.beginResetModel()
        self.rows = [record for record in records if self._belongs(record)]
        self.rows.sort(key=self._key())
        self._index_rows()
        self._pending = {record.id for record in self.rows if record.status == "pending"}
        self.endResetModel()

    def merge(self, records: Iterable[ApprovalRecord]) -> list[ApprovalRecord]:
        """Update known approvals in place and insert new ones where the order puts them;
        returns the new ones."""
        added: list[ApprovalRecord] = []
        moved = False
        key = self._key()
        for record in {record.id: record for record in records}.values():
            if not self._belongs(record):
                continue
            self._note_status(record)
            row = self._row_of.get(record.id)
            if row is None:
                added.append(record)
                continue
            moved = moved or key(self.rows[row]) < key(record) or key(record) < key(self.rows[row])
            self.rows[row] = record
            self.dataChanged.emit(self.index(row, 0), self.index(row, len(Column) - 1))
        if len(added) > BULK_INSERT:
            self._append(added)
            moved = True
        elif added:
            self._insert_in_order(added, key)
        if moved:
            self._relayout()
        return added

    def _insert_in_order(
        self, records: list[ApprovalRecord], key: Callable[[ApprovalRecord], Any]
    ) -> None:
        """Each run of new rows that falls between the same two old rows goes in as one block,
        the last block first so that the positions found before still hold."""
        records.sort(key=key)
        blocks: dict[int, list[ApprovalRecord]] = {}
        for record in records:
            blocks.setdefault(bisect_right(self.rows, key(record), key=key), []).append(record)
        for position in sorted(blocks, reverse=True):
            block = blocks[position]
            self.beginInsertRows(QModelIndex(), position, position + len(block) - 1)
            self.rows[position:position] = block
            self.endInsertRows()
        self._index_rows(start=min(blocks))

    def _append(self, records: list[ApprovalRecord]) -> None:
        """Many at once: appended in one insertion, then put in order by one re-sort."""
        start = len(self.rows)
        self.beginInsertRows(QModelIndex(), start, start + len(records) - 1)
        self.rows.extend(records)
        self.endInsertRows()
        self._index_rows(start)

    def pending_count(self) -> int:
        return len(self._pending)

    def _note_status(self, record: ApprovalRecord) -> None:
        if record.status == "pending":
            self._pending.add(record.id)
        else:
            self._pending.discard(record.id)

    def _belongs(self, record: ApprovalRecord) -> bool:
        return not self.resolved_only or record.status in RESOLVED

    def _key(self) -> Callable[[ApprovalRecord], Any]:
        key = _sort_key(self._column, utc_now())
        if self._order == Qt.SortOrder.DescendingOrder:
            return lambda record: _Descending(key(record))
        return key

    def _index_rows(self, start: int = 0) -> None:
        """Where each approval is, from row `start` on (the rows before it did not move)."""
        if start == 0:
            self._row_of = {}
        for row in range(start, len(self.rows)):
            self._row_of[self.rows[row].id] = row

    def _relayout(self) -> None:
        """Re-sort, keeping the views' selections and current rows on the same approvals."""
        self.layoutAboutToBeChanged.emit()
        persistent = self.persistentIndexList()
        ids = [self.rows[index.row()].id for index in persistent]
        self.rows.sort(key=self._key())
        self._index_rows()
        moved = [
            self.index(self._row_of[one], index.column())
            for one, index in zip(ids, persistent, strict=True)
        ]
        self.changePersistentIndexList(persistent, moved)
        self.layoutChanged.emit()


@dataclass(frozen=True)
class ApprovalFilterSpec:
    """Which approvals a list shows. An empty `tool_glob` matches every tool; one without
    wildcards matches tools that contain it."""

    statuses: frozenset[str] | None = frozenset({"pending"})
    agent: str | None = None
    tool_glob: str = ""
    level: str | None = None
    newer_than: timedelta | None = None
    older_than: timedelta | None = None

    def accepts(self, record: ApprovalRecord, now: datetime) -> bool:
        if self.statuses is not None and record.status not in self.statuses:
            return False
        if self.agent is not None and record.agent_id != self.agent:
            return False
        if self.level is not None and record.level != self.level:
            return False
        if self.tool_glob and not fnmatch.fnmatchcase(record.tool.lower(), self._pattern):
            return False
        age = now - record.created_at
        if self.newer_than is not None and age > self.newer_than:
            return False
        return self.older_than is None or age >= self.older_than

    @cached_property
    def _pattern(self) -> str:
        pattern = self.tool_glob.strip().lower()
        return pattern if any(char in pattern for char in "*?[") else f"*{pattern}*"

    @property
    def ages(self) -> bool:
        return self.newer_than is not None or self.older_than is not None


class ApprovalFilter(QSortFilterProxyModel):
    """Shows the approvals its spec accepts, in the source model's order; sorting a view sorts
    the source."""

    def __init__(
        self, model: ApprovalTableModel, spec: ApprovalFilterSpec, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self.spec = spec
        self._now = utc_now()
        self._model = model
        self.setSourceModel(model)

    def source(self) -> ApprovalTableModel:
        return self._model

    def set_spec(self, spec: ApprovalFilterSpec) -> None:
        self.beginFilterChange()
        self.spec = spec
        self._now = utc_now()
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)

    def refresh_ages(self) -> None:
        """Age filters move with the clock: re-apply them."""
        if self.spec.ages:
            self.set_spec(self.spec)

    def filterAcceptsRow(self, source_row: int, source_parent: Index) -> bool:
        return self.spec.accepts(self._model.rows[source_row], self._now)

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        self.source().sort(column, order)

    def record_at(self, row: int) -> ApprovalRecord | None:
        if not 0 <= row < self.rowCount():
            return None
        record = self.index(row, 0).data(RECORD_ROLE)
        return record if isinstance(record, ApprovalRecord) else None
