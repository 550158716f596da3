"""The view of one task run: its phases as they happen, its criteria, its agents, its answer."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QTableView,
    QTextBrowser,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from foundry.ui.tasks.progress import LEVEL_COLOURS, SESSION_ROLE, TaskProgress
from foundry.ui.theme import themed_colour

STATUS_COLOURS = {
    **LEVEL_COLOURS,
    "succeeded": "#2e7d32",
    "failed": "#c62828",
    "running": "#1565c0",
}


def _table(title: str) -> tuple[QWidget, QVBoxLayout, QTableView]:
    box = QWidget()
    layout = QVBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    heading = QLabel(f"<b>{title}</b>")
    table = QTableView()
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.verticalHeader().hide()
    table.setAlternatingRowColors(True)
    layout.addWidget(heading)
    layout.addWidget(table)
    return box, layout, table


class TaskView(QWidget):
    stop_requested = Signal()
    run_again_requested = Signal()
    open_workspace_requested = Signal()
    open_session_requested = Signal(str)

    def __init__(self, progress: TaskProgress, goal: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.progress = progress
        self.title = QLabel()
        self.status = QLabel()
        self.goal = QLabel(goal)
        self.goal.setWordWrap(True)
        self.goal.setStyleSheet("color: #424242")
        self.stop = QPushButton("Stop")
        self.stop.setToolTip("Stop the task; it can resume from its last finished phase (Esc)")
        self.stop.setShortcut(QKeySequence(Qt.Key.Key_Escape))
        self.run_again = QPushButton("Run Again")
        self.run_again.setToolTip("Run the task file again: a new run")
        self.workspace = QPushButton("Open Workspace")
        self.stop.clicked.connect(self.stop_requested)
        self.run_again.clicked.connect(self.run_again_requested)
        self.workspace.clicked.connect(self.open_workspace_requested)
        self.phases = QTreeView()
        self.phases.setModel(progress.phases)
        self.phases.setRootIsDecorated(False)
        self.phases.setAlternatingRowColors(True)
        self.phases.setUniformRowHeights(True)
        self.phases.header().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        # follow new phases, but leave the user's scroll alone between them
        progress.phases.rowsInserted.connect(lambda *_: self.phases.scrollToBottom())
        criteria_box, criteria_layout, self.criteria = _table("Acceptance criteria")
        self.criteria.setModel(progress.criteria)
        self.criteria.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.evidence = QTextBrowser()
        self.evidence.setPlaceholderText("Select a criterion to see its evidence.")
        self.evidence.setMaximumHeight(84)
        criteria_layout.addWidget(self.evidence)
        self.criteria.selectionModel().currentRowChanged.connect(self._show_evidence)
        agents_box, _, self.agents = _table("Agents (double-click for the conversation)")
        self.agents.setModel(progress.agents)
        header = self.agents.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.agents.doubleClicked.connect(self._open_session)
        self.output = QTextBrowser()
        self._shown_output = ""  # the markdown as given: toPlainText() never equals it
        self.output.setPlaceholderText("The task's answer appears here when it ends.")
        self._layout(criteria_box, agents_box)
        self.refresh()

    def _layout(self, criteria_box: QWidget, agents_box: QWidget) -> None:
        header = QHBoxLayout()
        header.addWidget(self.title)
        header.addWidget(self.status)
        header.addStretch(1)
        for button in (self.stop, self.run_again, self.workspace):
            header.addWidget(button)
        phases_box = QWidget()
        phases_layout = QVBoxLayout(phases_box)
        phases_layout.setContentsMargins(0, 0, 0, 0)
        phases_layout.addWidget(QLabel("<b>Phases and decisions</b>"))
        phases_layout.addWidget(self.phases)
        right = QSplitter(Qt.Orientation.Vertical)
        output_box = QWidget()
        output_layout = QVBoxLayout(output_box)
        output_layout.setContentsMargins(0, 0, 0, 0)
        output_layout.addWidget(QLabel("<b>Answer</b>"))
        output_layout.addWidget(self.output)
        for part in (criteria_box, agents_box, output_box):
            right.addWidget(part)
        body = QSplitter(Qt.Orientation.Horizontal)
        body.addWidget(phases_box)
        body.addWidget(right)
        body.setSizes([560, 520])
        layout = QVBoxLayout(self)
        layout.addLayout(header)
        layout.addWidget(self.goal)
        layout.addWidget(body, 1)

    def refresh(self) -> None:
        summary = self.progress.summary
        colour = themed_colour(STATUS_COLOURS.get(summary.status, "#616161"))
        self.title.setText(f"<h3 style='margin:0'>{summary.name or 'Task'}</h3>")
        elapsed = ""
        if summary.started and summary.last:
            elapsed = f" · {(summary.last - summary.started).total_seconds():.0f} s"
        self.status.setText(
            f"<span style='color:{colour}'><b>{summary.status}</b></span>"
            f" · iteration {summary.iteration} · {summary.supervisor_calls} supervisor call(s)"
            f" · {summary.messages} message(s){elapsed}"
        )
        running = summary.status in ("running", "starting")
        self.stop.setEnabled(running)
        self.run_again.setEnabled(not running)
        self.workspace.setEnabled(bool(summary.workspace))
        if summary.output != self._shown_output:
            self.output.setMarkdown(summary.output)
            self._shown_output = summary.output
        if summary.reason:
            self.output.setToolTip(summary.reason)

    def _show_evidence(self, index: QModelIndex) -> None:
        item = self.progress.criteria.item(index.row(), 0)
        if item is not None:
            lines = item.toolTip().splitlines()
            self.evidence.setMarkdown("\n".join(f"- {line}" for line in lines))

    def _open_session(self, index: QModelIndex) -> None:
        session_id = self.progress.agents.item(index.row(), 0).data(SESSION_ROLE)
        if session_id:
            self.open_session_requested.emit(session_id)
