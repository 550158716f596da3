"""What metric events add to the binned figures the dashboards draw (no database: see stored.py)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from foundry.metrics.loader import METRIC_KINDS, TASK_KINDS
from foundry.metrics.task import task_metrics
from foundry.metrics.terms import (
    criterion_outcome,
    decider_of_call,
    message_outcome,
    question_outcome,
    resolution_level,
    verdict_agreement,
    waited_for_a_person,
)
from foundry.orchestration.events import (
    AgentConsulted,
    CriterionScored,
    TaskStarted,
    WorkerFinished,
)
from foundry.session.events import (
    ApprovalRequested,
    ApprovalResolved,
    Event,
    ModelCallFinished,
    SessionStarted,
    ShadowVerdictGiven,
    SupervisorDecided,
    ToolCallDecided,
)

RESOLUTIONS: tuple[int, ...] = (60, 3600, 86400)  # a minute, an hour, a day
EVERY_AGENT = ""  # the agent key of the figures of all agents together
HISTOGRAM_BINS = 10  # of confidence scores, 10 % wide
_TASK_KIND_NAMES = frozenset(TASK_KINDS)
_METRIC_KIND_NAMES = frozenset(METRIC_KINDS)

CONFIDENCE = "confidence"  # a task criterion's: label: the score's level; value: the score
SCORE_BIN = "score_bin"  # label: the histogram bin (0-9); value: the score
# a chat's supervisors' (message supervisors, the L1 tool supervisor), in percent
DECIDER_CONFIDENCE = "decider_confidence"  # label: the supervisor; value: the confidence
DECIDER_SCORE_BIN = "decider_score_bin"  # label: "bin|supervisor"; value: the confidence
INPUT_TOKENS = "input_tokens"  # label: the model, and so on for the three below
OUTPUT_TOKENS = "output_tokens"
CALL_SECONDS = "call_s"
FIRST_TOKEN_SECONDS = "first_token_s"
# every supervisor decision: label "level/outcome" (terms.DECISION_LEVELS, OUTCOMES); value: 1
RESOLUTION = "resolution"
HUMAN_WAIT = "human_wait"  # label: the approval's status; value: seconds waited
# every question put to a person: label: how it was answered (terms.QUESTION_OUTCOMES); value:
# seconds waited
QUESTIONS = "questions"
# the L1 supervisor's shadow verdicts against a person's decision: label: terms.AGREEMENTS;
# value: 1
AGREEMENT = "shadow_agreement"
# A task counts at its start time and changes as it runs: its old figures are taken out and
# its new ones put in (count and sum only; a bin whose tasks moved on keeps a count of 0).
TASK_ITERATIONS = "task_iterations"  # label: the task's status; value: its iterations
PHASE_SECONDS = "phase_s"  # label: the phase; value: the task's exclusive time in it
_CHANGING_SERIES = frozenset({TASK_ITERATIONS, PHASE_SECONDS})

BinKey = tuple[str, int, str, int, str]  # series, resolution, agent, bucket, label


@dataclass(slots=True)
class Tally:
    """Count, sum, least and greatest of the values put in."""

    count: int = 0
    total: float = 0.0
    low: float = math.inf
    high: float = -math.inf

    def add(self, value: float) -> None:
        self.count += 1
        self.total += value
        self.low = min(self.low, value)
        self.high = max(self.high, value)

    def shift(self, value: float, sign: int) -> None:
        """Put in (sign 1) or take out (-1) a value of a series that keeps count and sum only."""
        self.count += sign
        self.total += sign * value
        self.low, self.high = min(self.low, 0.0), max(self.high, 0.0)

    def merge(self, other: Tally) -> None:
        self.count += other.count
        self.total += other.total
        self.low = min(self.low, other.low)
        self.high = max(self.high, other.high)


@dataclass
class SessionLink:
    """A chat's agent and the task that consulted it."""

    agent: str = ""
    task_id: str = ""


@dataclass(frozen=True)
class TaskRow:
    """A task's figures as its events stand; `started_at` is None until its task_started."""

    task_id: str
    name: str
    started_at: datetime | None
    status: str
    iterations: int
    phase_seconds: dict[str, float]
    agents: tuple[str, ...]


def histogram_bin(score: float) -> int | None:
    """The bin of a score in bins of 10 % (100 goes in the last, as numpy.histogram puts it)."""
    if not 0.0 <= score <= 100.0:
        return None
    return min(int(score // (100 / HISTOGRAM_BINS)), HISTOGRAM_BINS - 1)


def task_row(task_id: str, log: Sequence[Event], agents: Iterable[str]) -> TaskRow:
    """The row of a task from its own events (in order)."""
    agents = tuple(sorted(agents))
    if not any(isinstance(event.body, TaskStarted) for event in log):
        return TaskRow(task_id, "", None, "running", 0, {}, agents)
    metrics = task_metrics(log, task_id)
    return TaskRow(
        task_id=task_id,
        name=metrics.name,
        started_at=metrics.started_at,
        status=metrics.status,
        iterations=metrics.iterations,
        phase_seconds={entry.phase: entry.seconds for entry in metrics.phases},
        agents=agents,
    )


@dataclass
class Folding:
    """What a run of events adds to the aggregates, given what was known before them.

    `sessions` and `tasks` hold what is known of the chats and tasks the events name (missing
    ones are new); `task_log` gives a task's own events as stored, these included. The figures
    of a task's confidence scores count for every agent the task ever consulted, as in
    series.py: an agent consulted after some scores gets those scores too.
    """

    sessions: dict[str, SessionLink]
    tasks: dict[str, TaskRow]
    task_log: Callable[[str], Sequence[Event]]
    bins: dict[BinKey, Tally] = field(default_factory=dict)
    changed_sessions: set[str] = field(default_factory=set)
    touched_tasks: set[str] = field(default_factory=set)
    events: int = 0
    started: int = 0  # tasks whose start these events brought
    task_agents: dict[str, set[str]] = field(init=False)

    def __post_init__(self) -> None:
        self.task_agents = {key: set(row.agents) for key, row in self.tasks.items()}

    def fold(self, events: Iterable[Event]) -> None:
        for event in events:
            self._fold(event)

    def finish(self) -> list[TaskRow]:
        """The rows of the tasks these events touched, as their events now stand, with their
        change added to the bins."""
        rows = []
        for task_id in sorted(self.touched_tasks):
            old = self.tasks.get(task_id)
            row = task_row(task_id, self.task_log(task_id), self.task_agents.get(task_id, ()))
            self._count_task(old, remove=True)
            self._count_task(row, remove=False)
            if row.started_at is not None and (old is None or old.started_at is None):
                self.started += 1
            rows.append(row)
        return rows

    def _count_task(self, row: TaskRow | None, remove: bool) -> None:
        if row is None or row.started_at is None:
            return
        for agent in (EVERY_AGENT, *row.agents):
            self._add(TASK_ITERATIONS, row.started_at, agent, row.status, row.iterations, remove)
            for phase, seconds in row.phase_seconds.items():
                self._add(PHASE_SECONDS, row.started_at, agent, phase, seconds, remove)

    def _fold(self, event: Event) -> None:
        self.events += 1
        body = event.body
        if isinstance(body, SessionStarted):
            self._session(event.session_id).agent = body.agent_name
        elif isinstance(body, AgentConsulted):
            self._link(event, body.session_id, body.agent)
        elif isinstance(body, WorkerFinished):
            if body.session_id:
                self._link(event, body.session_id, body.worker)
        elif isinstance(body, CriterionScored):
            agents = self.task_agents.setdefault(event.session_id, set())
            self._scored(event, body, (EVERY_AGENT, *agents))
        else:
            self._session_figures(event)
        if body.kind in _TASK_KIND_NAMES:
            self.touched_tasks.add(event.session_id)

    def _session(self, session_id: str) -> SessionLink:
        self.changed_sessions.add(session_id)
        return self.sessions.setdefault(session_id, SessionLink())

    def _link(self, event: Event, session_id: str, agent: str) -> None:
        task_id = event.session_id
        agents = self.task_agents.setdefault(task_id, set())
        if agent not in agents:
            agents.add(agent)
            for earlier in self.task_log(task_id):
                if isinstance(earlier.body, CriterionScored) and earlier.seq < event.seq:
                    self._scored(earlier, earlier.body, (agent,))
        link = self._session(session_id)
        link.task_id = task_id
        link.agent = link.agent or agent

    def _scored(self, event: Event, body: CriterionScored, agents: Iterable[str]) -> None:
        bin_index = histogram_bin(body.score)
        decision = f"task/{criterion_outcome(body.level)}"
        for agent in agents:
            self._add(CONFIDENCE, event.time, agent, body.level, body.score)
            if bin_index is not None:
                self._add(SCORE_BIN, event.time, agent, str(bin_index), body.score)
            self._add(RESOLUTION, event.time, agent, decision, 1.0)

    def _session_figures(self, event: Event) -> None:
        body = event.body
        link = self.sessions.get(event.session_id)
        agents = (EVERY_AGENT, link.agent) if link and link.agent else (EVERY_AGENT,)
        for agent in agents:
            if isinstance(body, ModelCallFinished):
                self._add(INPUT_TOKENS, event.time, agent, body.model, body.input_tokens)
                self._add(OUTPUT_TOKENS, event.time, agent, body.model, body.output_tokens)
                self._add(CALL_SECONDS, event.time, agent, body.model, body.total_s)
                if body.first_token_s is not None:
                    self._add(
                        FIRST_TOKEN_SECONDS, event.time, agent, body.model, body.first_token_s
                    )
            elif isinstance(body, ToolCallDecided):
                label = f"{resolution_level(body.by)}/{'allowed' if body.allowed else 'denied'}"
                self._add(RESOLUTION, event.time, agent, label, 1.0)
                decider = decider_of_call(body.by)
                if decider is not None and body.confidence is not None:
                    self._confidence(event, agent, decider, body.confidence)
            elif isinstance(body, SupervisorDecided):
                label = f"message/{message_outcome(body.action)}"
                self._add(RESOLUTION, event.time, agent, label, 1.0)
                if body.confidence is not None and not body.fallback:  # a fallback's is no one's
                    self._confidence(event, agent, body.supervisor, body.confidence)
            elif isinstance(body, ApprovalRequested):
                if body.level == "L1":  # the L1 supervisor sent the call on to a person
                    self._add(RESOLUTION, event.time, agent, "supervisor/escalated", 1.0)
            elif isinstance(body, ApprovalResolved) and waited_for_a_person(body.resolved_by):
                self._answered(event, body, agent)
            elif isinstance(body, ShadowVerdictGiven):
                agreement = verdict_agreement(body.decision, body.person, body.edited)
                if agreement is not None:
                    self._add(AGREEMENT, event.time, agent, agreement, 1.0)

    def _answered(self, event: Event, body: ApprovalResolved, agent: str) -> None:
        """A question a person answered (or let time out), and the shadow verdict it carries."""
        self._add(HUMAN_WAIT, event.time, agent, body.status, body.waited_s)
        outcome = question_outcome(body.status, body.edited, body.flagged)
        self._add(QUESTIONS, event.time, agent, outcome, body.waited_s)
        agreement = verdict_agreement(body.shadow, body.status, body.edited)
        if agreement is not None:
            self._add(AGREEMENT, event.time, agent, agreement, 1.0)

    def _confidence(self, event: Event, agent: str, decider: str, confidence: float) -> None:
        """A chat's supervisor's confidence (0-1), counted in percent."""
        percent = confidence * 100
        self._add(DECIDER_CONFIDENCE, event.time, agent, decider, percent)
        bin_index = histogram_bin(percent)
        if bin_index is not None:
            self._add(DECIDER_SCORE_BIN, event.time, agent, f"{bin_index}|{decider}", percent)

    def _add(
        self,
        series: str,
        time: datetime,
        agent: str,
        label: str,
        value: float,
        remove: bool = False,
    ) -> None:
        moment = time.timestamp()
        for resolution in RESOLUTIONS:
            key = (series, resolution, agent, int(moment // resolution) * resolution, label)
            tally = self.bins.get(key)
            if tally is None:
                tally = self.bins[key] = Tally()
            if series in _CHANGING_SERIES:
                tally.shift(float(value), -1 if remove else 1)
            else:
                tally.add(float(value))


@dataclass
class MemoryAggregates:
    """The aggregates of a list of events, kept in memory (a task's log, tests)."""

    events: list[Event] = field(default_factory=list)
    sessions: dict[str, SessionLink] = field(default_factory=dict)
    tallies: dict[BinKey, Tally] = field(default_factory=dict)
    rows: dict[str, TaskRow] = field(default_factory=dict)

    def fold(self, events: Sequence[Event]) -> None:
        events = [event for event in events if event.kind in _METRIC_KIND_NAMES]
        self.events.extend(events)
        folding = Folding(self.sessions, self.rows, self._task_log)
        folding.fold(events)
        for row in folding.finish():
            self.rows[row.task_id] = row
        for key, tally in folding.bins.items():
            self.tallies.setdefault(key, Tally()).merge(tally)

    def _task_log(self, task_id: str) -> list[Event]:
        own = [e for e in self.events if e.session_id == task_id and e.kind in _TASK_KIND_NAMES]
        return sorted(own, key=lambda event: event.seq)

    # -- read as figures.AggregateSource --------------------------------------------------------

    def event_count(self) -> int:
        return len(self.events)

    def buckets(
        self, resolution: int, agent: str, first: int | None = None, last: int | None = None
    ) -> tuple[int, int] | None:
        found = [bucket for _, bucket, _, _ in self._bins(resolution, agent, first, last)]
        return (min(found), max(found)) if found else None

    def bins(
        self, resolution: int, agent: str, first: int | None, last: int | None, width: int
    ) -> list[tuple[str, int, str, Tally]]:
        summed: dict[tuple[str, int, str], Tally] = {}
        for series, bucket, label, tally in self._bins(resolution, agent, first, last):
            summed.setdefault((series, bucket // width * width, label), Tally()).merge(tally)
        return [(series, start, label, tally) for (series, start, label), tally in summed.items()]

    def _bins(
        self, resolution: int, agent: str, first: int | None, last: int | None
    ) -> list[tuple[str, int, str, Tally]]:
        return [
            (series, bucket, label, tally)
            for (series, at, who, bucket, label), tally in self.tallies.items()
            if at == resolution
            and who == agent
            and (first is None or bucket >= first)
            and (last is None or bucket <= last)
        ]

    def recorded(self) -> frozenset[str]:
        return frozenset(
            series
            for (series, resolution, agent, _, _), tally in self.tallies.items()
            if resolution == RESOLUTIONS[-1] and agent == EVERY_AGENT and tally.count > 0
        )

    def agents(self) -> set[str]:
        named = {link.agent for link in self.sessions.values()}
        return (named | {agent for row in self.rows.values() for agent in row.agents}) - {""}
