"""The approval hierarchy every tool call passes: L0 policy, grants, L1 supervisor, L2 human.

Every decision is traced: which level took it, who, why, how confidently and how fast.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from foundry.agent.models import PolicyCondition, PolicyConfig
from foundry.llm.base import ToolCall
from foundry.session.gate import AskUser, GateDecision
from foundry.store import GrantRecord, Store, TraceRecord
from foundry.supervision.inbox import POLL_S, HumanInbox, Notify
from foundry.supervision.l1 import CallUnderReview, L1Supervisor, Verdict
from foundry.supervision.policy import (
    PolicyDecision,
    PolicyEngine,
    conditions_hold,
    path_within,
)
from foundry.supervision.redaction import injection_risk, redact_params


class SupervisedGate:
    """An ApprovalGate that runs the hierarchy for one agent in one session."""

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
    ) -> None:
        self._store = store
        self._config = config
        self._policy = PolicyEngine(config, project_root)
        self._root = project_root
        self._agent = agent_id
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
        )

    async def review(self, call: ToolCall, permission_required: bool) -> GateDecision:
        started = time.perf_counter()
        policy = self._policy.decide(self._agent, call.name, call.arguments)
        if policy.action in ("allow", "deny"):
            allowed = policy.action == "allow"
            by = f"policy:{policy.rule or 'default-deny'}"
            await self._trace(call, allowed, "policy", by, policy, policy.reason, None, started)
            return GateDecision(allowed=allowed, by=by, reason=policy.reason)
        grant = await self._grant_for(call)
        if grant is not None:
            by = f"grant:{grant.id}"
            reason = f"granted by {grant.granted_by} until {grant.expires_at:%H:%M:%S}"
            await self._trace(call, True, "grant", by, policy, reason, None, started)
            return GateDecision(allowed=True, by=by, reason=reason)
        verdict = await self._supervise(call, policy)
        if verdict is not None and verdict.decision != "escalate":
            allowed = verdict.decision == "approve"
            await self._trace(
                call,
                allowed,
                "supervisor",
                "agent:supervisor",
                policy,
                verdict.reasoning,
                verdict.confidence,
                started,
            )
            return GateDecision(allowed=allowed, by="agent:supervisor", reason=verdict.reasoning)
        return await self._ask_human(call, policy, verdict, started)

    async def _grant_for(self, call: ToolCall) -> GrantRecord | None:
        """An active grant that covers this call, parameter scope included."""
        grants = await asyncio.to_thread(self._store.grants.covering, self._agent, call.name)
        return next((grant for grant in grants if self._in_scope(grant, call)), None)

    def _in_scope(self, grant: GrantRecord, call: ToolCall) -> bool:
        if not grant.param_scope:
            return True
        conditions = [PolicyCondition.model_validate(item) for item in grant.param_scope]
        return conditions_hold(conditions, call.arguments, self._root)

    async def _supervise(self, call: ToolCall, policy: PolicyDecision) -> Verdict | None:
        if policy.action != "supervisor" or self._supervisor is None:
            return None
        return await self._supervisor.review(await self._view(call))

    async def _view(self, call: ToolCall) -> CallUnderReview:
        traces = await asyncio.to_thread(self._store.traces.list, self._agent, 10)
        grants = await asyncio.to_thread(self._store.grants.active)
        return CallUnderReview(
            agent_id=self._agent,
            tool=call.name,
            params=redact_params(call.arguments, self._expose_content),
            injection_risk=injection_risk(call.arguments),
            outside_project=touches_outside(call.arguments, self._root),
            recent_calls=tuple(f"{t.tool}: {t.decision}" for t in traces),
            active_grants=tuple(f"{g.agent_glob} {g.tool_glob}" for g in grants),
        )

    # -- L2: a human in the approval inbox ------------------------------------------------------

    async def _ask_human(
        self, call: ToolCall, policy: PolicyDecision, verdict: Verdict | None, started: float
    ) -> GateDecision:
        return await self._inbox.decide(
            call,
            level="L1" if verdict is not None else "L0",
            reason=verdict.reasoning if verdict else policy.reason,
            policy_rule=policy.rule,
            verdict=verdict.model_dump() if verdict else None,
        )

    async def _trace(
        self,
        call: ToolCall,
        allowed: bool,
        level: str,
        by: str,
        policy: PolicyDecision,
        reasoning: str,
        confidence: float | None,
        started: float,
    ) -> None:
        trace = TraceRecord(
            session_id=self._session,
            agent_id=self._agent,
            tool=call.name,
            params=redact_params(call.arguments, self._expose_content),
            decision="allow" if allowed else "deny",
            resolved_level=level,
            resolved_by=by,
            policy_rule=policy.rule,
            reasoning=reasoning,
            confidence=confidence,
            decided_ms=(time.perf_counter() - started) * 1000,
        )
        await asyncio.to_thread(self._store.traces.add, trace)


PATH_KEYS = (
    "path",
    "file",
    "filename",
    "directory",
    "dir",
    "folder",
    "target",
    "source",
    "destination",
    "cwd",
)


def touches_outside(params: dict[str, Any], root: Path) -> bool:
    """Whether a path-like parameter points outside the project folder."""
    return any(
        isinstance(value, str)
        and (key in PATH_KEYS or key.endswith("_path"))
        and not path_within(value, ".", root)
        for key, value in params.items()
    )


def policy_entry_config(supervisors: list[Any]) -> PolicyConfig | None:
    """The config of the agent's first enabled policy supervisor, if it has one."""
    for entry in supervisors:
        if getattr(entry, "type", None) == "policy" and entry.enabled:
            return entry.config
    return None
