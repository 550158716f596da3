"""What a reviewer in the inbox can do to approvals, run off the GUI thread: approve, deny,
approve edited parameters, approve with a grant, and all of these for a selection."""

from __future__ import annotations

import glob
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any

from foundry.store import AlreadyResolved, ApprovalRecord, GrantRecord, Store
from foundry.store.tables import utc_now
from foundry.supervision.resolution import resolve_approval


@dataclass(frozen=True)
class Resolution:
    """An approval after an attempt to resolve it; `conflict` when someone else was first (the
    record then shows who won)."""

    approval: ApprovalRecord
    conflict: bool = False
    grant: GrantRecord | None = None


def decide(
    store: Store,
    approval_id: str,
    approved: bool,
    resolver: str,
    reasoning: str | None = None,
    params: dict[str, Any] | None = None,
) -> Resolution:
    """Approve or deny; a denial's reasoning is the tool result the agent reads, approved
    `params` are what the tool runs with."""
    status = "approved" if approved else "denied"
    try:
        record = resolve_approval(
            store, approval_id, status, resolver, reasoning or None, params=params
        )
    except AlreadyResolved as conflict:
        return Resolution(conflict.approval, conflict=True)
    return Resolution(record)


def approve_with_grant(
    store: Store, approval: ApprovalRecord, resolver: str, tool_glob: str, duration: timedelta
) -> Resolution:
    """Approve, and let the same agent call tools matching `tool_glob` for `duration` without
    asking. The grant is stored first so that the agent's very next call finds it; it is revoked
    again if someone else had already resolved the approval."""
    grant = store.grants.add(
        tool_glob, utc_now() + duration, resolver, agent_glob=glob.escape(approval.agent_id)
    )
    reasoning = f"approved, and {tool_glob} granted for {describe_duration(duration)}"
    outcome = decide(store, approval.id, True, resolver, reasoning)
    if outcome.conflict:
        store.grants.revoke(grant.id)
        return outcome
    return replace(outcome, grant=grant)


def decide_many(
    store: Store,
    approval_ids: list[str],
    approved: bool,
    resolver: str,
    reasoning: str | None = None,
) -> list[Resolution]:
    """Resolve a selection; each one independently wins or finds it was already resolved."""
    return [decide(store, one, approved, resolver, reasoning) for one in approval_ids]


def describe_duration(duration: timedelta) -> str:
    """A duration in words: `42 s`, `5 min`, `2 h 5 min`, `3 d`."""
    seconds = max(0, int(duration.total_seconds()))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min"
    if seconds < 86400:
        hours, minutes = divmod(seconds // 60, 60)
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    return f"{seconds // 86400} d"
