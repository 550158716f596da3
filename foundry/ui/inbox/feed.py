"""What the inbox reads from the store, off the GUI thread: approvals as they change, and the
context a reviewer needs beside one approval."""

from __future__ import annotations

from dataclasses import dataclass, field

from foundry.session.events import ApprovalRequested
from foundry.store import ApprovalRecord, GrantRecord, Store, TraceRecord

HISTORY_LIMIT = 20_000
RECENT_CALLS = 8


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


@dataclass(frozen=True)
class ApprovalContext:
    """What surrounds an approval: why it was asked, what its agent did lately, what it may do."""

    approval_id: str
    request_reason: str | None = None
    recent_calls: list[TraceRecord] = field(default_factory=list)
    grants: list[GrantRecord] = field(default_factory=list)
    session_title: str = ""  # e.g. the MCP client a gateway session serves


def load_context(store: Store, approval: ApprovalRecord) -> ApprovalContext:
    """The approval's request reason (from its session's log), its agent's recent tool calls and
    the active grants that cover its agent (its name and its file, as the gate judges them)."""
    grants = [
        grant
        for grant in store.grants.active()
        if grant.covers_agent(approval.agent_id, approval.agent_path)
    ]
    return ApprovalContext(
        approval_id=approval.id,
        request_reason=_request_reason(store, approval),
        recent_calls=list(store.traces.list(approval.agent_id, RECENT_CALLS)),
        grants=grants,
        session_title=_session_title(store, approval),
    )


def _session_title(store: Store, approval: ApprovalRecord) -> str:
    if approval.session_id is None:
        return ""
    try:
        return store.sessions.get(approval.session_id).title
    except LookupError:
        return ""


def _request_reason(store: Store, approval: ApprovalRecord) -> str | None:
    if approval.session_id is None:
        return None
    requests = store.events.list(approval.session_id, kinds=["approval_requested"])
    for record in reversed(requests):
        if record.payload.get("approval_id") == approval.id:
            return ApprovalRequested.model_validate(record.payload).reason
    return None
