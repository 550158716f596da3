"""A hand-written event log with fixed times: two tasks, their chats, and an ordinary chat.

The first task ("add-endpoint") has a planning phase, two iterations, a wait for a human nested in
agent execution, an interrogation, a crash and resume in the middle of iteration 2, a helper check
and a rescue. Its figures are worked out by hand in tests/metrics/test_task_metrics.py.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime, timedelta
from typing import Literal

from foundry.llm.base import ToolCall
from foundry.orchestration.events import (
    AgentConsulted,
    CriterionScored,
    Phase,
    PhaseFinished,
    PhaseStarted,
    RescueDecided,
    RetryDecided,
    Role,
    TaskFinished,
    TaskResumed,
    TaskStarted,
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
    TokenDelta,
    ToolCallDecided,
)

T0 = datetime(2025, 3, 1, 9, 0, 0, tzinfo=UTC)
TASK = "task-1"
DOCS_TASK = "task-2"
Level = Literal["pass", "uncertain", "fail"]
Action = Literal["allow", "modify", "block", "human_review"]
ShadowDecision = Literal["approve", "deny", "escalate"]


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


class LogWriter:
    """Numbers events per session, as the store does."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self._seq: dict[str, int] = defaultdict(int)

    def add(self, session_id: str, seconds: float, body: EventBody) -> None:
        self._seq[session_id] += 1
        seq = self._seq[session_id]
        self.events.append(Event(session_id=session_id, seq=seq, time=at(seconds), body=body))


def consulted(
    role: Role, agent: str, chat: str, sizes: tuple[int, int, int, int], seconds: float
) -> AgentConsulted:
    prompt, response, tokens_in, tokens_out = sizes
    return AgentConsulted(
        role=role,
        agent=agent,
        session_id=chat,
        prompt_chars=prompt,
        response_chars=response,
        model_calls=1,
        input_tokens=tokens_in,
        output_tokens=tokens_out,
        seconds=seconds,
    )


def scored(
    criterion: str,
    iteration: int,
    score: float,
    level: Level,
    by: str = "checks",
    cached: bool = False,
) -> CriterionScored:
    return CriterionScored(
        criterion=criterion, iteration=iteration, score=score, level=level, by=by, cached=cached
    )


def started(phase: Phase, iteration: int, step: int | None = None) -> PhaseStarted:
    return PhaseStarted(phase=phase, iteration=iteration, step=step)


def finished(
    phase: Phase, iteration: int, step: int | None = None, ok: bool = True
) -> PhaseFinished:
    return PhaseFinished(phase=phase, iteration=iteration, step=step, ok=ok)


def model_call(
    model: str, tokens_in: int, tokens_out: int, first: float | None, total: float
) -> ModelCallFinished:
    return ModelCallFinished(
        model=model,
        input_tokens=tokens_in,
        output_tokens=tokens_out,
        first_token_s=first,
        total_s=total,
        stop_reason="stop",
    )


def decided(tool: str, allowed: bool, by: str, confidence: float | None = None) -> ToolCallDecided:
    call = ToolCall(id=tool, name=tool, arguments={})
    return ToolCallDecided(call=call, allowed=allowed, by=by, confidence=confidence)


def reviewed(
    supervisor: str, action: Action, confidence: float | None, fallback: bool = False
) -> SupervisorDecided:
    """A message supervisor's decision on the reply."""
    return SupervisorDecided(
        supervisor_id=supervisor,
        supervisor=supervisor,
        direction="response",
        message_index=1,
        action=action,
        confidence=confidence,
        fallback=fallback,
    )


def endpoint_task(log: LogWriter) -> None:
    """Task 1, second by second (see the test for the arithmetic)."""
    task = TASK
    start = TaskStarted(
        name="add-endpoint",
        task_file="tasks/add-endpoint.yaml",
        workspace="/tmp/ws",
        task_type="implementation",
        complexity="moderate",
    )
    log.add(task, 0, start)
    log.add(task, 0, started("planning", 0, 1))
    log.add(task, 20, consulted("supervisor", "planner", "chat-sup", (1200, 800, 300, 200), 19.5))
    log.add(task, 25, finished("planning", 0, 1))
    log.add(task, 25, started("agent_execution", 1, 2))
    log.add(task, 40, started("waiting_for_approval", 1))
    log.add(task, 105, finished("waiting_for_approval", 1))
    log.add(task, 125, consulted("operator", "coder", "chat-op", (2000, 1500, 500, 400), 84))
    log.add(task, 130, finished("agent_execution", 1, 2))
    log.add(task, 135, started("validation", 1, 3))
    log.add(task, 145, scored("endpoint exists", 1, 82, "pass"))
    log.add(task, 150, scored("tests pass", 1, 40, "fail"))
    log.add(task, 155, finished("validation", 1, 3, ok=False))
    log.add(task, 155, started("interrogation", 1, 4))
    log.add(task, 170, consulted("operator", "coder", "chat-op", (600, 400, 150, 100), 14))
    log.add(task, 175, scored("tests pass", 1, 55, "uncertain", by="interrogation"))
    log.add(task, 180, finished("interrogation", 1, 4))
    reason_1 = "tests pass failed: test_get_user returns 404"
    log.add(task, 185, RetryDecided(iteration=1, retry=True, approach="fix", reason=reason_1))
    log.add(task, 185, started("agent_execution", 2, 5))
    log.add(task, 200, consulted("worker", "tester", "chat-work", (300, 200, 80, 60), 14))
    # the process dies here; it is started again 300 s later
    log.add(task, 500, TaskResumed(from_step=5))
    log.add(task, 500, started("agent_execution", 2, 5))
    log.add(task, 540, consulted("operator", "coder", "chat-op", (2200, 1700, 550, 450), 39))
    log.add(task, 550, finished("agent_execution", 2, 5))
    log.add(task, 550, started("validation", 2, 6))
    log.add(task, 560, scored("endpoint exists", 2, 90, "pass", cached=True))
    log.add(task, 565, scored("tests pass", 2, 45, "fail"))
    log.add(task, 570, finished("validation", 2, 6, ok=False))
    log.add(task, 570, started("helper", 2, 7))
    log.add(task, 580, consulted("helper", "reviewer", "chat-help", (950, 400, 220, 70), 9))
    log.add(task, 585, finished("helper", 2, 7))
    reason_2 = "the same error twice: AssertionError in test_get_user"
    log.add(task, 590, RetryDecided(iteration=2, retry=True, approach="rescue", reason=reason_2))
    log.add(task, 590, started("rescue", 2, 8))
    log.add(task, 605, consulted("supervisor", "planner", "chat-sup", (1500, 600, 380, 150), 14))
    log.add(task, 610, RescueDecided(action="ADJUST_PLAN", analysis="split the handler"))
    log.add(task, 615, finished("rescue", 2, 8))
    log.add(task, 620, TaskFinished(status="failed", output="", iterations=2, reason="limit"))


def endpoint_chats(log: LogWriter) -> None:
    """The chats task 1 consulted: model calls, tool-call decisions and one human approval."""
    for chat, agent, seconds in (
        ("chat-sup", "planner", 1),
        ("chat-op", "coder", 26),
        ("chat-help", "reviewer", 571),
    ):
        log.add(
            chat,
            seconds,
            SessionStarted(agent_path=f"/agents/{agent}", agent_name=agent, model="m"),
        )
    log.add("chat-sup", 19, model_call("embedded:smollm2", 300, 200, 0.5, 18.5))
    log.add("chat-op", 30, decided("fs.read_file", True, "policy:reads-in"))
    log.add(
        "chat-op",
        40,
        ApprovalRequested(approval_id="ap1", tool="fs.write_file", level="L0", reason="writes"),
    )
    log.add(
        "chat-op",
        105,
        ApprovalResolved(
            approval_id="ap1", status="approved", resolved_by="human:gui:ana", waited_s=65.0
        ),
    )
    log.add("chat-op", 105, decided("fs.write_file", True, "human:gui:ana"))
    log.add("chat-op", 124, model_call("ollama:qwen2.5", 500, 400, 1.25, 19.0))
    log.add("chat-op", 124, TokenDelta(text="not a metric event"))
    log.add("chat-op", 169, model_call("ollama:qwen2.5", 150, 100, 0.75, 14.0))
    log.add("chat-op", 520, decided("shell.run", False, "agent:supervisor", confidence=0.92))
    log.add("chat-op", 539, model_call("ollama:qwen2.5", 550, 450, 1.5, 38.5))
    log.add("chat-help", 579, model_call("embedded:smollm2", 220, 70, None, 8.0))
    log.add("chat-sup", 604, model_call("embedded:smollm2", 380, 150, 0.5, 13.5))


def docs_task(log: LogWriter) -> None:
    """Task 2: planning 10 s, one iteration of 30 s, validation 10 s; 50 s in all."""
    task = DOCS_TASK
    start = TaskStarted(
        name="write-docs",
        task_file="tasks/write-docs.yaml",
        workspace="/tmp/docs",
        task_type="documentation",
        complexity="simple",
    )
    log.add(task, 1000, start)
    log.add(task, 1000, started("planning", 0, 1))
    log.add(task, 1010, finished("planning", 0, 1))
    log.add(task, 1010, started("agent_execution", 1, 2))
    log.add(task, 1035, consulted("operator", "writer", "chat-doc", (800, 2400, 200, 600), 24))
    log.add(task, 1040, finished("agent_execution", 1, 2))
    log.add(task, 1040, started("validation", 1, 3))
    log.add(task, 1045, scored("docs complete", 1, 88, "pass"))
    log.add(task, 1050, finished("validation", 1, 3))
    log.add(task, 1050, TaskFinished(status="succeeded", output="done", iterations=1))
    log.add(
        "chat-doc",
        1011,
        SessionStarted(agent_path="/agents/writer", agent_name="writer", model="m"),
    )
    log.add("chat-doc", 1034, model_call("embedded:smollm2", 200, 600, 0.25, 23.0))


def ordinary_chat(log: LogWriter) -> None:
    """A chat with no task: a model call, a grant, three message supervisors' decisions (one
    a fallback), and a call the L1 supervisor sent to a person, whose approval timed out."""
    chat = "chat-free"
    log.add(
        chat, 700, SessionStarted(agent_path="/agents/assistant", agent_name="assistant", model="m")
    )
    log.add(chat, 705, reviewed("guardian", "allow", 1.0))
    log.add(chat, 710, model_call("embedded:smollm2", 120, 30, 0.25, 2.0))
    log.add(chat, 711, reviewed("architect", "modify", 0.62))
    log.add(chat, 711, reviewed("curator", "allow", 0.5, fallback=True))
    log.add(chat, 712, decided("time.get_current_time", True, "grant:g_1"))
    log.add(
        chat,
        712,
        ApprovalRequested(approval_id="ap2", tool="web.fetch", level="L1", reason="unsure"),
    )
    log.add(
        chat,
        802,
        ApprovalResolved(
            approval_id="ap2", status="timed_out", resolved_by="timeout", waited_s=90.0
        ),
    )
    log.add(chat, 802, decided("web.fetch", False, "timeout"))


def endpoint_log() -> list[Event]:
    """Task 1 and its chats only."""
    log = LogWriter()
    endpoint_task(log)
    endpoint_chats(log)
    return log.events


def full_log() -> list[Event]:
    """Both tasks, their chats and the ordinary chat, in the order of their times."""
    log = LogWriter()
    endpoint_task(log)
    endpoint_chats(log)
    docs_task(log)
    ordinary_chat(log)
    return sorted(log.events, key=lambda event: event.time)


GUARDED_CHAT = "chat-guard"


def question(
    number: int,
    status: str = "approved",
    by: str = "human:gui:ana",
    waited: float = 10.0,
    edited: bool = False,
    flagged: bool = False,
    shadow: ShadowDecision | None = None,
) -> ApprovalResolved:
    return ApprovalResolved(
        approval_id=f"q{number}",
        status=status,
        resolved_by=by,
        waited_s=waited,
        tool="fs.write_file",
        edited=edited,
        flagged=flagged,
        shadow=shadow,
    )


def late_verdict(number: int, decision: ShadowDecision, person: str | None) -> ShadowVerdictGiven:
    return ShadowVerdictGiven(
        approval_id=f"q{number}",
        tool="fs.write_file",
        supervisor="guard",
        decision=decision,
        person=person,
    )


def supervision_log() -> list[Event]:
    """A chat whose calls go to a person, over three minutes from 09:20, with the L1
    supervisor's shadow verdicts. Questions: 3 unchanged (q1, q7, q8), 1 edited (q2), 1 denied
    (q3), 1 flagged (q4), 1 timed out (q5); q6 was a supervisor's through the approvals API, no
    question. Verdicts: agreed q1 and q3 (given after the person's decision), let through q2
    (the person edited it), escalated an approved q4, denied an approved q7; q5 had no person's
    decision, and a verdict given before the decision (person None) is carried by the
    resolution. Tool calls: 4 by policy, 6 by a person, 1 timed out, 1 by agent7 (L1), and q4
    sent on by the L1 supervisor."""
    log = LogWriter()
    chat = GUARDED_CHAT
    start = SessionStarted(agent_path="/agents/guarded", agent_name="guarded", model="m")
    log.add(chat, 1200, start)
    for second in (1201, 1202, 1261, 1321):
        log.add(chat, second, decided("fs.read_file", True, "policy:reads-in"))
    answers: list[tuple[float, ApprovalResolved, bool]] = [
        (1210, question(1, waited=10, shadow="approve"), True),
        (1230, question(2, waited=30, edited=True, shadow="approve"), True),
        (1250, question(3, status="denied", waited=20), False),
        (1280, question(4, waited=40, flagged=True, shadow="escalate"), True),
        (1300, question(5, status="timed_out", by="timeout", waited=90, shadow="deny"), False),
        (1310, question(6, by="supervisor:agent7", waited=0.5, shadow="approve"), True),
        (1330, question(7, waited=5, shadow="deny"), True),
        (1340, question(8, waited=8), True),
    ]
    log.add(
        chat, 1240, ApprovalRequested(approval_id="q4", tool="fs.write_file", level="L1", reason="")
    )
    log.add(chat, 1241, late_verdict(4, "escalate", None))  # before the decision: no person
    for second, resolved, allowed in answers:
        log.add(chat, second, resolved)
        log.add(chat, second, decided("fs.write_file", allowed, resolved.resolved_by))
    log.add(chat, 1251, late_verdict(3, "deny", "denied"))
    return log.events


def api_resolutions_log() -> list[Event]:
    """An ordinary chat's two write calls sent to a person, denied through the approvals API:
    one by agent7 naming itself a supervisor (in 0.4 s), one by a person at the terminal (2.5 s)."""
    log = LogWriter()
    for number, (by, waited) in enumerate([("supervisor:agent7", 0.4), ("human:cli:ana", 2.5)]):
        resolved = ApprovalResolved(
            approval_id=f"ap{number}", status="denied", resolved_by=by, waited_s=waited
        )
        log.add("chat-free", 10 + number, resolved)
        log.add("chat-free", 10 + number, decided("fs.write_file", False, by))
    return log.events
