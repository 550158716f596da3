"""The approval inbox's widgets: filters, the pending and history lists, the detail, shortcuts."""

from __future__ import annotations

from datetime import timedelta

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence, QShortcut, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSplitter,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from foundry.ui.inbox.detail import ApprovalDetailView
from foundry.ui.inbox.model import (
    LEVELS,
    RESOLVED,
    ApprovalFilter,
    ApprovalFilterSpec,
    ApprovalTableModel,
    Column,
)
from foundry.ui.inbox.needless import NeedlessStrip
from foundry.ui.theme import quiet

STATUSES: tuple[tuple[str, frozenset[str] | None], ...] = (
    ("Pending", frozenset({"pending"})),
    ("Approved", frozenset({"approved"})),
    ("Denied", frozenset({"denied"})),
    ("Timed out", frozenset({"timed_out"})),
    ("Any status", None),
)
AGES: tuple[tuple[str, timedelta | None, timedelta | None], ...] = (
    ("Any age", None, None),
    ("Under 5 minutes", timedelta(minutes=5), None),
    ("Under 1 hour", timedelta(hours=1), None),
    ("Under 24 hours", timedelta(hours=24), None),
    ("Over 1 hour", None, timedelta(hours=1)),
    ("Over 24 hours", None, timedelta(hours=24)),
)
PENDING_COLUMNS = (
    Column.TOOL,
    Column.AGENT,
    Column.LEVEL,
    Column.STATUS,
    Column.WAITED,
    Column.EXPIRES,
)
HISTORY_COLUMNS = (
    Column.TOOL,
    Column.AGENT,
    Column.STATUS,
    Column.RESOLVED_BY,
    Column.RESOLVED_AT,
    Column.WAITED,
)
KEYS_HINT = (
    "J/K or ↓/↑ move · A approve · D deny · E edit · G grant · R make a rule · O open session · "
    "/ filter · Ctrl+Shift+A approve selected"
)
BANNER_STYLES = {
    "info": "background: #e8f5e9; color: #1b5e20; border: 1px solid #a5d6a7; padding: 6px;",
    "conflict": "background: #fff3e0; color: #e65100; border: 1px solid #ffb74d; padding: 6px;",
    "error": "background: #ffebee; color: #b71c1c; border: 1px solid #ef9a9a; padding: 6px;",
}


COLUMN_WIDTHS = {
    Column.TOOL: 150,
    Column.AGENT: 90,
    Column.LEVEL: 95,
    Column.STATUS: 65,
    Column.WAITED: 60,
    Column.EXPIRES: 65,
    Column.RESOLVED_BY: 120,
    Column.RESOLVED_AT: 90,
}


def _table(model: ApprovalFilter, columns: tuple[Column, ...]) -> QTableView:
    table = QTableView()
    table.setModel(model)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setSortingEnabled(True)
    table.setAlternatingRowColors(True)
    table.setWordWrap(False)
    table.verticalHeader().hide()
    table.verticalHeader().setDefaultSectionSize(24)
    header = table.horizontalHeader()
    header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    header.setStretchLastSection(True)
    header.setHighlightSections(False)
    for column in Column:
        table.setColumnHidden(column, column not in columns)
    for column, width in COLUMN_WIDTHS.items():
        table.setColumnWidth(column, width)
    return table


class InboxView(QWidget):
    """Holds the inbox's widgets; the InboxController connects them to the store and engine."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = ApprovalTableModel(parent=self)
        self.history_model = ApprovalTableModel(resolved_only=True, parent=self)
        self.pending = ApprovalFilter(self.model, ApprovalFilterSpec(), self)
        self.history = ApprovalFilter(
            self.history_model, ApprovalFilterSpec(statuses=RESOLVED), self
        )
        self.pending_table = _table(self.pending, PENDING_COLUMNS)
        self.pending_table.sortByColumn(Column.WAITED, Qt.SortOrder.DescendingOrder)
        self.history_table = _table(self.history, HISTORY_COLUMNS)
        self.history_table.sortByColumn(Column.RESOLVED_AT, Qt.SortOrder.DescendingOrder)
        self.lists = QTabWidget()
        self.lists.setDocumentMode(True)
        self.lists.addTab(self.pending_table, "Inbox")
        self.lists.addTab(self.history_table, "History")
        self.status_filter = QComboBox()
        for text, statuses in STATUSES:
            self.status_filter.addItem(text, statuses)
        self.status_filter.setToolTip("Status of the approvals in the Inbox list")
        self.agent_filter = QComboBox()
        self.agent_filter.addItem("Every agent", None)
        self.agent_filter.setToolTip("Only this agent's approvals")
        self.tool_filter = QLineEdit()
        self.tool_filter.setPlaceholderText("Tool, or a glob such as fs.*   ( / )")
        self.tool_filter.setClearButtonEnabled(True)
        self.tool_filter.setToolTip("Filter by tool: a glob (fs.*) or part of the name (/)")
        self.level_filter = QComboBox()
        self.level_filter.addItem("Any level", None)
        for level, text in LEVELS.items():
            self.level_filter.addItem(f"Escalated by {text}", level)
        self.age_filter = QComboBox()
        for text, newer, older in AGES:
            self.age_filter.addItem(text, (newer, older))
        self.banner = QLabel()
        self.banner.setWordWrap(True)
        self.banner.hide()
        self.needless = NeedlessStrip()
        self.summary = QLabel()
        self.approve_selected = QPushButton("Approve selected…")
        self.approve_selected.setToolTip("Approve every selected pending approval (Ctrl+Shift+A)")
        self.deny_selected = QPushButton("Deny selected…")
        self.deny_selected.setToolTip("Deny every selected pending approval (Ctrl+Shift+D)")
        self.detail = ApprovalDetailView()
        self.keys = QLabel(KEYS_HINT)
        quiet(self.keys)
        self.shortcuts = self._shortcuts()
        self._split = False
        self.status_filter.currentIndexChanged.connect(self._status_column_if_mixed)
        self._status_column_if_mixed()
        self._lay_out()

    def _status_column_if_mixed(self) -> None:
        """The Inbox list's Status column, only when the filter lets several statuses in (it
        would say the same on every row)."""
        statuses = self.status_filter.currentData()
        single = statuses is not None and len(statuses) == 1
        self.pending_table.setColumnHidden(Column.STATUS, single)

    def _shortcuts(self) -> dict[str, QShortcut]:
        """Triage keys, live while the keyboard is anywhere in the inbox. Text fields keep
        plain letters for typing (Qt gives them the key before any shortcut)."""
        keys = {
            "next": "J",
            "previous": "K",
            "approve": "A",
            "deny": "D",
            "edit": "E",
            "grant": "G",
            "open": "O",
            "rule": "R",
            "filter": "/",
            "approve_selected": "Ctrl+Shift+A",
            "deny_selected": "Ctrl+Shift+D",
        }
        shortcuts = {}
        for name, key in keys.items():
            shortcut = QShortcut(QKeySequence(key), self)
            shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            shortcuts[name] = shortcut
        return shortcuts

    def _lay_out(self) -> None:
        filters = QHBoxLayout()
        filters.addWidget(self.status_filter)
        filters.addWidget(self.agent_filter)
        filters.addWidget(self.tool_filter, 1)
        filters.addWidget(self.level_filter)
        filters.addWidget(self.age_filter)
        bulk = QHBoxLayout()
        bulk.addWidget(self.summary, 1)
        bulk.addWidget(self.approve_selected)
        bulk.addWidget(self.deny_selected)
        left = QWidget()
        column = QVBoxLayout(left)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.lists, 1)
        column.addLayout(bulk)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(left)
        self.splitter.addWidget(self.detail)
        self.splitter.setStretchFactor(0, 0)  # a narrower window narrows the detail, not the
        self.splitter.setStretchFactor(1, 1)  # list whose columns were fitted
        self.splitter.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.addLayout(filters)
        layout.addWidget(self.banner)
        layout.addWidget(self.needless)
        layout.addWidget(self.splitter, 1)
        layout.addWidget(self.keys)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self._split:  # the first time only: the person's own split is kept after
            self._split = True
            self._fit_the_list()

    def _fit_the_list(self) -> None:
        """Give the Inbox list the width its columns need (Expires in, the last, is the one a
        person looks for), up to half the width; the detail takes the rest."""
        table = self.pending_table
        needed = (
            sum(COLUMN_WIDTHS[column] for column in Column if not table.isColumnHidden(column))
            + table.verticalScrollBar().sizeHint().width()
            + 2 * table.frameWidth()
        )
        total = sum(self.splitter.sizes())
        listed = min(needed, total // 2)
        self.splitter.setSizes([listed, total - listed])

    # -- what the controller asks of the view ---------------------------------------------------

    def current_table(self) -> QTableView:
        return self.history_table if self.lists.currentIndex() == 1 else self.pending_table

    def current_filter(self) -> ApprovalFilter:
        return self.history if self.lists.currentIndex() == 1 else self.pending

    def filter_spec(self, history: bool) -> ApprovalFilterSpec:
        """The spec the filter widgets describe, for the Inbox list or the History list."""
        newer, older = self.age_filter.currentData()
        return ApprovalFilterSpec(
            statuses=RESOLVED if history else self.status_filter.currentData(),
            agent=self.agent_filter.currentData(),
            tool_glob=self.tool_filter.text(),
            level=self.level_filter.currentData(),
            newer_than=newer,
            older_than=older,
        )

    def add_agents(self, agents: set[str]) -> None:
        known = {self.agent_filter.itemText(i) for i in range(1, self.agent_filter.count())}
        for agent in sorted(agents - known):
            self.agent_filter.addItem(agent, agent)

    def show_banner(self, text: str, kind: str = "conflict") -> None:
        self.banner.setStyleSheet(BANNER_STYLES[kind])
        self.banner.setText(text)
        self.banner.show()
