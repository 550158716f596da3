"""Resolving an approval from outside the gate (API, CLI): the one winner, then its trace."""

from __future__ import annotations

import getpass
from typing import Any

from foundry.store import ApprovalRecord, Store, TraceRecord
from foundry.store.tables import utc_now
from foundry.supervision.redaction import redact_params


def human_resolver(channel: str) -> str:
    """Who resolves from this machine through `channel` ("gui", "cli"): human:<channel>:<login>."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no login name in this environment
        user = "unknown"
    return f"human:{channel}:{user}"


def resolve_approval(
    store: Store,
    approval_id: str,
    status: str,
    resolved_by: str,
    reasoning: str | None = None,
    confidence: float | None = None,
    params: dict[str, Any] | None = None,
    expose_content: bool = False,
) -> ApprovalRecord:
    """Resolve a pending approval and trace the decision; raises NotFound, or AlreadyResolved
    naming who won when someone resolved it first (then nothing is traced)."""
    record = store.approvals.resolve(
        approval_id, status, resolved_by, reasoning, confidence, params=params
    )
    store.traces.add(resolution_trace(record, expose_content))
    return record


def resolution_trace(record: ApprovalRecord, expose_content: bool = False) -> TraceRecord:
    """The trace of a resolved approval: `agent:` resolvers are the supervisor level, the rest
    are human; `decided_ms` is the time from the request to the resolution."""
    resolved_by = record.resolved_by or "unknown"
    resolved_at = record.resolved_at or utc_now()
    return TraceRecord(
        session_id=record.session_id,
        agent_id=record.agent_id,
        tool=record.tool,
        params=redact_params(record.params, expose_content),
        decision="allow" if record.status == "approved" else "deny",
        resolved_level="supervisor" if resolved_by.startswith("agent:") else "human",
        resolved_by=resolved_by,
        policy_rule=record.policy_rule,
        approval_id=record.id,
        reasoning=record.reasoning,
        confidence=record.confidence,
        decided_ms=(resolved_at - record.created_at).total_seconds() * 1000,
    )
