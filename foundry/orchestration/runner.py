"""The task runner: plan, operate, validate, verify, interrogate, retry, rescue, delegate.

One run of a task file goes through numbered phases; each journaled phase keeps its result in
its `phase_finished` event, so a killed run resumes from its last completed phase and a finished
run can be replayed without calling any model (see journal.py).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from foundry.orchestration import prompts
from foundry.orchestration.delegation import Delegation
from foundry.orchestration.desk import AgentDesk, Reply, SessionHost
from foundry.orchestration.events import (
    Phase,
    PhaseFinished,
    PhaseStarted,
    RescueDecided,
    RetryDecided,
    TaskFinished,
    TaskResumed,
    TaskStarted,
    TaskStatus,
)
from foundry.orchestration.journal import StepJournal
from foundry.orchestration.plan import (
    PLAN_SCHEMA,
    RESCUE_SCHEMA,
    Complexity,
    Plan,
    ReplyNotUnderstood,
    RescueDecision,
    classify,
    direct_plan,
    needs_plan,
    parse_reply,
)
from foundry.orchestration.retry import Attempt, RetryChoice, RetryRules, decide
from foundry.orchestration.review import Review
from foundry.orchestration.taskfile import TaskFile
from foundry.orchestration.tools import TeamTools
from foundry.orchestration.validation import CriterionScore
from foundry.session.events import ApprovalRequested, ApprovalResolved, Event, EventBody


def step_timeouts(cascade: Sequence[float], planned: float) -> list[float]:
    """The task's growing timeouts, shortened to the plan's estimate where it is shorter, but
    never below the first: the task file's limits are the ceiling, the plan cannot raise them."""
    ceiling = max(planned, cascade[0])
    return [min(timeout, ceiling) for timeout in cascade]


@dataclass
class TaskOutcome:
    task_id: str
    status: str
    output: str
    iterations: int
    supervisor_calls: int = 0
    model_calls: int = 0
    replayed_steps: int = 0


@dataclass
class _State:
    plan: Plan
    operator: str  # a name of `operators`, or "supervisor" after a takeover
    iteration: int = 0
    reply: str = ""
    attempts: list[Attempt] = field(default_factory=list)
    failures_in_row: int = 0
    approach: str = "first"
    scores: list[CriterionScore] = field(default_factory=list)


class TaskRunner:
    def __init__(
        self,
        host: SessionHost,
        task: TaskFile,
        task_id: str,
        journal: StepJournal,
        ask: Any = None,
    ) -> None:
        self.host = host
        self.task = task
        self.spec = task.spec
        self.task_id = task_id
        self.journal = journal
        self.workspace = task.workspace
        self.desk = AgentDesk(host, task, self._emit, ask)
        self.review = Review(self.spec, self.desk, self._emit)
        self.delegation = Delegation(self.desk, self._emit, journal.workers)
        self._background: set[asyncio.Future[Any]] = set()
        self._unsubscribe: Callable[[], None] | None = None
        self._phase: tuple[Phase, int] = ("planning", 0)
        self._team: TeamTools | None = None

    # -- running --------------------------------------------------------------------------------

    async def run(self, resuming: bool = False) -> TaskOutcome:
        self.workspace.mkdir(parents=True, exist_ok=True)
        complexity = classify(self.spec)
        if not resuming:
            await self._emit(
                TaskStarted(
                    name=self.spec.name,
                    task_file=str(self.task.path),
                    workspace=str(self.workspace),
                    task_type=prompts.task_type(self.spec),
                    complexity=complexity,
                )
            )
        elif not self.journal.replay:
            await self._emit(TaskResumed(from_step=self.journal.completed_steps + 1))
        self._watch_approvals()
        try:
            return await self._run(complexity)
        finally:
            if self._unsubscribe:
                self._unsubscribe()
            await asyncio.gather(*self._background, return_exceptions=True)

    async def _run(self, complexity: Complexity) -> TaskOutcome:
        state = _State(plan=await self._plan(complexity), operator="")
        state.operator = self._operator_named(state.plan.operator)
        while True:
            state.iteration += 1
            if await self._iteration(state):
                return await self._finish("succeeded", state, "every criterion passed")
            choice = decide(state.attempts, state.failures_in_row, self._retry_rules())
            await self._emit(
                RetryDecided(
                    iteration=state.iteration,
                    retry=choice.retry,
                    approach=choice.approach,
                    reason=choice.reason,
                ),
                once=True,
            )
            if not choice.retry:
                return await self._finish("failed", state, choice.reason)
            await self._prepare_next(state, choice)

    def _retry_rules(self) -> RetryRules:
        limits = self.spec.limits
        return RetryRules(
            max_iterations=limits.max_iterations,
            rescue_after=limits.rescue_after,
            repeated_error_limit=limits.repeated_error_limit,
            strict=self.spec.strict,
            can_rescue=bool(self.spec.supervisor) or len(self.spec.operators) > 1,
        )

    async def _iteration(self, state: _State) -> bool:
        """Operate, then validate; True when every criterion passed."""
        execution = await self._step("agent_execution", state.iteration, self._execute, state)
        reply = Reply.model_validate(execution)
        state.reply = reply.text or state.reply
        if not reply.ok:
            state.attempts.append(Attempt(signature=f"error: {reply.error}", best_score=0.0))
            state.failures_in_row += 1
            return False
        scores = await self._scores("validation", state, self._validate)
        if self._uncertain(scores) and self.spec.helper:
            scores = await self._scores("helper", state, self._verify)
        for round_number in range(1, self.spec.limits.interrogation_rounds + 1):
            if self._all_pass(scores):
                break
            result = await self._step(
                "interrogation", state.iteration, self._interrogate, state, round_number
            )
            scores = state.scores = [CriterionScore.model_validate(s) for s in result["scores"]]
            if result["gave_up"]:
                break
        if self._all_pass(scores):
            return True
        failing = [s for s in scores if s.level != "pass"]
        signature = " | ".join(f"{s.criterion}: {'; '.join(s.failed_details)}" for s in failing)
        state.attempts.append(Attempt(signature, max(s.score for s in failing)))
        state.failures_in_row += 1
        return False

    async def _scores(
        self, phase: Phase, state: _State, work: Callable[..., Awaitable[dict[str, Any]]]
    ) -> list[CriterionScore]:
        result = await self._step(phase, state.iteration, work, state)
        state.scores = [CriterionScore.model_validate(s) for s in result["scores"]]
        return state.scores

    def _all_pass(self, scores: Sequence[CriterionScore]) -> bool:
        return all(s.level == "pass" for s in scores)

    def _uncertain(self, scores: Sequence[CriterionScore]) -> bool:
        return any(s.level == "uncertain" for s in scores)

    async def _prepare_next(self, state: _State, choice: RetryChoice) -> None:
        state.approach = choice.approach
        if choice.approach != "rescue":
            return
        decision = RescueDecision.model_validate(
            await self._step("rescue", state.iteration, self._rescue, state)
        )
        await self._emit(
            RescueDecided(
                iteration=state.iteration,
                action=decision.action,
                analysis=decision.analysis,
                operator=decision.new_operator or "",
            ),
            once=True,
        )
        state.failures_in_row = 0
        state.approach = "first"
        if decision.action == "ADJUST_PLAN" and decision.adjusted_plan is not None:
            state.plan = decision.adjusted_plan
        elif decision.action == "CHANGE_AGENT":
            state.operator = self._operator_named(decision.new_operator or "", avoid=state.operator)
        elif decision.action == "TAKEOVER":
            state.operator = "supervisor"
            state.reply = decision.direct_result or state.reply

    async def _finish(self, status: TaskStatus, state: _State, reason: str) -> TaskOutcome:
        output = state.reply
        if not self.journal.replay:
            await self._emit(
                TaskFinished(
                    status=status, output=output, iterations=state.iteration, reason=reason
                )
            )
        return TaskOutcome(
            task_id=self.task_id,
            status=status,
            output=output,
            iterations=state.iteration,
            supervisor_calls=self.desk.supervisor_calls,
            model_calls=self.desk.live_sends,
            replayed_steps=min(self.journal.step, self.journal.completed_steps),
        )

    # -- journaled steps ------------------------------------------------------------------------

    async def _step(
        self,
        phase: Phase,
        iteration: int,
        work: Callable[..., Awaitable[dict[str, Any]]],
        *args: Any,
    ) -> dict[str, Any]:
        number, journaled = self.journal.next_step(phase)
        if journaled is not None:
            self._adopt_sessions(journaled)
            self._count_supervisor_calls(journaled)
            return journaled
        self._phase = (phase, iteration)
        self.delegation.step = number
        await self._emit(PhaseStarted(phase=phase, iteration=iteration, step=number))
        result = await work(*args)
        result["sessions"] = dict(self.desk.sessions)
        ok = bool(result.get("ok", True))
        await self._emit(
            PhaseFinished(
                phase=phase,
                iteration=iteration,
                step=number,
                ok=ok,
                summary=str(result.get("summary", "")),
                result=result,
            )
        )
        return result

    def _adopt_sessions(self, result: dict[str, Any]) -> None:
        self.desk.sessions.update(result.get("sessions", {}))

    def _count_supervisor_calls(self, result: dict[str, Any]) -> None:
        self.desk.supervisor_calls += int(result.get("supervisor_calls", 0))

    async def _emit(self, body: EventBody, once: bool = False) -> None:
        if self.journal.replay or (once and self.journal.already_recorded(body)):
            return
        await self.host.record(self.task_id, body)

    # -- planning -------------------------------------------------------------------------------

    async def _plan(self, complexity: Complexity) -> Plan:
        aware = self.spec.context == "aware"
        context = prompts.task_context(self.spec, str(self.workspace), aware)
        default = next(iter(self.spec.operators), "")
        minimal = complexity == "trivial"
        fallback = direct_plan(
            self.spec, default, prompts.operator_prompt(self.spec, context, minimal)
        )
        if not (needs_plan(complexity) and self.spec.supervisor):
            return fallback
        result = await self._step("planning", 0, self._make_plan, context, fallback)
        return Plan.model_validate(result["plan"])

    async def _make_plan(self, context: dict[str, Any], fallback: Plan) -> dict[str, Any]:
        text = prompts.planning_prompt(self.spec, context, list(self.spec.operators))
        reply = await self._ask_supervisor(text, PLAN_SCHEMA)
        try:
            plan = parse_reply(reply.text, Plan)
            summary = (
                f"planned {len(plan.steps)} step(s) for {plan.operator or 'the default operator'}"
            )
        except ReplyNotUnderstood as error:
            plan, summary = (
                fallback,
                f"the plan was not usable ({error}); going straight to the operator",
            )
        return {"plan": plan.model_dump(mode="json"), "summary": summary, "supervisor_calls": 1}

    def _operator_named(self, name: str, avoid: str = "") -> str:
        if name in self.spec.operators and name != avoid:
            return name
        others = [n for n in self.spec.operators if n != avoid]
        return next(iter(others or self.spec.operators), "")

    # -- execution ------------------------------------------------------------------------------

    async def _execute(self, state: _State) -> dict[str, Any]:
        if self.spec.team and state.operator != "supervisor":
            return await self._execute_with_team(state)
        if state.approach != "first":
            failing = [s for s in state.scores if s.level != "pass"]
            repeated = state.attempts[-1].signature[:200] if state.attempts else ""
            text = prompts.fix_prompt(failing, state.approach, repeated)
            reply = await self._attempts(state, text if failing else state.plan.operator_prompt)
        else:
            reply = await self._plan_steps(state)
        summary = reply.error or f"{len(reply.text)} characters of answer"
        return {**reply.model_dump(), "ok": reply.ok, "summary": summary}

    async def _plan_steps(self, state: _State) -> Reply:
        """The plan's steps in order; a step that still fails after its fallback ends the run."""
        if not state.plan.steps:
            return await self._attempts(state, state.plan.operator_prompt)
        reply = Reply()
        for index, step in enumerate(state.plan.steps):
            text = prompts.step_prompt(state.plan, step, first=index == 0)
            fallback = (
                prompts.step_prompt(state.plan, step, first=index == 0, fallback=True)
                if step.fallback
                else None
            )
            reply = await self._attempts(state, text, fallback)
            if not reply.ok:
                break
        return reply

    async def _attempts(self, state: _State, text: str, fallback: str | None = None) -> Reply:
        """Send a step, retrying with growing timeouts, then its fallback once."""
        timeouts = step_timeouts(self.spec.limits.step_timeouts, state.plan.timeout_seconds)
        retries = min(state.plan.max_retries, self.spec.limits.max_retries)
        reply = Reply(ok=False, error="not attempted")
        for attempt in range(retries + 1):
            timeout = timeouts[min(attempt, len(timeouts) - 1)]
            reply = await self._consult_operator(state, text, timeout)
            if reply.ok:
                return reply
        if fallback:
            return await self._consult_operator(state, fallback, timeouts[-1])
        return reply

    async def _consult_operator(self, state: _State, text: str, timeout: float) -> Reply:
        if state.operator == "supervisor":  # it took over
            reply = await self._ask_supervisor(text, timeout_s=timeout)
        else:
            reply = await self.desk.consult("operator", state.operator, text, timeout_s=timeout)
        if reply.ok and re.search(r"STATUS:\s*failed", reply.text, re.I):
            return reply.model_copy(
                update={"ok": False, "error": reply.text.split("STATUS:")[-1].strip()}
            )
        return reply

    async def _execute_with_team(self, state: _State) -> dict[str, Any]:
        team = self._supervisor_tools()
        assert team is not None
        failing = [s for s in state.scores if s.level != "pass"]
        plan = state.plan if state.plan.steps else None
        text = (
            prompts.fix_prompt(failing, state.approach)
            if failing and state.approach != "first"
            else prompts.team_prompt(self.spec, team.workers, plan)
        )
        reply = await self._ask_supervisor(text)
        summary = f"delegated; {len(team.answers)} worker answer(s)"
        return {**reply.model_dump(), "summary": summary, "supervisor_calls": 1}

    def _supervisor_tools(self) -> TeamTools | None:
        """The team, when the task has one; built once, as the supervisor's session is opened
        with its tools (whether it plans, coordinates, rescues or takes over)."""
        if self.spec.team and self._team is None:
            self._team = self.delegation.team(self.spec.team)
        return self._team

    async def _ask_supervisor(
        self, text: str, schema: dict[str, Any] | None = None, timeout_s: float | None = None
    ) -> Reply:
        tools = self._supervisor_tools()
        return await self.desk.consult(
            "supervisor", "supervisor", text, schema, timeout_s, extra_tools=tools
        )

    # -- review (see review.py) ----------------------------------------------------------------

    async def _validate(self, state: _State) -> dict[str, Any]:
        return await self.review.validate(state.reply, state.iteration)

    async def _verify(self, state: _State) -> dict[str, Any]:
        return await self.review.verify(state.scores, state.reply, state.iteration)

    async def _interrogate(self, state: _State, round_number: int) -> dict[str, Any]:
        async def ask_operator(text: str) -> Reply:
            return await self._consult_operator(state, text, self.spec.limits.step_timeouts[-1])

        return await self.review.interrogate(
            state.scores, state.reply, state.iteration, round_number, ask_operator
        )

    # -- rescue ---------------------------------------------------------------------------------

    async def _rescue(self, state: _State) -> dict[str, Any]:
        failures = [a.signature for a in state.attempts[-3:]]
        if not self.spec.supervisor:
            other = self._operator_named("", avoid=state.operator)
            decision = RescueDecision(
                analysis="no supervisor: another operator takes over",
                action="CHANGE_AGENT",
                new_operator=other,
            )
            return {**decision.model_dump(mode="json"), "summary": decision.analysis}
        text = prompts.rescue_prompt(self.spec, state.plan, failures, list(self.spec.operators))
        reply = await self._ask_supervisor(text, RESCUE_SCHEMA)
        try:
            decision = parse_reply(reply.text, RescueDecision)
        except ReplyNotUnderstood as error:
            decision = RescueDecision(
                analysis=f"the rescue answer was not usable ({error}); the supervisor takes over",
                action="TAKEOVER",
            )
        return {
            **decision.model_dump(mode="json"),
            "summary": f"{decision.action}: {decision.analysis}",
            "supervisor_calls": 1,
        }

    # -- waiting for people ---------------------------------------------------------------------

    def _watch_approvals(self) -> None:
        """A tool call of this task that waits in the approval inbox is a phase of its own."""
        if self.journal.replay:
            return
        loop = asyncio.get_running_loop()

        def on_event(event: Event) -> None:
            if event.session_id not in self.desk.sessions.values():
                return
            iteration = self._phase[1]
            if isinstance(event.body, ApprovalRequested):
                body: EventBody = PhaseStarted(
                    phase="waiting_for_approval", iteration=iteration, label=event.body.tool
                )
            elif isinstance(event.body, ApprovalResolved):
                body = PhaseFinished(
                    phase="waiting_for_approval", iteration=iteration, summary=event.body.status
                )
            else:
                return
            loop.call_soon_threadsafe(
                lambda: self._own(loop.create_task(self.host.record(self.task_id, body)))
            )

        self._unsubscribe = self.host.bus.subscribe(on_event)

    def _own(self, task: asyncio.Task[Any] | asyncio.Future[Any]) -> None:
        self._background.add(task)
        task.add_done_callback(self._background.discard)
