"""Resolving an approval from outside the gate (API, CLI, GUI, a timeout): the winner, traced.

Who resolved decides the level a decision is counted at, and only Foundry names resolvers:
`human:<channel>:<login>` for the GUI and the CLI, `timeout` for the inbox's own timeout, and,
for whoever holds the API token, `supervisor:<name>` when it names itself a supervisor as
agent-mesh's supervisors do (`resolved_by: supervisor:agent7`), counted at L1 with its
confidence, else `api:<claimed name>`, counted as a human's (metrics count levels by the
resolver's prefix, see foundry.metrics.terms.resolution_level). Neither can pass for Foundry's
own L1 supervisor (`agent:`), a timeout or the GUI.
"""

from __future__ import annotations

import getpass
from typing import Any

from foundry.store import ApprovalRecord, Row, Store
from foundry.store.tables import utc_now
from foundry.supervision.tracing import ResolvedLevel, decision_trace
from foundry.supervision.wakeups import APPROVAL_WAKEUPS

API_PREFIX = "api:"
SUPERVISOR_PREFIX = "supervisor:"  # agent-mesh's convention for a supervisor's resolved_by
MAX_CLAIMED_NAME = 200


def human_resolver(channel: str) -> str:
    """Who resolves from this machine through `channel` ("gui", "cli"): human:<channel>:<login>."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no login name in this environment
        user = "unknown"
    return f"human:{channel}:{user}"


def api_resolver(claimed: str | None, caller: str) -> str:
    """Who acts through the approvals API: `supervisor:<name>` for a claimed `supervisor:<name>`,
    else `api:<claimed name>`, else `api:<caller>`.

    The token proves only that a client may use the API, not who it is, so the name it claims
    (agent-mesh's `resolved_by`, `granted_by`) is kept as a label: printable characters only, at
    most 200. A client cannot pass for Foundry's own supervisor, a timeout or the GUI.
    """
    name = "".join(char for char in claimed or "" if char.isprintable()).strip()
    name = name[:MAX_CLAIMED_NAME].strip()
    supervisor = name.removeprefix(SUPERVISOR_PREFIX).strip()
    if name.startswith(SUPERVISOR_PREFIX) and supervisor:
        return SUPERVISOR_PREFIX + supervisor
    return API_PREFIX + (name or caller)


def resolver_level(resolver: str) -> ResolvedLevel:
    """The level a resolution through the API is traced at: L1 for a supervisor, else a
    human's."""
    return "supervisor" if resolver.startswith(SUPERVISOR_PREFIX) else "human"


def resolve_approval(
    store: Store,
    approval_id: str,
    status: str,
    resolved_by: str,
    reasoning: str | None = None,
    confidence: float | None = None,
    params: dict[str, Any] | None = None,
    *,
    level: ResolvedLevel = "human",
    allowed: bool | None = None,
) -> ApprovalRecord:
    """Resolve a pending approval and trace the decision at `level`, in one transaction (the
    caller knows who resolved; the name never decides it), then hand it to the calls of this
    process that wait on it. `allowed` is the call's outcome when the status does not say (a
    timeout); raises NotFound, or AlreadyResolved naming who won when someone resolved it first
    (then nothing is traced)."""
    return store.approvals.resolve(
        approval_id,
        status,
        resolved_by,
        reasoning,
        confidence,
        params=params,
        trace=lambda resolved: resolution_trace(resolved, level, allowed),
        committed=APPROVAL_WAKEUPS.wake,
    )


def resolution_trace(
    record: ApprovalRecord, level: ResolvedLevel = "human", allowed: bool | None = None
) -> Row:
    """The trace of a resolved approval; `decided_ms` is the time from the request to the
    resolution, and the parameters are the ones decided on (edited ones when approved edited)."""
    resolved_at = record.resolved_at or utc_now()
    if allowed is None:
        allowed = record.status == "approved"
    return decision_trace(
        session_id=record.session_id,
        agent_id=record.agent_id,
        tool=record.tool,
        params=record.params,
        decision="allow" if allowed else "deny",
        level=level,
        resolved_by=record.resolved_by or "unknown",
        policy_rule=record.policy_rule,
        approval_id=record.id,
        reasoning=record.reasoning,
        confidence=record.confidence,
        decided_ms=(resolved_at - record.created_at).total_seconds() * 1000,
    )
