"""The one way a decision becomes a TraceRecord: its parameters always redacted."""

from __future__ import annotations

from typing import Any, Literal

from foundry.store import TraceRecord
from foundry.supervision.redaction import redact_params

ResolvedLevel = Literal["policy", "grant", "supervisor", "human", "timeout"]
TracedDecision = Literal["allow", "deny", "escalate"]


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
) -> TraceRecord:
    """The trace of one tool call's decision. `params` are the call's own; the trace keeps only
    their redacted form (content as length, sha256 and type), whatever a supervisor was shown,
    so the audit log never holds the content of a call."""
    return TraceRecord(
        session_id=session_id,
        agent_id=agent_id,
        tool=tool,
        params=redact_params(params),
        decision=decision,
        resolved_level=level,
        resolved_by=resolved_by,
        policy_rule=policy_rule,
        approval_id=approval_id,
        reasoning=reasoning,
        confidence=confidence,
        decided_ms=decided_ms,
    )
