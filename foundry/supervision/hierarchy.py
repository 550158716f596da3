"""The approval hierarchy every tool call passes: L0 policy, grants, L1 supervisor, L2 human.

A grant only saves a question: it applies to a call the policy sends to the supervisor or a
person, never to a path outside the workspace (or one that cannot be judged), never to a
call whose parameters read like a prompt injection, and only to the agent it was made for (its
file, not merely its name). Such a call is not settled by an allow rule
either: it goes to the supervisor if there is one, else to a person. A call with a concern (a
changed or flagged tool definition, untrusted content taken in before it: concerns.py) skips the
rules that let calls through, the grants and the supervisor and asks a person. In shadow mode the
supervisor also judges, unseen and in the background, the calls a person decides (shadow.py). A
call a person approves with edited parameters is decided again by the same policy and injection
check before it runs (edits.py). Every decision is traced: which level took it, who, why, how
confidently and how fast.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from foundry.agent.models import PolicyCondition, PolicyConfig
from foundry.llm.base import ToolCall
from foundry.session.events import ShadowVerdictGiven
from foundry.session.gate import AskUser, GateDecision
from foundry.store import ApprovalRecord, GrantRecord, Store
from foundry.supervision.concerns import Concern, ConcernSource, concerns_of, describe
from foundry.supervision.edits import EditJudge
from foundry.supervision.inbox import POLL_S, HumanInbox, Notify
from foundry.supervision.injection import InjectionSignal, find_injection
from foundry.supervision.l1 import CallUnderReview, L1Supervisor, Verdict, is_judgement
from foundry.supervision.on_loop import judged_on_loop
from foundry.supervision.paths import CallPaths, ServerFolders, ServerPlaces
from foundry.supervision.policy import (
    PolicyDecision,
    PolicyEngine,
    ToolDefinition,
    conditions_hold,
)
from foundry.supervision.redaction import redact_params
from foundry.supervision.shadow import (
    L1_NAME,
    ShadowReview,
    ShadowReviews,
    ShadowStart,
    ShadowVerdict,
)
from foundry.supervision.tracing import KeepTrace, ResolvedLevel, later_trace, store_trace

# the input schema a tool declares, by its name; None when the tool is not known
ToolSchemas = Callable[[str], Mapping[str, Any] | None]
# what a trusted server listed of a tool (its schema and annotations), by its name
ToolDefinitions = Callable[[str], ToolDefinition | None]
RouteLevel = Literal["L0", "grant", "L1", "human"]
RouteOutcome = Literal["allow", "deny", "human"]
INJECTION_RULE_PREFIX = "injection:"  # the policy_rule of a call an injection signal sent on


@dataclass(frozen=True)
class _Judgement:
    policy: PolicyDecision
    injection: InjectionSignal | None = None
    grant: GrantRecord | None = None
    why_no_grant: str | None = None  # when grants name the tool but cannot reach the call

    @property
    def settled(self) -> bool:
        """Whether the rules settle the call (a grant is not looked for)."""
        return self.policy.action in ("allow", "deny") or self.injection is not None


class Route(BaseModel, frozen=True):
    """Where one tool call goes: the policy's decision (adjusted for injections and grants that
    do not reach), the grant that covers it, or the L1 supervisor's verdict."""

    policy: PolicyDecision
    grant: GrantRecord | None = None
    verdict: Verdict | None = None
    injection: bool = False  # the parameters read like a prompt injection
    concerns: tuple[Concern, ...] = ()  # why a person decides whatever the rules say

    @property
    def level(self) -> RouteLevel:
        if self.grant is not None:
            return "grant"
        if self.verdict is not None:
            return "human" if self.verdict.decision == "escalate" else "L1"
        return "L0" if self.policy.action in ("allow", "deny") else "human"

    @property
    def outcome(self) -> RouteOutcome:
        if self.level == "grant":
            return "allow"
        if self.level == "L1" and self.verdict is not None:
            return "allow" if self.verdict.decision == "approve" else "deny"
        if self.level == "L0":
            return "allow" if self.policy.action == "allow" else "deny"
        return "human"

    @property
    def reason(self) -> str:
        if self.grant is not None:
            return f"granted by {self.grant.granted_by} until {self.grant.expires_at:%H:%M:%S}"
        return self.verdict.reasoning if self.verdict is not None else self.policy.reason


class SupervisedGate:
    """An ApprovalGate that runs the hierarchy for one agent in one session.

    `agent_path` is the agent's identity, the resolved path of its file (`trust_key`): a grant
    bound to an agent file covers this agent only if it is that file (None: its file unknown,
    so only grants by name cover it). `project_root` is the workspace; `server_folders` maps
    each MCP server to the folder it runs in (None: unknown), so that a relative path is judged
    where the server will open it; `tool_schemas` gives a tool's input schema, so that a call
    repeated with fields the tool does not read is still seen as a loop; `tool_definitions`
    gives that and the annotations its server declared, which rules with `hints` read.
    `shadows` owns the shadow reviews (the session's, shared by the gates it is given over its
    life; else the gate's own, ended by `aclose`).
    """

    def __init__(
        self,
        store: Store,
        config: PolicyConfig,
        agent_id: str,
        session_id: str,
        project_root: Path,
        notify: Notify,
        supervisor: L1Supervisor | None = None,
        ask: AskUser | None = None,
        expose_content: bool = False,
        poll_s: float = POLL_S,
        server_folders: ServerPlaces | None = None,
        policy_engine: PolicyEngine | None = None,
        keep_trace: KeepTrace | None = None,
        tool_schemas: ToolSchemas | None = None,
        agent_path: str | None = None,
        tool_definitions: ToolDefinitions | None = None,
        concerns: Sequence[ConcernSource] = (),
        shadows: ShadowReviews | None = None,
    ) -> None:
        self._store = store
        self._shadows = shadows if shadows is not None else ShadowReviews()
        self._concern_sources = list(concerns)
        self._schemas = tool_schemas
        self._definitions = tool_definitions
        self._keep_trace = keep_trace  # None: each trace is stored before the decision returns
        self._config = config
        self._policy = policy_engine or PolicyEngine(
            config, project_root, server_folders=server_folders
        )
        self._root = project_root
        self._server_folders = server_folders
        self._folders = ServerFolders(project_root, server_folders)
        self._agent = agent_id
        self._agent_path = agent_path
        self._session = session_id
        self._notify = notify
        self._supervisor = supervisor
        self._expose_content = expose_content
        self._inbox = HumanInbox(
            store,
            agent_id,
            session_id,
            notify,
            timeout_s=float(config.approval_timeout_seconds),
            on_timeout=config.on_timeout,
            ask=ask,
            poll_s=poll_s,
            agent_path=agent_path,
            edits=EditJudge(self._policy, agent_id),
        )

    async def aclose(self) -> None:
        """Cancel the shadow reviews still running (see shadow.py)."""
        await self._shadows.aclose()

    def add_concerns(self, source: ConcernSource) -> None:
        """Hold the calls `source` has concerns about for a person (see concerns.py)."""
        self._concern_sources.append(source)

    async def review(self, call: ToolCall, permission_required: bool) -> GateDecision:
        started = time.perf_counter()
        route = await self.route(call)
        policy, verdict = route.policy, route.verdict
        if route.level == "L0":
            return await self._by_policy(call, policy, started)
        if route.grant is not None:
            by = f"grant:{route.grant.id}"
            await self._trace(call, True, "grant", by, policy, route.reason, None, started)
            return GateDecision(allowed=True, by=by, reason=route.reason)
        if route.level == "L1" and verdict is not None:
            allowed = route.outcome == "allow"
            by = "agent:supervisor"
            confidence = verdict.confidence
            await self._trace(
                call, allowed, "supervisor", by, policy, route.reason, confidence, started
            )
            return GateDecision(allowed=allowed, by=by, reason=route.reason, confidence=confidence)
        if verdict is not None and self._supervisor and not self._supervisor.able_to_judge:
            await self._trace_skipped_l1(call, policy, verdict)
        decision = await self._ask_human(call, route)
        if route.concerns and decision.allowed and decision.arguments is None:
            for source in self._concern_sources:
                source.accepted(call, route.concerns)
        return decision

    async def route(self, call: ToolCall) -> Route:
        """Where the hierarchy sends `call`, decided without recording or running anything: by
        the policy, a grant, the L1 supervisor, or on to a person (`foundry policy check`)."""
        judged = await self._judged(call, self._definition(call.name))
        policy = judged.policy
        if policy.action == "deny":
            return Route(policy=policy)
        concerns = concerns_of(self._concern_sources, call)
        if concerns:
            reason = f"{policy.reason}; but {describe(concerns)}, so a person decides"
            policy = policy.model_copy(update={"action": "human", "reason": reason})
            return Route(policy=policy, injection=judged.injection is not None, concerns=concerns)
        injection = judged.injection is not None
        if judged.injection is not None:
            policy = self._past_rules_and_grants(policy, judged.injection)
        elif policy.action == "allow":
            return Route(policy=policy)
        elif judged.grant is not None:
            return Route(policy=policy, grant=judged.grant)
        elif judged.why_no_grant is not None:
            policy = policy.model_copy(update={"reason": f"{policy.reason}; {judged.why_no_grant}"})
        verdict = await self._supervise(call, policy)
        return Route(policy=policy, verdict=verdict, injection=injection)

    async def _by_policy(
        self, call: ToolCall, policy: PolicyDecision, started: float
    ) -> GateDecision:
        allowed = policy.action == "allow"
        by = f"policy:{policy.rule or 'default-deny'}"
        await self._trace(call, allowed, "policy", by, policy, policy.reason, None, started)
        return GateDecision(allowed=allowed, by=by, reason=policy.reason)

    def _past_rules_and_grants(
        self, policy: PolicyDecision, injection: InjectionSignal
    ) -> PolicyDecision:
        """Where a call whose parameters read like an injection goes instead: the supervisor
        if there is one (it escalates such calls to a person), else straight to a person. The
        signal, not the rule that matched, is what sent it there (`injection:role-claim`)."""
        to_supervisor = self._supervisor is not None and policy.action != "human"
        reason = (
            f"{policy.reason}; but the parameters read like a prompt injection "
            f"({injection.describe()}), so no rule or grant settles it"
        )
        action = "supervisor" if to_supervisor else "human"
        rule = f"{INJECTION_RULE_PREFIX}{injection.signal}"
        return policy.model_copy(update={"action": action, "reason": reason, "rule": rule})

    def _definition(self, name: str) -> ToolDefinition | None:
        if self._definitions is not None:
            return self._definitions(name)
        schema = self._schemas(name) if self._schemas is not None else None
        return None if schema is None else ToolDefinition(input_schema=dict(schema))

    async def _judged(self, call: ToolCall, tool: ToolDefinition | None) -> _Judgement:
        """`_judge`: the rules on the loop when that cannot freeze it (see on_loop), the grants
        (in the store) and the rest on a worker thread, in one hop."""
        if not judged_on_loop(call.arguments):
            return await asyncio.to_thread(self._judge, call, tool)
        judged = self._by_rules(call, tool)
        if judged.settled:
            return judged
        return await asyncio.to_thread(self._with_grant, judged, call)

    def _judge(self, call: ToolCall, tool: ToolDefinition | None) -> _Judgement:
        """The L0 decision, the injection signal and, for a call the rules do not settle, the
        grant that covers it (blocking: it reads the filesystem and the store)."""
        judged = self._by_rules(call, tool)
        return judged if judged.settled else self._with_grant(judged, call)

    def _by_rules(self, call: ToolCall, tool: ToolDefinition | None) -> _Judgement:
        """The L0 decision and, unless it denies, the injection signal (blocking: it resolves
        the call's paths)."""
        policy = self._policy.decide(self._agent, call.name, call.arguments, definition=tool)
        if policy.action == "deny":
            return _Judgement(policy)
        return _Judgement(policy, find_injection(call.arguments))

    def _with_grant(self, judged: _Judgement, call: ToolCall) -> _Judgement:
        """`judged` with the active grant that covers the call, scopes included; or with why
        the grants that name the tool do not reach it when that is the workspace limit
        (blocking: it reads the store and the filesystem)."""
        grants = self._store.grants.covering(self._agent, call.name, agent_path=self._agent_path)
        if not grants:
            return judged
        paths = self._folders.paths_of(call.name, call.arguments)
        workspace = self._folders.folder(".")
        outside = paths.describe_outside(workspace) if workspace else "the workspace is unknown"
        if outside is not None:
            return replace(
                judged, why_no_grant=f"no grant reaches outside the workspace: {outside}"
            )
        return replace(
            judged, grant=next((g for g in grants if self._in_scope(g, call, paths)), None)
        )

    def _in_scope(self, grant: GrantRecord, call: ToolCall, paths: CallPaths) -> bool:
        """Whether the call lies in the grant's folder (if it has one) and meets its conditions."""
        if grant.path_scope is not None:
            folder = self._folders.folder(grant.path_scope)
            if folder is None or not paths.all_within(folder):
                return False
        if not grant.param_scope:
            return True
        conditions = [PolicyCondition.model_validate(item) for item in grant.param_scope]
        return conditions_hold(
            conditions, call.arguments, self._root, call.name, self._server_folders
        )

    async def _supervise(self, call: ToolCall, policy: PolicyDecision) -> Verdict | None:
        if policy.action != "supervisor" or self._supervisor is None:
            return None
        return await self._supervisor.review(await self._view(call))

    async def _trace_skipped_l1(
        self, call: ToolCall, policy: PolicyDecision, verdict: Verdict
    ) -> None:
        """An L1 that cannot judge (see l1.py) was not asked: say so in the audit trail."""
        skipped = later_trace(
            session_id=self._session,
            agent_id=self._agent,
            tool=call.name,
            params=call.arguments,
            decision="escalate",
            level="supervisor",
            resolved_by="supervisor:skipped",
            policy_rule=policy.rule,
            reasoning=verdict.reasoning,
        )
        await store_trace(self._store, skipped, self._keep_trace)

    async def _view(self, call: ToolCall) -> CallUnderReview:
        return await asyncio.to_thread(self._view_of, call)

    def _view_of(self, call: ToolCall) -> CallUnderReview:
        """What the L1 supervisor is shown (blocking: the store, the filesystem, the detector)."""
        traces = self._store.traces.list(self._agent, 10)
        grants = [
            grant
            for grant in self._store.grants.active()
            if grant.covers_agent(self._agent, self._agent_path)
        ]
        return CallUnderReview(
            agent_id=self._agent,
            tool=call.name,
            params=redact_params(call.arguments, self._expose_content),
            injection_risk=find_injection(call.arguments) is not None,
            outside_project=self.touches_outside(call),
            recent_calls=tuple(f"{t.tool}: {t.decision}" for t in traces),
            active_grants=tuple(f"{g.agent_glob} {g.tool_glob}" for g in grants),
        )

    def touches_outside(self, call: ToolCall) -> bool:
        """Whether any path the call names lies outside the workspace or cannot be judged."""
        workspace = self._folders.folder(".")
        paths = self._folders.paths_of(call.name, call.arguments)
        return workspace is None or not paths.all_within(workspace)

    # -- L2: a human in the approval inbox ------------------------------------------------------

    async def _ask_human(self, call: ToolCall, route: Route) -> GateDecision:
        verdict = route.verdict
        return await self._inbox.decide(
            call,
            level="L1" if verdict is not None else "L0",
            reason=verdict.reasoning if verdict else route.policy.reason,
            policy_rule=route.policy.rule,
            verdict=verdict.model_dump() if verdict else None,
            injection=route.injection,
            concerns=route.concerns,
            shadow=self._shadow_start(call, route),
        )

    # -- shadow mode: the supervisor's unseen verdict on a call a person decides ----------------

    def _shadow_start(self, call: ToolCall, route: Route) -> ShadowStart | None:
        """How the call's shadow review starts once its approval exists: in shadow mode, with a
        supervisor able to judge, its review in the background; or, when it already escalated
        the call itself, that verdict (it is not asked again)."""
        supervisor = self._supervisor
        if not self._config.shadow_mode or supervisor is None or not supervisor.able_to_judge:
            return None
        verdict = route.verdict
        if verdict is None:
            return lambda approval: self._start_review(call, approval)
        if verdict.decision != "escalate" or not is_judgement(verdict):
            return None
        seen = ShadowVerdict(L1_NAME, "escalate", verdict.confidence, verdict.reasoning, seen=True)
        return lambda approval: self._keep_seen(approval, seen)

    def _start_review(self, call: ToolCall, approval: ApprovalRecord) -> ShadowReview:
        review = ShadowReview()
        self._shadows.start(review, self._shadow_review(call, approval, review))
        return review

    def _keep_seen(self, approval: ApprovalRecord, seen: ShadowVerdict) -> ShadowReview:
        review = ShadowReview(seen)
        kept = asyncio.to_thread(
            self._store.approvals.keep_shadow_verdict, approval.id, seen.record()
        )
        self._shadows.start(review, kept)
        return review

    async def _shadow_review(
        self, call: ToolCall, approval: ApprovalRecord, review: ShadowReview
    ) -> None:
        """Ask the supervisor, keep its verdict on the approval and record it; raises (and
        keeps nothing) when the model fails. A call it never decides alone costs no model call
        (0 s, 0 tokens)."""
        assert self._supervisor is not None
        started = time.perf_counter()
        judged = await self._supervisor.judge(await self._view(call))
        given = judged.verdict
        verdict = ShadowVerdict(
            L1_NAME,
            given.decision,
            given.confidence,
            given.reasoning,
            seconds=time.perf_counter() - started if judged.asked else 0.0,
            tokens=judged.tokens,
        )
        decided = review.give(verdict)
        await asyncio.to_thread(
            self._store.approvals.keep_shadow_verdict, approval.id, verdict.record()
        )
        await self._notify(
            ShadowVerdictGiven(
                approval_id=approval.id,
                tool=call.name,
                supervisor=verdict.supervisor,
                decision=verdict.decision,
                confidence=verdict.confidence,
                reasoning=verdict.reasoning,
                duration_s=verdict.seconds,
                person=decided.status if decided is not None else None,
                edited=decided.edited if decided is not None else False,
            )
        )

    async def _trace(
        self,
        call: ToolCall,
        allowed: bool,
        level: ResolvedLevel,
        by: str,
        policy: PolicyDecision,
        reasoning: str,
        confidence: float | None,
        started: float,
    ) -> None:
        trace = later_trace(
            session_id=self._session,
            agent_id=self._agent,
            tool=call.name,
            params=call.arguments,
            decision="allow" if allowed else "deny",
            level=level,
            resolved_by=by,
            policy_rule=policy.rule,
            reasoning=reasoning,
            confidence=confidence,
            decided_ms=(time.perf_counter() - started) * 1000,
        )
        await store_trace(self._store, trace, self._keep_trace)


def policy_entry_config(supervisors: list[Any]) -> PolicyConfig | None:
    """The config of the agent's first enabled policy supervisor, if it has one."""
    for entry in supervisors:
        if getattr(entry, "type", None) == "policy" and entry.enabled:
            return entry.config
    return None
