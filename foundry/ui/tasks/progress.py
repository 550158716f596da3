"""The models of a task's view, fed by its events: phases and decisions, criteria, agents."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QStandardItem, QStandardItemModel

from foundry.orchestration.events import (
    AgentAsked,
    AgentConsulted,
    CriterionScored,
    PhaseFinished,
    PhaseStarted,
    RescueDecided,
    RetryDecided,
    TaskFinished,
    TaskResumed,
    TaskStarted,
    WorkerFinished,
)
from foundry.session.events import Event

SESSION_ROLE = Qt.ItemDataRole.UserRole + 1
LEVEL_COLOURS = {"pass": "#2e7d32", "uncertain": "#ef6c00", "fail": "#c62828"}
RUNNING, DONE, FAILED, NOTE = "◌", "✓", "✗", "→"


def _item(text: str, tooltip: str = "") -> QStandardItem:
    item = QStandardItem(text)
    item.setEditable(False)
    if tooltip:
        item.setToolTip(tooltip)
    return item


def _seconds(seconds: float) -> str:
    return f"{seconds:.1f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


@dataclass
class TaskSummary:
    name: str = ""
    status: str = "starting"
    iteration: int = 0
    supervisor_calls: int = 0
    messages: int = 0
    output: str = ""
    reason: str = ""
    workspace: str = ""
    started: datetime | None = None
    last: datetime | None = None


class TaskProgress:
    """Everything the view shows, changed only by `apply(event)`, so that a finished task's
    view is its events replayed."""

    def __init__(self) -> None:
        self.summary = TaskSummary()
        self.phases = QStandardItemModel(0, 4)
        self.phases.setHorizontalHeaderLabels(["Phase", "Iteration", "Time", "Result"])
        self.criteria = QStandardItemModel(0, 4)
        self.criteria.setHorizontalHeaderLabels(["Criterion", "Score", "Level", "By"])
        self.agents = QStandardItemModel(0, 5)
        self.agents.setHorizontalHeaderLabels(
            ["Role", "Agent", "Messages", "Tokens in/out", "Time"]
        )
        self._open: dict[tuple[str, int, int | None], tuple[int, datetime]] = {}
        self._criterion_rows: dict[str, int] = {}
        self._agent_rows: dict[str, int] = {}
        self._agent_totals: dict[str, AgentTotals] = {}

    def apply(self, event: Event) -> None:
        body = event.body
        summary = self.summary
        summary.started = summary.started or event.time
        summary.last = event.time
        if isinstance(body, TaskStarted):
            summary.name, summary.workspace, summary.status = body.name, body.workspace, "running"
        elif isinstance(body, TaskResumed):
            summary.status = "running"
            self._note(f"resumed at step {body.from_step}", "")
        elif isinstance(body, PhaseStarted):
            self._phase_started(body, event.time)
        elif isinstance(body, PhaseFinished):
            self._phase_finished(body, event.time)
        elif isinstance(body, CriterionScored):
            self._score(body)
        elif isinstance(body, AgentAsked):
            self._agent_row(body.session_id, body.role, body.agent)
        elif isinstance(body, AgentConsulted):
            self._consulted(body)
        elif isinstance(body, RetryDecided):
            self._note(f"next: {body.approach.replace('_', ' ')}", body.reason)
        elif isinstance(body, RescueDecided):
            self._note(f"rescue: {body.action}", body.analysis)
        elif isinstance(body, WorkerFinished):
            took = _seconds(body.finished_s - body.started_s)
            self._note(f"worker {body.worker} answered in {took}", body.output[:300])
        elif isinstance(body, TaskFinished):
            summary.status, summary.output, summary.reason = body.status, body.output, body.reason

    def _phase_started(self, body: PhaseStarted, time: datetime) -> None:
        name = body.phase.replace("_", " ")
        label = f"{name}: {body.label}" if body.label else name
        row = [_item(f"{RUNNING} {label}"), _item(str(body.iteration) if body.iteration else "")]
        row += [_item(""), _item("…")]
        self.phases.appendRow(row)
        self._open[(body.phase, body.iteration, body.step)] = (self.phases.rowCount() - 1, time)
        self.summary.iteration = max(self.summary.iteration, body.iteration)

    def _phase_finished(self, body: PhaseFinished, time: datetime) -> None:
        opened = self._open.pop((body.phase, body.iteration, body.step), None)
        if opened is None:
            return
        row, started = opened
        mark = DONE if body.ok else FAILED
        name = self.phases.item(row, 0).text()[2:]
        self.phases.item(row, 0).setText(f"{mark} {name}")
        self.phases.item(row, 2).setText(_seconds((time - started).total_seconds()))
        self.phases.item(row, 3).setText(body.summary)
        self.phases.item(row, 3).setToolTip(body.summary)
        if not body.ok:
            self.phases.item(row, 0).setForeground(QBrush(QColor(LEVEL_COLOURS["uncertain"])))

    def _note(self, text: str, detail: str) -> None:
        row = [_item(f"   {NOTE} {text}", detail), _item(""), _item(""), _item(detail, detail)]
        for item in row:
            item.setForeground(QBrush(QColor("#616161")))
        self.phases.appendRow(row)

    def _score(self, body: CriterionScored) -> None:
        evidence = "\n".join(body.evidence)
        cells = [
            body.criterion,
            f"{body.score:.0f}",
            body.level,
            body.by + (" (cached)" if body.cached else ""),
        ]
        row = self._criterion_rows.get(body.criterion)
        if row is None:
            self.criteria.appendRow([_item(text) for text in cells])
            row = self._criterion_rows[body.criterion] = self.criteria.rowCount() - 1
        for column, text in enumerate(cells):
            item = self.criteria.item(row, column)
            item.setText(text)
            item.setToolTip(evidence)
        self.criteria.item(row, 2).setForeground(QBrush(QColor(LEVEL_COLOURS[body.level])))

    def _agent_row(self, session_id: str, role: str, agent: str) -> int:
        """The agent's row, added the first time it is asked something."""
        if session_id not in self._agent_rows:
            items = [_item(role), _item(agent)] + [_item("") for _ in range(3)]
            items[0].setData(session_id, SESSION_ROLE)
            items[0].setToolTip("Double-click to open this agent's conversation")
            self.agents.appendRow(items)
            self._agent_rows[session_id] = self.agents.rowCount() - 1
            self._agent_totals[session_id] = AgentTotals()
        return self._agent_rows[session_id]

    def _consulted(self, body: AgentConsulted) -> None:
        self.summary.messages += 1
        if body.role == "supervisor":
            self.summary.supervisor_calls += 1
        row = self._agent_row(body.session_id, body.role, body.agent)
        totals = self._agent_totals[body.session_id]
        totals.add(body)
        self.agents.item(row, 2).setText(str(totals.messages))
        self.agents.item(row, 3).setText(f"{totals.tokens_in:,} / {totals.tokens_out:,}")
        self.agents.item(row, 4).setText(_seconds(totals.seconds))


@dataclass
class AgentTotals:
    messages: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    seconds: float = 0.0

    def add(self, body: AgentConsulted) -> None:
        self.messages += 1
        self.tokens_in += body.input_tokens
        self.tokens_out += body.output_tokens
        self.seconds += body.seconds
