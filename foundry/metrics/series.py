"""The series the dashboards plot, each a list of typed points computed from the event log."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict

from foundry.metrics.task import TaskMetrics, task_metrics
from foundry.metrics.terms import (
    L1_SUPERVISOR,
    MetricsFilter,
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
    EventBody,
    ModelCallFinished,
    SessionStarted,
    ShadowVerdictGiven,
    SupervisorDecided,
    ToolCallDecided,
)

Body = TypeVar("Body", bound=EventBody)
Point = TypeVar("Point", bound="SeriesPoint")


class SeriesPoint(BaseModel):
    model_config = ConfigDict(frozen=True)

    time: datetime
    task_id: str = ""  # empty for a chat that belongs to no task
    task: str = ""


class ConfidencePoint(SeriesPoint):
    criterion: str
    iteration: int
    score: float
    level: str
    by: str


class IterationsPoint(SeriesPoint):
    """A task (at its start time) and how many iterations of agent execution it ran."""

    iterations: int
    status: str


class PhaseSharePoint(SeriesPoint):
    phase: str
    seconds: float
    share: float


class ModelCallPoint(SeriesPoint):
    session_id: str
    agent: str
    model: str
    input_tokens: int
    output_tokens: int
    first_token_s: float | None
    total_s: float


class ResolutionPoint(SeriesPoint):
    """A tool call's decision and the level that took it."""

    session_id: str
    agent: str
    tool: str
    level: str  # one of LEVELS
    allowed: bool
    by: str


class DecisionPoint(SeriesPoint):
    """A decision of one of a chat's supervisors: on a tool call (at any level: policy,
    grant, the L1 supervisor, a person) or a message supervisor's on a message."""

    session_id: str
    agent: str
    supervisor: str  # the decider: its `by`, the message supervisor's name, L1_SUPERVISOR
    level: str  # one of DECISION_LEVELS
    outcome: str  # one of OUTCOMES
    confidence: float | None  # in percent, when the decider states one


class HumanWaitPoint(SeriesPoint):
    session_id: str
    agent: str
    approval_id: str
    status: str
    resolved_by: str
    waited_s: float


class QuestionPoint(SeriesPoint):
    """A question put to a person (an approval that waited for one) and how it was answered."""

    session_id: str
    agent: str
    approval_id: str
    tool: str
    outcome: str  # one of QUESTION_OUTCOMES
    waited_s: float


class AgreementPoint(SeriesPoint):
    """The L1 supervisor's shadow verdict on a call beside the person's decision on it."""

    session_id: str
    agent: str
    approval_id: str
    tool: str
    shadow: str  # approve, deny, escalate
    person: str  # the approval's status: approved, denied
    edited: bool
    agreement: str  # one of AGREEMENTS


class TaskChoice(BaseModel):
    model_config = ConfigDict(frozen=True)

    task_id: str
    name: str
    started_at: datetime


class DashboardSeries(BaseModel):
    """Every series of the dashboards, filtered, and what the filters can choose from."""

    model_config = ConfigDict(frozen=True)

    confidence: tuple[ConfidencePoint, ...] = ()
    iterations: tuple[IterationsPoint, ...] = ()
    phase_shares: tuple[PhaseSharePoint, ...] = ()
    model_calls: tuple[ModelCallPoint, ...] = ()
    resolutions: tuple[ResolutionPoint, ...] = ()
    decisions: tuple[DecisionPoint, ...] = ()  # of chats (a task's criteria: `confidence`)
    human_waits: tuple[HumanWaitPoint, ...] = ()
    questions: tuple[QuestionPoint, ...] = ()
    agreements: tuple[AgreementPoint, ...] = ()
    agents: tuple[str, ...] = ()  # every agent in the log, unfiltered
    tasks: tuple[TaskChoice, ...] = ()  # every task in the log, unfiltered


@dataclass
class _Index:
    """Who is who in a mixed log: tasks, their agents, and which chat belongs to which task."""

    task_events: dict[str, list[Event]] = field(default_factory=lambda: defaultdict(list))
    task_names: dict[str, str] = field(default_factory=dict)
    task_starts: dict[str, datetime] = field(default_factory=dict)
    task_agents: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    session_agent: dict[str, str] = field(default_factory=dict)
    session_task: dict[str, str] = field(default_factory=dict)

    def add(self, event: Event) -> None:
        body = event.body
        if isinstance(body, TaskStarted):
            self.task_names[event.session_id] = body.name
            self.task_starts[event.session_id] = event.time
        elif isinstance(body, AgentConsulted):
            self._link(event.session_id, body.session_id, body.agent)
        elif isinstance(body, WorkerFinished) and body.session_id:
            self._link(event.session_id, body.session_id, body.worker)
        elif isinstance(body, SessionStarted):
            self.session_agent[event.session_id] = body.agent_name

    def _link(self, task_id: str, session_id: str, agent: str) -> None:
        self.task_agents[task_id].add(agent)
        self.session_task[session_id] = task_id
        self.session_agent.setdefault(session_id, agent)

    def agents_of(self, task_id: str) -> set[str]:
        return self.task_agents.get(task_id, set())

    def session_fields(self, event: Event) -> dict[str, str]:
        task_id = self.session_task.get(event.session_id, "")
        return {
            "session_id": event.session_id,
            "agent": self.session_agent.get(event.session_id, ""),
            "task_id": task_id,
            "task": self.task_names.get(task_id, ""),
        }


def _index(events: Sequence[Event]) -> _Index:
    index = _Index()
    for event in events:
        index.add(event)
    for event in events:
        if event.session_id in index.task_names:
            index.task_events[event.session_id].append(event)
    return index


def dashboard_series(
    events: Sequence[Event], where: MetricsFilter | None = None
) -> DashboardSeries:
    """Every series of the dashboards from a log holding tasks' and chats' events."""
    where = where or MetricsFilter()
    index = _index(events)
    tasks = _admitted_tasks(index, where)
    # made without validating again the points validated one by one: for 100,000 events that
    # is one call holding the GIL (and so the GUI thread) for most of a second
    return DashboardSeries.model_construct(
        confidence=tuple(_confidence(events, index, where)),
        iterations=tuple(_iterations(tasks)),
        phase_shares=tuple(_phase_shares(tasks)),
        model_calls=tuple(_model_calls(events, index, where)),
        resolutions=tuple(_resolutions(events, index, where)),
        decisions=tuple(_decisions(events, index, where)),
        human_waits=tuple(_human_waits(events, index, where)),
        questions=tuple(_questions(events, index, where)),
        agreements=tuple(_agreements(events, index, where)),
        agents=tuple(sorted({*index.session_agent.values(), *_union(index.task_agents.values())})),
        tasks=tuple(
            TaskChoice(task_id=task_id, name=name, started_at=index.task_starts[task_id])
            for task_id, name in sorted(index.task_names.items(), key=lambda item: item[1])
        ),
    )


def confidence_series(
    events: Sequence[Event], where: MetricsFilter | None = None
) -> list[ConfidencePoint]:
    """Each criterion's confidence score, when it was scored."""
    return _confidence(events, _index(events), where or MetricsFilter())


def iterations_series(
    events: Sequence[Event], where: MetricsFilter | None = None
) -> list[IterationsPoint]:
    return _iterations(_admitted_tasks(_index(events), where or MetricsFilter()))


def phase_share_series(
    events: Sequence[Event], where: MetricsFilter | None = None
) -> list[PhaseSharePoint]:
    """Each task's exclusive time per phase and its share of the task's active time."""
    return _phase_shares(_admitted_tasks(_index(events), where or MetricsFilter()))


def model_call_series(
    events: Sequence[Event], where: MetricsFilter | None = None
) -> list[ModelCallPoint]:
    """Tokens and latency of each model call, of tasks' chats and of ordinary chats."""
    return _model_calls(events, _index(events), where or MetricsFilter())


def resolution_series(
    events: Sequence[Event], where: MetricsFilter | None = None
) -> list[ResolutionPoint]:
    """Each tool call's decision and the level (policy, grant, supervisor, human) that took it."""
    return _resolutions(events, _index(events), where or MetricsFilter())


def decision_series(
    events: Sequence[Event], where: MetricsFilter | None = None
) -> list[DecisionPoint]:
    """Each decision of a chat's supervisors: tool calls at every level, messages."""
    return _decisions(events, _index(events), where or MetricsFilter())


def human_wait_series(
    events: Sequence[Event], where: MetricsFilter | None = None
) -> list[HumanWaitPoint]:
    """How long each approval waited for its resolution."""
    return _human_waits(events, _index(events), where or MetricsFilter())


def question_series(
    events: Sequence[Event], where: MetricsFilter | None = None
) -> list[QuestionPoint]:
    """Each question put to a person and how the person answered it."""
    return _questions(events, _index(events), where or MetricsFilter())


def agreement_series(
    events: Sequence[Event], where: MetricsFilter | None = None
) -> list[AgreementPoint]:
    """Each shadow verdict of the L1 supervisor beside the person's decision on the same call."""
    return _agreements(events, _index(events), where or MetricsFilter())


def _union(groups: Collection[set[str]]) -> set[str]:
    return set().union(*groups)


def _by_time(points: list[Point]) -> list[Point]:
    return sorted(points, key=lambda point: point.time)


def _confidence(
    events: Sequence[Event], index: _Index, where: MetricsFilter
) -> list[ConfidencePoint]:
    points = []
    for event in events:
        body = event.body
        if not isinstance(body, CriterionScored):
            continue
        task_id = event.session_id
        if not where.admits(event.time, task_id, index.agents_of(task_id)):
            continue
        points.append(
            ConfidencePoint(
                time=event.time,
                task_id=task_id,
                task=index.task_names.get(task_id, ""),
                criterion=body.criterion,
                iteration=body.iteration,
                score=body.score,
                level=body.level,
                by=body.by,
            )
        )
    return _by_time(points)


def _admitted_tasks(index: _Index, where: MetricsFilter) -> list[TaskMetrics]:
    """The metrics of each task the filter admits (by start time), oldest first."""
    ordered = sorted(index.task_events, key=lambda task_id: index.task_starts[task_id])
    return [
        task_metrics(index.task_events[task_id])
        for task_id in ordered
        if where.admits(index.task_starts[task_id], task_id, index.agents_of(task_id))
    ]


def _iterations(tasks: list[TaskMetrics]) -> list[IterationsPoint]:
    return [
        IterationsPoint(
            time=metrics.started_at,
            task_id=metrics.task_id,
            task=metrics.name,
            iterations=metrics.iterations,
            status=metrics.status,
        )
        for metrics in tasks
    ]


def _phase_shares(tasks: list[TaskMetrics]) -> list[PhaseSharePoint]:
    return [
        PhaseSharePoint(
            time=metrics.started_at,
            task_id=metrics.task_id,
            task=metrics.name,
            phase=entry.phase,
            seconds=entry.seconds,
            share=entry.share,
        )
        for metrics in tasks
        for entry in metrics.phases
    ]


def _session_events(
    events: Sequence[Event], index: _Index, where: MetricsFilter, kind: type[Body]
) -> Iterator[tuple[Event, Body, dict[str, str]]]:
    """The events of one kind from chats, with their session, agent and task, if admitted."""
    for event in events:
        body = event.body
        if not isinstance(body, kind):
            continue
        fields = index.session_fields(event)
        if where.admits(event.time, fields["task_id"], (fields["agent"],)):
            yield event, body, fields


def _model_calls(
    events: Sequence[Event], index: _Index, where: MetricsFilter
) -> list[ModelCallPoint]:
    return _by_time(
        [
            ModelCallPoint(
                time=event.time,
                **fields,
                model=body.model,
                input_tokens=body.input_tokens,
                output_tokens=body.output_tokens,
                first_token_s=body.first_token_s,
                total_s=body.total_s,
            )
            for event, body, fields in _session_events(events, index, where, ModelCallFinished)
        ]
    )


def _resolutions(
    events: Sequence[Event], index: _Index, where: MetricsFilter
) -> list[ResolutionPoint]:
    return _by_time(
        [
            ResolutionPoint(
                time=event.time,
                **fields,
                tool=body.call.name,
                level=resolution_level(body.by),
                allowed=body.allowed,
                by=body.by,
            )
            for event, body, fields in _session_events(events, index, where, ToolCallDecided)
        ]
    )


def _decisions(events: Sequence[Event], index: _Index, where: MetricsFilter) -> list[DecisionPoint]:
    points = []
    for event in events:
        decision = _decision(event.body)
        if decision is None:
            continue
        fields = index.session_fields(event)
        if where.admits(event.time, fields["task_id"], (fields["agent"],)):
            points.append(DecisionPoint(time=event.time, **fields, **decision))
    return _by_time(points)


def _decision(body: EventBody) -> dict[str, Any] | None:
    """The decider, level, outcome and confidence (percent) of a decision event."""
    if isinstance(body, ToolCallDecided):
        decider = decider_of_call(body.by)
        return {
            "supervisor": decider or body.by,
            "level": resolution_level(body.by),
            "outcome": "allowed" if body.allowed else "denied",
            "confidence": _percent(body.confidence if decider else None),
        }
    if isinstance(body, SupervisorDecided):
        return {
            "supervisor": body.supervisor,
            "level": "message",
            "outcome": message_outcome(body.action),
            "confidence": _percent(None if body.fallback else body.confidence),
        }
    if isinstance(body, ApprovalRequested) and body.level == "L1":
        return {
            "supervisor": L1_SUPERVISOR,
            "level": "supervisor",
            "outcome": "escalated",
            "confidence": None,
        }
    return None


def _percent(confidence: float | None) -> float | None:
    return None if confidence is None else confidence * 100


def _human_waits(
    events: Sequence[Event], index: _Index, where: MetricsFilter
) -> list[HumanWaitPoint]:
    return _by_time(
        [
            HumanWaitPoint(
                time=event.time,
                **fields,
                approval_id=body.approval_id,
                status=body.status,
                resolved_by=body.resolved_by,
                waited_s=body.waited_s,
            )
            for event, body, fields in _session_events(events, index, where, ApprovalResolved)
            if waited_for_a_person(body.resolved_by)
        ]
    )


def _questions(events: Sequence[Event], index: _Index, where: MetricsFilter) -> list[QuestionPoint]:
    return _by_time(
        [
            QuestionPoint(
                time=event.time,
                **fields,
                approval_id=body.approval_id,
                tool=body.tool,
                outcome=question_outcome(body.status, body.edited, body.flagged),
                waited_s=body.waited_s,
            )
            for event, body, fields in _session_events(events, index, where, ApprovalResolved)
            if waited_for_a_person(body.resolved_by)
        ]
    )


def _agreements(
    events: Sequence[Event], index: _Index, where: MetricsFilter
) -> list[AgreementPoint]:
    """From a resolution that carries its shadow verdict, and from a verdict that came after the
    person's decision (the one event of the two that carries both)."""
    points = []
    for event in events:
        verdict = _verdict(event.body)
        if verdict is None:
            continue
        shadow, person, edited, tool, approval_id = verdict
        agreement = verdict_agreement(shadow, person, edited)
        fields = index.session_fields(event)
        if agreement is None or not where.admits(event.time, fields["task_id"], (fields["agent"],)):
            continue
        points.append(
            AgreementPoint(
                time=event.time,
                **fields,
                approval_id=approval_id,
                tool=tool,
                shadow=shadow,
                person=person,
                edited=edited,
                agreement=agreement,
            )
        )
    return _by_time(points)


def _verdict(body: EventBody) -> tuple[str, str, bool, str, str] | None:
    """The shadow verdict, the person's decision, edited, tool and approval of an event that may
    carry both; None for one that cannot."""
    if isinstance(body, ApprovalResolved):
        if body.shadow is None or not waited_for_a_person(body.resolved_by):
            return None
        return body.shadow, body.status, body.edited, body.tool, body.approval_id
    if isinstance(body, ShadowVerdictGiven) and body.person is not None:
        return body.decision, body.person, body.edited, body.tool, body.approval_id
    return None
