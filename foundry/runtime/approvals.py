"""The approvals service: the inbox, the chat, the editor and the API read, follow and decide
approvals (and the grants made from them) through it, never through the store.

Its values are the store's own records (ApprovalRecord, GrantRecord, TraceRecord), handed out as
read-only values: a caller changes an approval only by deciding it here, where the first resolver
wins. Every method but `waking` blocks on the database: call them off the GUI thread and off an
event loop (a worker thread, `asyncio.to_thread`).
"""

from __future__ import annotations

import asyncio
import glob
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from foundry.runtime.grant_scopes import describe_duration, describe_scope
from foundry.session.events import ApprovalRequested
from foundry.store import (
    AlreadyResolved,
    ApprovalRecord,
    GrantRecord,
    NotFound,
    Store,
    TraceRecord,
)
from foundry.store.tables import utc_now
from foundry.supervision.resolution import resolve_approval
from foundry.supervision.shadow import supervisor_verdict
from foundry.supervision.tracing import ResolvedLevel

__all__ = [
    "AlreadyResolved",
    "ApprovalContext",
    "ApprovalFeed",
    "ApprovalRecord",
    "Approvals",
    "GrantRecord",
    "NotFound",
    "Resolution",
    "TraceRecord",
    "utc_now",
]

HISTORY_LIMIT = 20_000
RECENT_CALLS = 8


@dataclass(frozen=True)
class Resolution:
    """An approval after an attempt to resolve it; `conflict` when someone else was first (the
    record then shows who won)."""

    approval: ApprovalRecord
    conflict: bool = False
    grant: GrantRecord | None = None


@dataclass(frozen=True)
class ApprovalContext:
    """What surrounds an approval: why it was asked, what its agent did lately, what it may do."""

    approval_id: str
    request_reason: str | None = None
    recent_calls: list[TraceRecord] = field(default_factory=list)
    grants: list[GrantRecord] = field(default_factory=list)
    session_title: str = ""  # e.g. the MCP client a gateway session serves


class ApprovalFeed:
    """Follows the approvals of every session and every Foundry sharing the store.

    After a first load, each look asks only for the ids of pending approvals (the status index
    answers that), and then fetches the few rows that entered or left that set: new requests
    and resolutions by anyone. One thread at a time uses a feed.
    """

    def __init__(self, store: Store, history_limit: int = HISTORY_LIMIT) -> None:
        self._store = store
        self._history_limit = history_limit
        self._pending: set[str] = set()
        self._total = 0

    def load(self) -> list[ApprovalRecord]:
        """Every pending approval and the newest resolved ones (up to the history limit)."""
        self._total = self._store.approvals.count()
        pending = self._store.approvals.pending_ids()
        records = self._store.approvals.list(limit=self._history_limit)
        missing = pending - {record.id for record in records}
        self._pending = pending
        return [*records, *self._store.approvals.many(missing)]

    def changes(self) -> list[ApprovalRecord]:
        """The approvals requested or resolved since the last look, as they are now.

        An approval requested and resolved between two looks was never pending for the feed;
        the count of approvals gives it away, and the newest ones are read again."""
        total = self._store.approvals.count()
        pending = self._store.approvals.pending_ids()
        arrived, total_before = pending - self._pending, self._total
        changed = pending ^ self._pending
        self._pending, self._total = pending, total
        records = {record.id: record for record in self._store.approvals.many(changed)}
        if total - total_before > len(arrived):
            records.update((record.id, record) for record in self.latest(total - total_before))
        return list(records.values())

    def latest(self, count: int) -> list[ApprovalRecord]:
        """The newest approvals, whatever their status (to catch any that were requested and
        resolved between two looks)."""
        return self._store.approvals.list(limit=count)


class Approvals:
    """The approvals of every session and every Foundry sharing one store, and their grants."""

    def __init__(self, store: Store) -> None:
        self._store = store

    # -- reading --------------------------------------------------------------------------------

    def feed(self, history_limit: int = HISTORY_LIMIT) -> ApprovalFeed:
        """A feed of approvals as they change (one per follower: it remembers what it saw)."""
        return ApprovalFeed(self._store, history_limit)

    def listed(
        self, status: str | None = None, tool_glob: str | None = None
    ) -> list[ApprovalRecord]:
        """Approvals, newest first; `tool_glob` filters like the agent-mesh API (`fs.*`)."""
        return self._store.approvals.list(status, tool_glob)

    def get(self, approval_id: str) -> ApprovalRecord:
        """The approval with this id; NotFound if there is none."""
        return self._store.approvals.get(approval_id)

    def full_id(self, given: str) -> str:
        """The id of the approval that `given` names: its id, or a prefix of exactly one
        approval's id (as agent-mesh's clients may name it); NotFound otherwise."""
        if not given:
            raise NotFound("no approval has an empty id")
        found = self._store.approvals.ids_starting(given)
        if given in found or len(found) == 1:
            return given if given in found else found[0]
        if found:
            raise NotFound(f"more than one approval has an id starting with {given!r}")
        raise NotFound(f"no approval with id {given!r}")

    def recent_calls(
        self, agent_id: str | None = None, limit: int = 100, tool: str | None = None
    ) -> list[TraceRecord]:
        """How the latest tool calls (of one agent, by its name; of one tool) were decided,
        newest first."""
        return list(self._store.traces.list(agent_id, limit, tool))

    def active_grants(self, now: datetime | None = None) -> list[GrantRecord]:
        """The grants neither revoked nor expired, soonest to expire first."""
        return self._store.grants.active(now)

    def context(self, approval: ApprovalRecord) -> ApprovalContext:
        """The approval's request reason (from its session's log), its agent's recent tool calls
        and the active grants that cover its agent (its name and its file, as the gate judges
        them)."""
        grants = [
            grant
            for grant in self._store.grants.active()
            if grant.covers_agent(approval.agent_id, approval.agent_path)
        ]
        return ApprovalContext(
            approval_id=approval.id,
            request_reason=self._request_reason(approval),
            recent_calls=self.recent_calls(approval.agent_id, RECENT_CALLS),
            grants=grants,
            session_title=self._session_title(approval),
        )

    def agent_file(self, approval: ApprovalRecord) -> Path | None:
        """The agent file of the session that asked (to make a rule from the approval), or None
        when it names no session or its session is gone."""
        if approval.session_id is None:
            return None
        try:
            return Path(self._store.sessions.get(approval.session_id).agent_path)
        except LookupError:
            return None

    def _session_title(self, approval: ApprovalRecord) -> str:
        if approval.session_id is None:
            return ""
        try:
            return self._store.sessions.get(approval.session_id).title
        except LookupError:
            return ""

    def _request_reason(self, approval: ApprovalRecord) -> str | None:
        if approval.session_id is None:
            return None
        requests = self._store.events.list(approval.session_id, kinds=["approval_requested"])
        for record in reversed(requests):
            if record.payload.get("approval_id") == approval.id:
                return ApprovalRequested.model_validate(record.payload).reason
        return None

    # -- deciding -------------------------------------------------------------------------------

    def resolve(
        self,
        approval_id: str,
        status: str,
        resolver: str,
        reasoning: str | None = None,
        confidence: float | None = None,
        params: dict[str, Any] | None = None,
        *,
        level: ResolvedLevel = "human",
    ) -> ApprovalRecord:
        """Resolve a pending approval and trace the decision (see resolve_approval); raises
        NotFound, or AlreadyResolved naming who won when someone resolved it first."""
        return resolve_approval(
            self._store,
            approval_id,
            status,
            resolver,
            reasoning,
            confidence,
            params,
            level=level,
        )

    def keep_supervisor_verdict(
        self,
        approval_id: str,
        status: str,
        supervisor: str,
        reasoning: str | None = None,
        confidence: float | None = None,
    ) -> ApprovalRecord:
        """A supervisor's resolution taken as its shadow verdict (`foundry serve
        --shadow-supervisors`): kept on the pending approval, which stays for a person; a
        repeat replaces it, a verdict another supervisor gave first stays. Raises NotFound, or
        AlreadyResolved once a person decided, as a resolution would."""
        record = self._store.approvals.get(approval_id)
        if record.status != "pending":
            raise AlreadyResolved(record)
        kept = record.shadow_verdict
        if kept is not None and kept.get("supervisor") != supervisor:
            return record
        verdict = supervisor_verdict(status, supervisor, reasoning, confidence)
        self._store.approvals.keep_shadow_verdict(approval_id, verdict.record())
        return record

    def decide(
        self,
        approval_id: str,
        approved: bool,
        resolver: str,
        reasoning: str | None = None,
        params: dict[str, Any] | None = None,
    ) -> Resolution:
        """A person approves or denies; a denial's reasoning is the tool result the agent
        reads, approved `params` are what the tool runs with."""
        status = "approved" if approved else "denied"
        try:
            record = self.resolve(approval_id, status, resolver, reasoning or None, params=params)
        except AlreadyResolved as conflict:
            return Resolution(conflict.approval, conflict=True)
        return Resolution(record)

    def decide_many(
        self,
        approval_ids: list[str],
        approved: bool,
        resolver: str,
        reasoning: str | None = None,
    ) -> list[Resolution]:
        """Resolve a selection; each one independently wins or finds it was already resolved."""
        return [self.decide(one, approved, resolver, reasoning) for one in approval_ids]

    def approve_with_grant(
        self,
        approval: ApprovalRecord,
        resolver: str,
        tool_glob: str,
        duration: timedelta,
        path_scope: str | None,
    ) -> Resolution:
        """Approve, and let the same agent call tools matching `tool_glob` for `duration`
        without asking, within `path_scope` (a folder, or None, chosen explicitly, for the whole
        workspace). The same agent is its name and its file: another agent file of that name is
        not covered. The grant is stored first so that the agent's very next call finds it; it
        is revoked again if someone else had already resolved the approval."""
        grant = self._store.grants.add(
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
        outcome = self.decide(approval.id, True, resolver, reasoning)
        if outcome.conflict:
            self._store.grants.revoke(grant.id)
            return outcome
        return replace(outcome, grant=grant)

    def grant(
        self,
        tool_glob: str,
        expires_at: datetime,
        granted_by: str,
        agent_glob: str = "*",
        agent_path: str | None = None,
        param_scope: list[dict[str, Any]] | None = None,
    ) -> GrantRecord:
        """A standing permission (see GrantRecord), narrowed by `param_scope`'s conditions."""
        return self._store.grants.add(
            tool_glob,
            expires_at,
            granted_by,
            agent_glob=agent_glob,
            param_scope=param_scope,
            agent_path=agent_path,
        )

    def revoke(self, grant_id: str) -> GrantRecord:
        """End a grant now; NotFound if there is none."""
        return self._store.grants.revoke(grant_id)

    # -- watching -------------------------------------------------------------------------------

    def watching(self, on_change: Callable[[], None]) -> AbstractContextManager[None]:
        """Call `on_change` (on the watch's thread) whenever approvals change in any process
        sharing the store, while in the block. Entering blocks the first time."""
        return self._store.approval_changes.subscribed(on_change)

    def waking(self, event: asyncio.Event) -> AbstractAsyncContextManager[None]:
        """Set `event`, on the running loop, whenever approvals change, while in
        the block (the way to wait for them on an event loop)."""
        return self._store.approval_changes.waking(event)
