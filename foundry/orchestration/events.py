"""The events of a task run. They share the event log with chat sessions: a task's events carry
the task's id where a chat's carry the session's.

Every phase of a task is bracketed by `phase_started` and `phase_finished`; a journaled phase
(one numbered `step`) keeps its result in `phase_finished.result`, which is what a resumed or a
replayed run reads instead of doing the work again. Metrics are computed from these events only.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from foundry.session.events import EventBody, register_events

Phase = Literal[
    "planning",
    "agent_execution",
    "validation",
    "helper",
    "interrogation",
    "rescue",
    "waiting_for_approval",
]
PHASES: tuple[Phase, ...] = (
    "planning",
    "agent_execution",
    "validation",
    "helper",
    "interrogation",
    "rescue",
    "waiting_for_approval",
)
Role = Literal["supervisor", "operator", "helper", "worker"]
TaskStatus = Literal["succeeded", "failed", "cancelled"]


class TaskStarted(EventBody):
    kind: Literal["task_started"] = "task_started"
    name: str
    task_file: str
    workspace: str
    task_type: str
    complexity: str


class TaskResumed(EventBody):
    """The run continues after an interruption; phases left open before it ended then."""

    kind: Literal["task_resumed"] = "task_resumed"
    from_step: int


class PhaseStarted(EventBody):
    kind: Literal["phase_started"] = "phase_started"
    phase: Phase
    iteration: int
    step: int | None = None  # journaled phases are numbered; waiting for approval is not
    label: str = ""


class PhaseFinished(EventBody):
    kind: Literal["phase_finished"] = "phase_finished"
    phase: Phase
    iteration: int
    step: int | None = None
    ok: bool = True
    summary: str = ""
    result: dict[str, Any] = Field(default_factory=dict)


class AgentAsked(EventBody):
    """A message is on its way to an agent of the task (its answer is `agent_consulted`)."""

    kind: Literal["agent_asked"] = "agent_asked"
    role: Role
    agent: str
    session_id: str


class AgentConsulted(EventBody):
    """One message to an agent of the task and its answer: sizes, tokens and time."""

    kind: Literal["agent_consulted"] = "agent_consulted"
    role: Role
    agent: str
    session_id: str
    prompt_chars: int
    response_chars: int
    model_calls: int
    input_tokens: int
    output_tokens: int
    seconds: float
    ended_by: str = "reply"


class CriterionScored(EventBody):
    kind: Literal["criterion_scored"] = "criterion_scored"
    criterion: str
    iteration: int
    score: float  # 0-100
    level: Literal["pass", "uncertain", "fail"]
    factors: dict[str, float] = Field(default_factory=dict)  # factor -> 0..1
    evidence: tuple[str, ...] = ()
    cached: bool = False
    by: str = "checks"  # checks, helper, interrogation


class RetryDecided(EventBody):
    kind: Literal["retry_decided"] = "retry_decided"
    iteration: int
    retry: bool
    approach: Literal["fix", "change_approach", "strict", "rescue", "give_up"]
    reason: str


class RescueDecided(EventBody):
    kind: Literal["rescue_decided"] = "rescue_decided"
    iteration: int = 0
    action: Literal["ADJUST_PLAN", "CHANGE_AGENT", "TAKEOVER"]
    analysis: str
    operator: str = ""


class WorkerFinished(EventBody):
    """A delegated worker's answer: journaled so that a replay never runs the worker again."""

    kind: Literal["worker_finished"] = "worker_finished"
    step: int = 0  # the journaled step that delegated it
    worker: str
    instructions: str
    output: str
    session_id: str = ""
    started_s: float = 0.0  # seconds since the task started
    finished_s: float = 0.0
    error: str | None = None


class TaskFinished(EventBody):
    kind: Literal["task_finished"] = "task_finished"
    status: TaskStatus
    output: str
    iterations: int
    reason: str = ""


register_events(
    TaskStarted,
    TaskResumed,
    PhaseStarted,
    PhaseFinished,
    AgentAsked,
    AgentConsulted,
    CriterionScored,
    RetryDecided,
    RescueDecided,
    WorkerFinished,
    TaskFinished,
)
