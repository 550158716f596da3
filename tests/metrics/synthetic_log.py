"""A generated event log of many task runs and chats, reproducible from a seed: for screenshots
and for the dashboards benchmark (bench/ui.py)."""

from __future__ import annotations

import random
from datetime import timedelta

from foundry.orchestration.events import (
    Phase,
    RescueDecided,
    RetryDecided,
    Role,
    TaskFinished,
    TaskStarted,
    TaskStatus,
)
from foundry.session.events import (
    ApprovalRequested,
    ApprovalResolved,
    Event,
    EventBody,
    SessionStarted,
    ShadowVerdictGiven,
)

from .fixture_log import (
    Action,
    Level,
    LogWriter,
    ShadowDecision,
    consulted,
    decided,
    finished,
    model_call,
    reviewed,
    scored,
    started,
)

TASK_NAMES = (
    "add-login-endpoint",
    "fix-flaky-test",
    "write-api-docs",
    "rename-config-keys",
    "migrate-settings",
    "add-retry-logic",
    "split-big-module",
    "cache-user-lookups",
    "document-cli",
    "raise-coverage",
    "parse-csv-upload",
    "tidy-logging",
)
CRITERIA = ("code compiles", "tests pass", "docs updated", "no new warnings")
TOOLS = ("fs.read_file", "fs.write_file", "shell.run", "git.diff", "web.fetch")
DECIDERS = (
    ("policy:reads-in", 60),
    ("grant:g_team", 6),
    ("agent:supervisor", 20),
    ("human:gui:ana", 10),
    ("timeout", 4),
)
MODELS = ("embedded:smollm2", "ollama:qwen2.5:7b")


def escalated(approval_id: str) -> ApprovalRequested:
    return ApprovalRequested(approval_id=approval_id, tool="fs.write_file", level="L1", reason="")


class _Run:
    """Writes one task run, advancing its clock as it goes."""

    def __init__(self, log: LogWriter, rng: random.Random, number: int, start: float) -> None:
        self.log, self.rng, self.now = log, rng, start
        self.task = f"task-{number:05d}"
        self.name = TASK_NAMES[number % len(TASK_NAMES)]
        self.operator = f"chat-{number:05d}-op"
        self.supervisor = f"chat-{number:05d}-sup"

    def at(self, seconds: float, body: EventBody) -> None:
        self.now += seconds
        self.log.add(self.task, self.now, body)

    def consult(self, role: Role, chat: str, agent: str, seconds: float) -> None:
        tokens_in, tokens_out = self.rng.randint(200, 1800), self.rng.randint(60, 700)
        self.log.add(
            chat,
            self.now + seconds - 0.5,
            model_call(
                self.rng.choice(MODELS),
                tokens_in,
                tokens_out,
                self.rng.uniform(0.2, 1.5),
                seconds - 0.5,
            ),
        )
        self.review(chat, self.now + seconds - 0.4)
        sizes = (tokens_in * 4, tokens_out * 4, tokens_in, tokens_out)
        self.at(seconds, consulted(role, agent, chat, sizes, seconds))

    def review(self, chat: str, moment: float) -> None:
        """The message supervisors' decisions on a reply: the guardian's, and the architect's
        on the operator's (unsure at times, and now and then a fallback)."""
        rng = self.rng
        blocked = rng.random() < 0.03
        self.log.add(chat, moment, reviewed("guardian", "block" if blocked else "allow", 1.0))
        if chat != self.operator:
            return
        confidence = round(rng.betavariate(5, 2), 2)
        action: Action = "modify" if confidence < 0.6 else "allow"
        self.log.add(chat, moment, reviewed("architect", action, confidence, rng.random() < 0.05))

    def tool_calls(self, iteration: int) -> None:
        for _ in range(self.rng.randint(2, 6)):
            by = self.rng.choices([d for d, _ in DECIDERS], [w for _, w in DECIDERS])[0]
            if by.startswith(("human", "timeout")):
                self.at(0, started("waiting_for_approval", iteration))
                if self.rng.random() < 0.5:  # the L1 supervisor sent it on
                    self.log.add(self.operator, self.now, escalated(f"ap-{self.task}-{self.now}"))
                status = self.ask(by)
                self.at(0, finished("waiting_for_approval", iteration))
                allowed = status == "approved"
            else:
                allowed = by != "timeout" and self.rng.random() > 0.15
            confidence = round(self.rng.uniform(0.8, 1.0), 2) if by == "agent:supervisor" else None
            self.log.add(
                self.operator,
                self.now + 1,
                decided(self.rng.choice(TOOLS), allowed, by, confidence),
            )
            self.now += self.rng.uniform(1, 6)

    def ask(self, by: str) -> str:
        """A question put to a person: answered (denied at times, approved edited or flagged
        now and then) or timed out; the L1 supervisor's shadow verdict on most of them, given
        before the answer or after it. Returns the approval's status."""
        rng = self.rng
        approval_id = f"ap-{self.task}-{self.now:.0f}"
        waited = 90.0 if by == "timeout" else rng.lognormvariate(3.0, 0.8)
        self.now += waited
        status = "timed_out" if by == "timeout" else "denied" if rng.random() < 0.15 else "approved"
        edited = status == "approved" and rng.random() < 0.12
        shadow = self.shadow_verdict(status == "approved" and not edited)
        late = shadow is not None and status != "timed_out" and rng.random() < 0.3
        resolved = ApprovalResolved(
            approval_id=approval_id,
            status=status,
            resolved_by=by,
            waited_s=waited,
            tool="fs.write_file",
            edited=edited,
            flagged=rng.random() < 0.1,
            shadow=None if late else shadow,
        )
        self.log.add(self.operator, self.now, resolved)
        if late and shadow is not None:
            verdict = ShadowVerdictGiven(
                approval_id=approval_id,
                tool="fs.write_file",
                supervisor="tool-guard",
                decision=shadow,
                person=status,
                edited=edited,
            )
            self.log.add(self.operator, self.now + rng.uniform(0.5, 4), verdict)
        return status

    def shadow_verdict(self, allowed: bool) -> ShadowDecision | None:
        """The L1 supervisor's unseen verdict, agreeing with the person most of the time (on
        six calls in ten: shadow mode is on for some agents only)."""
        rng = self.rng
        if rng.random() < 0.4:
            return None
        agrees: ShadowDecision = "approve" if allowed else "deny"
        other: ShadowDecision = "deny" if allowed else "approve"
        return rng.choices((agrees, "escalate", other), (80, 12, 8))[0]

    def write(self) -> None:
        rng = self.rng
        self.log.add(
            self.supervisor,
            self.now,
            SessionStarted(agent_path="/a/planner", agent_name="planner", model="m"),
        )
        self.log.add(
            self.operator,
            self.now,
            SessionStarted(agent_path="/a/coder", agent_name="coder", model="m"),
        )
        self.at(
            0,
            TaskStarted(
                name=self.name,
                task_file=f"tasks/{self.name}.yaml",
                workspace="/w",
                task_type="implementation",
                complexity="moderate",
            ),
        )
        self.at(0.5, started("planning", 0, 1))
        self.consult("supervisor", self.supervisor, "planner", rng.uniform(4, 25))
        self.at(0.5, finished("planning", 0, 1))
        iterations = rng.choices((1, 2, 3, 4), (50, 30, 15, 5))[0]
        step = 1
        for iteration in range(1, iterations + 1):
            step += 1
            self.at(0.5, started("agent_execution", iteration, step))
            self.tool_calls(iteration)
            self.consult("operator", self.operator, "coder", rng.uniform(8, 60))
            self.at(0.5, finished("agent_execution", iteration, step))
            step += 1
            self.at(rng.uniform(0.5, 3), started("validation", iteration, step))
            last = iteration == iterations
            for criterion in CRITERIA[: rng.randint(2, 4)]:
                base = 45 + 12 * iteration + (20 if last else 0)
                score = max(0.0, min(100.0, rng.gauss(base, 12)))
                level: Level = "pass" if score >= 70 else "uncertain" if score >= 50 else "fail"
                self.at(rng.uniform(1, 8), scored(criterion, iteration, round(score, 1), level))
            self.at(0.5, finished("validation", iteration, step))
            if not last:
                self.retry(iteration, step)
                step += 2
        status: TaskStatus = "succeeded" if rng.random() < 0.75 else "failed"
        self.at(rng.uniform(0.5, 2), TaskFinished(status=status, output="", iterations=iterations))

    def retry(self, iteration: int, step: int) -> None:
        rng = self.rng
        kind: Phase = rng.choice(("interrogation", "helper", "rescue"))
        self.at(0.5, started(kind, iteration, step + 1))
        roles: dict[str, Role] = {
            "interrogation": "operator",
            "helper": "helper",
            "rescue": "supervisor",
        }
        role = roles[kind]
        chat = self.supervisor if role == "supervisor" else self.operator
        self.consult(role, chat, "planner" if role == "supervisor" else "coder", rng.uniform(3, 20))
        if kind == "rescue":
            self.at(0.5, RescueDecided(action="ADJUST_PLAN", analysis="narrower steps"))
        self.at(0.5, finished(kind, iteration, step + 1))
        reason = rng.choice(("tests fail", "a criterion below 50", "the same error twice"))
        self.at(0.5, RetryDecided(iteration=iteration, retry=True, approach="fix", reason=reason))


def synthetic_log(tasks: int, seed: int = 7, gap_s: float = 600.0) -> list[Event]:
    """`tasks` task runs, one every `gap_s` seconds on average, with their chats."""
    rng = random.Random(seed)
    log = LogWriter()
    start = 0.0
    for number in range(tasks):
        _Run(log, rng, number, start).write()
        start += rng.uniform(0.3, 1.7) * gap_s
    return sorted(log.events, key=lambda event: event.time)


def shifted(events: list[Event], by: timedelta) -> list[Event]:
    return [event.model_copy(update={"time": event.time + by}) for event in events]
