"""The task runner: plan, operate, validate, verify, interrogate, retry, rescue, delegate.

One run of a task file goes through numbered phases; each journaled phase keeps its result in
its `phase_finished` event, so a killed run resumes from its last completed phase and a finished
run can be replayed without calling any model (see journal.py).
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, Field

from foundry.orchestration import prompts
from foundry.orchestration.events import (
    AgentAsked,
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
    TaskStatus,
    WorkerFinished,
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
from foundry.orchestration.taskfile import Criterion, TaskFile, WorkerSpec
from foundry.orchestration.tools import CombinedTools, TeamTools, workspace_tools
from foundry.orchestration.validation import (
    Checker,
    CriterionScore,
    Evidence,
    ValidationCache,
    score,
    validate,
)
from foundry.session.events import ApprovalRequested, ApprovalResolved, Event, EventBody

HELPER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "criteria": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "criterion": {"type": "string"},
                    "verified": {"type": "boolean"},
                    "evidence": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {"file": {"type": "string"}, "quote": {"type": "string"}},
                            "required": ["file", "quote"],
                        },
                    },
                    "confidence": {"type": "number"},
                },
                "required": ["criterion", "verified", "evidence"],
            },
        }
    },
    "required": ["criteria"],
}
NOT_IMPLEMENTED = re.compile(r"\bnot (yet )?implemented\b|\bnot done\b|\bdid not\b", re.I)


def step_timeouts(cascade: Sequence[float], planned: float) -> list[float]:
    """The task's growing timeouts, shortened to the plan's estimate where it is shorter, but
    never below the first: the task file's limits are the ceiling, the plan cannot raise them."""
    ceiling = max(planned, cascade[0])
    return [min(timeout, ceiling) for timeout in cascade]


class SessionHost(Protocol):
    """What the runner needs of the engine (which provides exactly this)."""

    bus: Any

    async def open_session(
        self,
        agent_path: Path,
        model: str | None = None,
        settings_overrides: dict[str, Any] | None = None,
        ask: Any = None,
        title: str = "",
        extra_tools: Any = None,
        project_root: Path | None = None,
    ) -> str: ...

    async def reopen_session(
        self,
        session_id: str,
        ask: Any = None,
        history: list[Event] | None = None,
        extra_tools: Any = None,
        project_root: Path | None = None,
    ) -> Any: ...

    def is_open(self, session_id: str) -> bool: ...

    async def send(
        self, session_id: str, text: str, response_schema: dict[str, Any] | None = None
    ) -> Any: ...

    async def record(self, session_id: str, body: EventBody) -> Event: ...

    async def close_session(self, session_id: str) -> None: ...


class Reply(BaseModel):
    """An agent's answer to one message of the task."""

    text: str = ""
    ok: bool = True
    error: str = ""
    session_id: str = ""


class HelperVerdict(BaseModel):
    criterion: str
    verified: bool
    evidence: list[dict[str, str]] = Field(default_factory=list)
    confidence: float | None = None


class HelperAnswer(BaseModel):
    criteria: list[HelperVerdict] = Field(default_factory=list)


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
        self.ask = ask  # who approves tool calls that need a person (None: the approval inbox)
        self.task = task
        self.spec = task.spec
        self.task_id = task_id
        self.journal = journal
        self.workspace = task.workspace
        self.checker = Checker(self.workspace)
        self.cache = ValidationCache()
        self.sessions: dict[str, str] = {}  # role:agent -> chat session id
        self.live_sends = 0
        self.supervisor_calls = 0
        self._started = time.monotonic()
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
                "interrogation", state.iteration, self._interrogate, state, scores, round_number
            )
            scores = [CriterionScore.model_validate(s) for s in result["scores"]]
            if result["gave_up"]:
                break
        state.scores = scores
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
            supervisor_calls=self.supervisor_calls,
            model_calls=self.live_sends,
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
        await self._emit(PhaseStarted(phase=phase, iteration=iteration, step=number))
        result = await work(*args)
        result["sessions"] = dict(self.sessions)
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
        self.sessions.update(result.get("sessions", {}))

    def _count_supervisor_calls(self, result: dict[str, Any]) -> None:
        self.supervisor_calls += int(result.get("supervisor_calls", 0))

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
        reply = await self._consult("supervisor", "supervisor", text, PLAN_SCHEMA)
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
        role: Role = "supervisor" if state.operator == "supervisor" else "operator"
        reply = await self._consult(role, state.operator, text, timeout_s=timeout)
        if reply.ok and re.search(r"STATUS:\s*failed", reply.text, re.I):
            return reply.model_copy(
                update={"ok": False, "error": reply.text.split("STATUS:")[-1].strip()}
            )
        return reply

    async def _execute_with_team(self, state: _State) -> dict[str, Any]:
        if self._team is None:
            self._team = self._team_tools(self.spec.team)
        team = self._team
        failing = [s for s in state.scores if s.level != "pass"]
        plan = state.plan if state.plan.steps else None
        text = (
            prompts.fix_prompt(failing, state.approach)
            if failing and state.approach != "first"
            else prompts.team_prompt(self.spec, team.workers, plan)
        )
        reply = await self._consult("supervisor", "supervisor", text, extra_tools=team)
        summary = f"delegated; {len(team.answers)} worker answer(s)"
        return {**reply.model_dump(), "summary": summary, "supervisor_calls": 1}

    def _team_tools(self, workers: dict[str, WorkerSpec], prefix: str = "") -> TeamTools:
        async def run_worker(name: str, instructions: str) -> str:
            return await self._run_worker(f"{prefix}{name}", workers[name], instructions)

        return TeamTools({n: w.description for n, w in workers.items()}, run_worker)

    async def _run_worker(self, name: str, worker: WorkerSpec, instructions: str) -> str:
        journaled = self.journal.workers.get((name, instructions))
        if journaled is not None:
            return journaled
        started = time.monotonic() - self._started
        nested = self._team_tools(worker.workers, f"{name}/") if worker.workers else None
        reply = await self._consult(
            "worker",
            name,
            instructions,
            extra_tools=nested,
            agent_path=self.task.agent_path(worker.agent),
        )
        output = reply.text if reply.ok else f"{name} failed: {reply.error}"
        await self._emit(
            WorkerFinished(
                worker=name,
                instructions=instructions,
                output=output,
                session_id=reply.session_id,
                started_s=round(started, 3),
                finished_s=round(time.monotonic() - self._started, 3),
                error=None if reply.ok else reply.error,
            )
        )
        return output

    # -- validation, helper, interrogation ------------------------------------------------------

    async def _validate(self, state: _State) -> dict[str, Any]:
        scores = await validate(
            self.spec.criteria, self.checker, state.reply, self.spec.thresholds, self.cache
        )
        await self._emit_scores(scores, state.iteration, "checks")
        passed = sum(s.level == "pass" for s in scores)
        return {
            "scores": [s.model_dump(mode="json") for s in scores],
            "ok": passed == len(scores),
            "summary": f"{passed}/{len(scores)} pass, {sum(s.cached for s in scores)} cached",
        }

    async def _verify(self, state: _State) -> dict[str, Any]:
        doubtful = [s for s in state.scores if s.level == "uncertain"]
        text = prompts.helper_prompt(self.spec, state.reply, doubtful, self.checker.files)
        reply = await self._consult("helper", "helper", text, HELPER_SCHEMA)
        try:
            verdicts = {v.criterion: v for v in parse_reply(reply.text, HelperAnswer).criteria}
        except ReplyNotUnderstood:
            verdicts = {}
        rescored = []
        for current in state.scores:
            verdict = verdicts.get(current.criterion)
            cited = self._cited(verdict) if current.level == "uncertain" and verdict else []
            rescored.append(self._rescore(current, cited, state.reply) if cited else current)
        changed = [s for s in rescored if s not in state.scores]
        await self._emit_scores(changed, state.iteration, "helper")
        return {
            "scores": [s.model_dump(mode="json") for s in rescored],
            "summary": f"{len(changed)} criteria confirmed with evidence",
        }

    def _cited(self, verdict: HelperVerdict) -> list[Evidence]:
        """The helper's evidence that holds: quotes really found in the files it names."""
        found = []
        for item in verdict.evidence if verdict.verified else []:
            relative, quote = item.get("file", ""), item.get("quote", "").strip()
            if (
                quote
                and relative in self.checker.files
                and quote in (self.workspace / relative).read_text(errors="replace")
            ):
                found.append(
                    Evidence(
                        factor="code",
                        value=1.0,
                        detail=f"helper: quoted {relative}",
                        files=(relative,),
                    )
                )
        return found

    def _rescore(
        self, current: CriterionScore, extra: Sequence[Evidence], reply: str
    ) -> CriterionScore:
        kept = tuple(e for e in current.evidence if e.factor != "claim")
        return score(
            current.criterion,
            (*kept, *extra),
            current.factors.get("claim", 0) > 0,
            self.spec.thresholds,
        )

    async def _interrogate(
        self, state: _State, scores: list[CriterionScore], round_number: int
    ) -> dict[str, Any]:
        """Ask the operator where the failing criteria are met, then check the files it names."""
        failing = [s for s in scores if s.level != "pass"]
        self.checker.refresh()
        criteria = {c.text: c for c in self.spec.criteria}
        candidates = {s.criterion: self.checker.candidates(criteria[s.criterion]) for s in failing}
        rounds = self.spec.limits.interrogation_rounds
        text = prompts.interrogation_prompt(failing, candidates, round_number, rounds)
        reply = await self._consult_operator(state, text, self.spec.limits.step_timeouts[-1])
        named = [f for f in self.checker.files if f in reply.text]
        rescored = [
            await self._recheck(criteria[s.criterion], s, named, state.reply)
            if s.level != "pass" and named
            else s
            for s in scores
        ]
        changed = [s for s in rescored if s not in scores]
        await self._emit_scores(changed, state.iteration, "interrogation")
        return {
            "scores": [s.model_dump(mode="json") for s in rescored],
            "gave_up": bool(NOT_IMPLEMENTED.search(reply.text)) or not reply.ok,
            "summary": f"round {round_number}: the operator named {', '.join(named) or 'no file'}",
        }

    async def _recheck(
        self, criterion: Criterion, current: CriterionScore, named: list[str], reply: str
    ) -> CriterionScore:
        """Run the criterion's checks again on the named files; keep the better evidence."""
        checks = criterion.effective_checks()
        fresh = [await self.checker.run(check, reply, named) for check in checks]
        before = [e for e in current.evidence if e.factor != "claim"]
        best = [
            max(old, new, key=lambda e: e.value) for old, new in zip(before, fresh, strict=True)
        ]
        return score(
            current.criterion, best, current.factors.get("claim", 0) > 0, self.spec.thresholds
        )

    async def _emit_scores(self, scores: Sequence[CriterionScore], iteration: int, by: str) -> None:
        for s in scores:
            await self._emit(
                CriterionScored(
                    criterion=s.criterion,
                    iteration=iteration,
                    score=s.score,
                    level=s.level,
                    factors=s.factors,
                    evidence=tuple(e.detail for e in s.evidence),
                    cached=s.cached,
                    by=by,
                ),
                once=True,
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
        reply = await self._consult("supervisor", "supervisor", text, RESCUE_SCHEMA)
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

    # -- talking to agents ----------------------------------------------------------------------

    def _agent_path(self, name: str) -> Path:
        if name in ("supervisor", "helper"):
            relative = self.spec.supervisor if name == "supervisor" else self.spec.helper
            assert relative is not None
            return self.task.agent_path(relative)
        return self.task.agent_path(self.spec.operators[name])

    async def _consult(
        self,
        role: Role,
        name: str,
        text: str,
        schema: dict[str, Any] | None = None,
        timeout_s: float | None = None,
        extra_tools: Any = None,
        agent_path: Path | None = None,
    ) -> Reply:
        """Send one message to one of the task's agents, in its own session for this task."""
        path = agent_path or self._agent_path(name)
        tools = (
            workspace_tools(self.workspace)
            if extra_tools is None
            else CombinedTools(workspace_tools(self.workspace), extra_tools)
        )
        session_id = await self._session(f"{role}:{name}", path, tools)
        if role == "supervisor":
            self.supervisor_calls += 1
        self.live_sends += 1
        started = time.monotonic()
        label = path.name if name in ("supervisor", "helper") else name
        await self._emit(AgentAsked(role=role, agent=label, session_id=session_id))
        sending = asyncio.ensure_future(self.host.send(session_id, text, schema))
        done, _ = await asyncio.wait([sending], timeout=timeout_s)
        if not done:
            sending.cancel()  # the session keeps what was generated and ends the turn
        turn = (await asyncio.gather(sending, return_exceptions=True))[0]
        if isinstance(turn, BaseException):
            raise turn
        ended_by = turn.ended_by if done else "timeout"
        await self._emit(
            AgentConsulted(
                role=role,
                agent=label,
                session_id=session_id,
                prompt_chars=len(text),
                response_chars=len(turn.reply),
                model_calls=turn.model_calls,
                input_tokens=turn.input_tokens,
                output_tokens=turn.output_tokens,
                seconds=round(time.monotonic() - started, 3),
                ended_by=ended_by,
            )
        )
        if ended_by == "reply":
            return Reply(text=turn.reply, session_id=session_id)
        error = f"no answer within {timeout_s:g} s" if not done else turn.error
        error = error or f"the turn ended by {ended_by}"
        return Reply(text=turn.reply, ok=False, error=error, session_id=session_id)

    async def _session(self, key: str, path: Path, tools: Any) -> str:
        known = self.sessions.get(key)
        if known and self.host.is_open(known):
            return known
        if known:
            await self.host.reopen_session(
                known, ask=self.ask, extra_tools=tools, project_root=self.workspace
            )
            return known
        title = f"{self.spec.name} · {key.split(':')[0]} {key.split(':')[-1]}"
        session_id = await self.host.open_session(
            path, ask=self.ask, title=title, extra_tools=tools, project_root=self.workspace
        )
        self.sessions[key] = session_id
        return session_id

    # -- waiting for people ---------------------------------------------------------------------

    def _watch_approvals(self) -> None:
        """A tool call of this task that waits in the approval inbox is a phase of its own."""
        if self.journal.replay:
            return
        loop = asyncio.get_running_loop()

        def on_event(event: Event) -> None:
            if event.session_id not in self.sessions.values():
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
