"""What a reviewer in the inbox can do to approvals, run off the GUI thread: approve, deny,
approve edited parameters, approve with a grant, and all of these for a selection."""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any

from foundry.store import AlreadyResolved, ApprovalRecord, GrantRecord, Store
from foundry.store.tables import utc_now
from foundry.supervision.paths import find_paths
from foundry.supervision.resolution import resolve_approval

WORKSPACE = "."


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


@dataclass(frozen=True)
class GrantScope:
    """Where a grant may reach: a folder every path of a covered call must lie in (relative: to
    the agent's workspace), or None for no folder of its own (still only the workspace)."""

    label: str
    path_scope: str | None


def grant_scopes(approval: ApprovalRecord) -> list[GrantScope]:
    """The scopes offered for a grant made from this approval, the proposed one first: the
    folder of the paths the call names, if it names any, then the workspace; no folder at all
    is offered last, so that it is only ever an explicit choice."""
    scopes = [GrantScope("the workspace", WORKSPACE)]
    folder = call_folder(approval.params)
    if folder is not None and folder != WORKSPACE:
        scopes.insert(0, GrantScope(f"this call's folder: {folder}", folder))
    return [*scopes, GrantScope("no folder (anywhere in the workspace)", None)]


def call_folder(params: dict[str, Any]) -> str | None:
    """The folder holding every path the call names (`.` for the workspace), or None when it
    names none or they share no folder."""
    found, _ = find_paths(params)
    parents = [os.path.dirname(os.path.normpath(raw)) or WORKSPACE for _, raw in found]
    if not parents:
        return None
    try:
        return os.path.commonpath(parents) or WORKSPACE
    except ValueError:  # absolute and relative paths, or different drives
        return None


def describe_scope(path_scope: str | None) -> str:
    """Where a grant reaches, in words: `in src`, `in the workspace`, or `anywhere in the
    workspace` (no folder of its own)."""
    if path_scope is None:
        return "anywhere in the workspace"
    return "in the workspace" if path_scope == WORKSPACE else f"in {path_scope}"


def approve_with_grant(
    store: Store,
    approval: ApprovalRecord,
    resolver: str,
    tool_glob: str,
    duration: timedelta,
    path_scope: str | None,
) -> Resolution:
    """Approve, and let the same agent call tools matching `tool_glob` for `duration` without
    asking, within `path_scope` (a folder, or None, chosen explicitly, for the whole workspace).
    The same agent is its name and its file: another agent file of that name is not covered.
    The grant is stored first so that the agent's very next call finds it; it is revoked again
    if someone else had already resolved the approval."""
    grant = store.grants.add(
        tool_glob,
        utc_now() + duration,
        resolver,
        agent_glob=glob.escape(approval.agent_id),
        agent_path=approval.agent_path,
        path_scope=path_scope,
    )
    reasoning = (
        f"approved, and {tool_glob} granted {describe_scope(path_scope)} "
        f"for {describe_duration(duration)}"
    )
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
