"""The one way a decision becomes a trace (a row of TraceRecord's table): its parameters always
redacted."""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable
from typing import Any, Literal

from foundry.llm.base import ToolCall
from foundry.session.gate import ApprovalGate, GateDecision
from foundry.store import Row, Store, TraceRecord
from foundry.store.tables import new_id, utc_now
from foundry.supervision.redaction import redact_params

ResolvedLevel = Literal["policy", "grant", "supervisor", "human", "timeout"]
TracedDecision = Literal["allow", "deny", "escalate"]
TraceBuilder = Callable[[], Row]
# Queues a trace to be built and stored later, off the call's path (the engine journal's `keep`)
KeepTrace = Callable[[TraceBuilder], None]


async def store_trace(store: Store, build: TraceBuilder, keep: KeepTrace | None = None) -> None:
    """Build and store a trace before returning (in a worker thread), or hand `build` to
    `keep`: a record of the store's tables takes longer to make than the decision it traces."""
    if keep is None:
        await asyncio.to_thread(lambda: store.traces.insert([build()]))
    else:
        keep(build)


def later_trace(**fields: Any) -> TraceBuilder:
    """`decision_trace(**fields)`, made when it is stored."""
    return functools.partial(decision_trace, **fields)


def decision_trace(
    *,
    session_id: str | None,
    agent_id: str,
    tool: str,
    params: dict[str, Any],
    decision: TracedDecision,
    level: ResolvedLevel,
    resolved_by: str,
    policy_rule: str | None = None,
    approval_id: str | None = None,
    reasoning: str | None = None,
    confidence: float | None = None,
    decided_ms: float | None = None,
) -> Row:
    """The trace of one tool call's decision. `params` are the call's own; the trace keeps only
    their redacted form (content as length, sha256 and type), whatever a supervisor was shown,
    so the audit log never holds the content of a call. A row rather than a TraceRecord: making
    that takes longer than the decision it traces, and the gateway traces every call."""
    values = {
        "id": new_id(),
        "session_id": session_id,
        "agent_id": agent_id,
        "tool": tool,
        "params": redact_params(params),
        "decision": decision,
        "resolved_level": level,
        "resolved_by": resolved_by,
        "policy_rule": policy_rule,
        "approval_id": approval_id,
        "reasoning": reasoning,
        "confidence": confidence,
        "decided_ms": decided_ms,
        "created_at": utc_now(),
    }
    return Row(TraceRecord.__table__, values)  # type: ignore[attr-defined]


class TracedGate:
    """An approval gate whose every decision is traced like the hierarchy's: the agent's
    `toolPermission` gate, where a person answers at the terminal (y/N, `--yes`) or in the app."""

    def __init__(
        self,
        inner: ApprovalGate,
        store: Store,
        agent_id: str,
        session_id: str,
        keep_trace: KeepTrace | None = None,
    ) -> None:
        self._inner = inner
        self._store = store
        self._agent = agent_id
        self._session = session_id
        self._keep_trace = keep_trace

    async def review(self, call: ToolCall, permission_required: bool) -> GateDecision:
        started = time.perf_counter()
        decision = await self._inner.review(call, permission_required)
        trace = later_trace(
            session_id=self._session,
            agent_id=self._agent,
            tool=call.name,
            params=call.arguments,
            decision="allow" if decision.allowed else "deny",
            level="policy" if decision.by.startswith("policy:") else "human",
            resolved_by=decision.by,
            reasoning=decision.reason or None,
            decided_ms=(time.perf_counter() - started) * 1000,
        )
        await store_trace(self._store, trace, self._keep_trace)
        return decision
