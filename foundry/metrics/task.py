"""TaskMetrics: the figures of one task run, computed from its events alone."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from pydantic import BaseModel, ConfigDict, computed_field

from foundry.metrics.terms import phase_shares
from foundry.orchestration.events import (
    PHASES,
    AgentConsulted,
    CriterionScored,
    PhaseFinished,
    PhaseStarted,
    RescueDecided,
    RetryDecided,
    TaskFinished,
    TaskResumed,
    TaskStarted,
)
from foundry.session.events import Event

OTHER = "other"  # time of a task spent inside no phase
PHASE_COLUMNS: tuple[str, ...] = (*PHASES, OTHER)


class PhaseTime(BaseModel):
    """Exclusive time spent in one phase: time in a nested phase counts for the nested one."""

    model_config = ConfigDict(frozen=True)

    phase: str  # one of PHASE_COLUMNS
    seconds: float
    share: float  # percent of the task's active time


class ConsultSize(BaseModel):
    """One message to an agent of the task and its answer."""

    model_config = ConfigDict(frozen=True)

    role: str
    agent: str
    prompt_chars: int
    response_chars: int
    input_tokens: int
    output_tokens: int
    seconds: float


class TaskMetrics(BaseModel):
    model_config = ConfigDict(frozen=True)

    task_id: str
    name: str
    status: str  # succeeded, failed, cancelled; running while no task_finished is logged
    started_at: datetime
    last_event_at: datetime
    iterations: int
    supervisor_calls: int
    operator_calls: int
    helper_calls: int
    worker_calls: int
    interrogation_rounds: int
    rescues: tuple[str, ...]
    prompt_chars: int
    response_chars: int
    input_tokens: int
    output_tokens: int
    consults: tuple[ConsultSize, ...]
    confidence_scores: tuple[float, ...]
    retry_reasons: tuple[str, ...]
    phases: tuple[PhaseTime, ...]  # in PHASE_COLUMNS order, zeros included
    total_seconds: float  # active time: TaskStarted -> last event, less the gaps before resumes
    bottleneck: str | None  # the phase with the most time; None when no phase took any

    @computed_field  # type: ignore[prop-decorator]
    @property
    def prompt_chars_per_consult(self) -> float:
        return self.prompt_chars / len(self.consults) if self.consults else 0.0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def response_chars_per_consult(self) -> float:
        return self.response_chars / len(self.consults) if self.consults else 0.0

    def phase(self, name: str) -> PhaseTime:
        return next(entry for entry in self.phases if entry.phase == name)


def task_metrics(events: Sequence[Event], task_id: str | None = None) -> TaskMetrics:
    """The metrics of task `task_id` (by default, the first task started among `events`).

    Events of other sessions (the task's chats, other tasks) may be mixed in; they are ignored.
    """
    own = task_events(events, task_id)
    start = own[0]
    assert isinstance(start.body, TaskStarted)
    bodies = [event.body for event in own]
    consults = [body for body in bodies if isinstance(body, AgentConsulted)]
    phases = phase_times(own)
    return TaskMetrics(
        task_id=start.session_id,
        name=start.body.name,
        status=_status(bodies),
        started_at=start.time,
        last_event_at=own[-1].time,
        iterations=len(_iterations(bodies)),
        supervisor_calls=_count_role(consults, "supervisor"),
        operator_calls=_count_role(consults, "operator"),
        helper_calls=_count_role(consults, "helper"),
        worker_calls=_count_role(consults, "worker"),
        interrogation_rounds=_rounds(bodies, "interrogation"),
        rescues=tuple(body.action for body in bodies if isinstance(body, RescueDecided)),
        prompt_chars=sum(body.prompt_chars for body in consults),
        response_chars=sum(body.response_chars for body in consults),
        input_tokens=sum(body.input_tokens for body in consults),
        output_tokens=sum(body.output_tokens for body in consults),
        consults=tuple(_consult_size(body) for body in consults),
        confidence_scores=tuple(b.score for b in bodies if isinstance(b, CriterionScored)),
        retry_reasons=tuple(b.reason for b in bodies if isinstance(b, RetryDecided)),
        phases=phases,
        total_seconds=sum(entry.seconds for entry in phases),
        bottleneck=_bottleneck(phases),
    )


def task_events(events: Sequence[Event], task_id: str | None = None) -> list[Event]:
    """The events of a task started in `events`, in order, from its `task_started` on."""
    starts = (event for event in events if isinstance(event.body, TaskStarted))
    start = next((e for e in starts if task_id in (None, e.session_id)), None)
    if start is None:
        raise ValueError(f"no task_started of {task_id or 'any task'} among the events")
    own = [e for e in events if e.session_id == start.session_id and e.seq >= start.seq]
    return sorted(own, key=lambda event: event.seq)


def phase_times(events: Sequence[Event]) -> tuple[PhaseTime, ...]:
    """Exclusive time per phase of one task's events (in order).

    The time between two consecutive events goes to the innermost open phase, or to "other".
    A `task_resumed` closes every phase still open and the gap before it counts for nothing:
    the process was not running then.
    """
    seconds = dict.fromkeys(PHASE_COLUMNS, 0.0)
    open_phases: list[str] = []
    previous: Event | None = None
    for event in events:
        body = event.body
        if isinstance(body, TaskResumed):
            open_phases.clear()
        elif previous is not None:
            gap = (event.time - previous.time).total_seconds()
            seconds[open_phases[-1] if open_phases else OTHER] += gap
        if isinstance(body, PhaseStarted):
            open_phases.append(body.phase)
        elif isinstance(body, PhaseFinished) and body.phase in open_phases:
            innermost = len(open_phases) - 1 - open_phases[::-1].index(body.phase)
            del open_phases[innermost]
        previous = event
    return tuple(
        PhaseTime(phase=name, seconds=value, share=share)
        for name, value, share in phase_shares(seconds)
    )


def _status(bodies: Iterable[object]) -> str:
    finished = [body for body in bodies if isinstance(body, TaskFinished)]
    return finished[-1].status if finished else "running"


def _iterations(bodies: Iterable[object]) -> set[int]:
    return {
        body.iteration
        for body in bodies
        if isinstance(body, PhaseStarted) and body.phase == "agent_execution"
    }


def _rounds(bodies: Iterable[object], phase: str) -> int:
    """Phases of a kind started; a numbered phase started again after a resume counts once."""
    numbered: set[tuple[int, int]] = set()
    unnumbered = 0
    for body in bodies:
        if not (isinstance(body, PhaseStarted) and body.phase == phase):
            continue
        if body.step is None:
            unnumbered += 1
        else:
            numbered.add((body.iteration, body.step))
    return len(numbered) + unnumbered


def _count_role(consults: Iterable[AgentConsulted], role: str) -> int:
    return sum(1 for body in consults if body.role == role)


def _consult_size(body: AgentConsulted) -> ConsultSize:
    return ConsultSize(
        role=body.role,
        agent=body.agent,
        prompt_chars=body.prompt_chars,
        response_chars=body.response_chars,
        input_tokens=body.input_tokens,
        output_tokens=body.output_tokens,
        seconds=body.seconds,
    )


def _bottleneck(phases: Sequence[PhaseTime]) -> str | None:
    named = [entry for entry in phases if entry.phase != OTHER and entry.seconds > 0]
    return max(named, key=lambda entry: entry.seconds).phase if named else None
