"""The store on real databases: sessions, messages, the event log, approvals, grants, traces."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa

from foundry.store import (
    AlreadyResolved,
    ApprovalRecord,
    MessageRecord,
    NotFound,
    Row,
    Store,
    TraceRecord,
)
from foundry.store.store import NewEvent
from foundry.store.tables import utc_now


def test_sessions_are_created_listed_and_updated(store: Store) -> None:
    first = store.sessions.create("agents/assistant", "Supervised Assistant", "First")
    second = store.sessions.create("agents/architect", settings_overrides={"temperature": 0.1})
    store.sessions.update(first.id, title="Renamed")
    listed = store.sessions.list()
    assert [s.id for s in listed] == [first.id, second.id]  # most recently updated first
    assert store.sessions.get(first.id).title == "Renamed"
    assert store.sessions.get(second.id).settings_overrides == {"temperature": 0.1}
    with pytest.raises(NotFound):
        store.sessions.get("missing")


def test_messages_keep_their_order_per_session(store: Store) -> None:
    session = store.sessions.create("a")
    store.messages.add(session.id, "user", "hello")
    store.messages.add(session.id, "assistant", "hi", {"tool_calls": [{"name": "time.now"}]})
    messages = store.messages.list(session.id)
    assert [(m.seq, m.role, m.content) for m in messages] == [
        (1, "user", "hello"),
        (2, "assistant", "hi"),
    ]
    assert messages[1].data == {"tool_calls": [{"name": "time.now"}]}


def test_events_are_numbered_per_session_and_read_in_order(store: Store) -> None:
    one, two = store.sessions.create("a"), store.sessions.create("b")
    for index in range(3):
        store.events.append(one.id, "token", {"text": f"t{index}"})
    store.events.append(two.id, "message", {"role": "user"})
    events = store.events.list(one.id)
    assert [(e.seq, e.payload["text"]) for e in events] == [(1, "t0"), (2, "t1"), (3, "t2")]
    assert events[0].time.tzinfo is not None
    assert [e.seq for e in store.events.list(one.id, after_seq=1)] == [2, 3]
    assert store.events.list(two.id, kinds=["token"]) == []
    assert store.events.last_seq(one.id) == 3


def test_concurrent_appends_never_share_a_sequence_number(database_url: str) -> None:
    stores = [Store.open(database_url) for _ in range(2)]  # as two Foundry instances would
    try:

        def append(index: int) -> int:
            return stores[index % 2].events.append("shared", "tick", {"i": index}).seq

        with ThreadPoolExecutor(max_workers=4) as pool:
            seqs = list(pool.map(append, range(40)))
        assert sorted(seqs) == list(range(1, 41))
    finally:
        for opened in stores:
            opened.close()


def test_approvals_are_filtered_by_status_and_tool_glob(store: Store) -> None:
    write = store.approvals.create(
        ApprovalRecord(
            agent_id="claude", tool="filesystem.write_file", params={"path": "/p/main.go"}
        )
    )
    store.approvals.create(ApprovalRecord(agent_id="claude", tool="gmail.send"))
    assert [a.id for a in store.approvals.list(status="pending", tool_glob="filesystem.*")] == [
        write.id
    ]
    assert len(store.approvals.list(status="pending")) == 2
    assert store.approvals.get(write.id).params == {"path": "/p/main.go"}


def test_an_approval_reads_back_as_it_was_written_at_every_level(store: Store) -> None:
    """ "supervisor" (a message supervisor asking a person) is the longest level; PostgreSQL once
    refused it in a column too narrow."""
    expires = datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC)
    written = [
        store.approvals.create(
            ApprovalRecord(
                agent_id="a",
                tool="fs.write",
                level=level,
                params={"path": "é/ü", "n": [1, None]},
                supervisor_verdict={"confidence": 0.4} if level == "L1" else None,
                injection_risk=level == "L0",
                expires_at=expires,
            )
        )
        for level in ("L0", "L1", "supervisor")
    ]
    for approval in written:
        assert store.approvals.get(approval.id) == approval
    assert sorted(a.level for a in store.approvals.list()) == ["L0", "L1", "supervisor"]


def test_an_approval_a_newer_foundry_wrote_wider_still_reads(tmp_path: Path) -> None:
    """SQLite keeps a text longer than its column's width; the inbox must still list it."""
    with Store.open(f"sqlite:///{tmp_path / 's.db'}") as store:
        approval = store.approvals.create(ApprovalRecord(agent_id="a", tool="fs.write"))
        with store.engine.begin() as connection:
            connection.execute(sa.text("UPDATE approvals SET level = :level"), {"level": "L" * 40})
        assert [a.level for a in store.approvals.list(status="pending")] == ["L" * 40]
        assert store.approvals.get(approval.id).level == "L" * 40
        assert store.approvals.resolve(approval.id, "denied", "human:test").level == "L" * 40


def test_second_resolution_conflicts(database_url: str) -> None:
    with Store.open(database_url) as mine, Store.open(database_url) as theirs:
        approval = mine.approvals.create(ApprovalRecord(agent_id="a", tool="fs.write"))
        resolved = theirs.approvals.resolve(approval.id, "approved", "human:ana", "fine", 0.9)
        assert (resolved.status, resolved.resolved_by, resolved.confidence) == (
            "approved",
            "human:ana",
            0.9,
        )
        with pytest.raises(AlreadyResolved) as conflict:
            mine.approvals.resolve(approval.id, "denied", "human:bo")
        assert conflict.value.approval.resolved_by == "human:ana"
        assert mine.approvals.get(approval.id).status == "approved"
        with pytest.raises(NotFound):
            mine.approvals.resolve("nope", "approved", "x")


def test_racing_resolvers_produce_exactly_one_winner(store: Store) -> None:
    approval = store.approvals.create(ApprovalRecord(agent_id="a", tool="fs.write"))

    def resolve(index: int) -> bool:
        try:
            store.approvals.resolve(approval.id, "approved", f"resolver-{index}")
        except AlreadyResolved:
            return False
        return True

    with ThreadPoolExecutor(max_workers=4) as pool:
        assert sum(pool.map(resolve, range(8))) == 1


def test_an_approval_says_whether_it_was_approved_with_edited_parameters(store: Store) -> None:
    asked = {"path": "notes/a.md", "text": "draft"}
    plain, same, edited = (
        store.approvals.create(ApprovalRecord(agent_id="a", tool="fs.write", params=asked))
        for _ in range(3)
    )
    assert store.approvals.resolve(plain.id, "approved", "human:gui:ana").edited is False
    # the parameters sent back as they were asked are not an edit
    assert (
        store.approvals.resolve(same.id, "approved", "human:gui:ana", params=dict(asked)).edited
        is False
    )
    changed = {"path": "notes/b.md", "text": "draft"}
    resolved = store.approvals.resolve(edited.id, "approved", "human:gui:ana", params=changed)
    assert resolved.edited is True and resolved.params == changed
    assert store.approvals.get(edited.id).edited is True


def test_a_shadow_verdict_is_kept_before_or_after_a_person_decides(store: Store) -> None:
    early, late = (
        store.approvals.create(ApprovalRecord(agent_id="a", tool="fs.write")) for _ in range(2)
    )
    verdict = {"decision": "deny", "confidence": 0.4, "supervisor": "L1", "seconds": 1.5}
    store.approvals.keep_shadow_verdict(early.id, verdict)
    store.approvals.resolve(early.id, "approved", "human:gui:ana")
    store.approvals.resolve(late.id, "denied", "human:gui:ana")
    store.approvals.keep_shadow_verdict(late.id, verdict)
    assert store.approvals.get(early.id).shadow_verdict == verdict
    assert store.approvals.get(late.id).shadow_verdict == verdict
    assert store.approvals.get(late.id).status == "denied"  # the verdict changes nothing


def test_grants_match_by_glob_until_they_expire_or_are_revoked(store: Store) -> None:
    now = utc_now()
    grant = store.grants.add("filesystem.read_*", now + timedelta(minutes=30), "human:ana", "cl*")
    store.grants.add("gmail.*", now - timedelta(seconds=1), "human:ana")
    assert store.grants.matching("claude", "filesystem.read_file") == grant
    assert store.grants.matching("other", "filesystem.read_file") is None
    assert store.grants.matching("claude", "gmail.send") is None  # expired
    assert store.grants.matching("claude", "filesystem.read_file", now + timedelta(hours=1)) is None
    store.grants.revoke(grant.id)
    assert store.grants.active() == []


def test_a_grant_bound_to_an_agent_file_covers_only_that_file_under_its_name(
    store: Store,
) -> None:
    now = utc_now()
    bound = store.grants.add(
        "fs.*", now + timedelta(minutes=30), "human:ana", "claude", agent_path="/agents/claude"
    )
    mine = store.grants.matching("claude", "fs.read", agent_path="/agents/claude")
    assert mine is not None and mine.agent_path == "/agents/claude" == bound.agent_path
    assert store.grants.matching("claude", "fs.read", agent_path="/copy/claude") is None
    assert store.grants.matching("claude", "fs.read") is None  # an agent of unknown file
    assert store.grants.matching("renamed", "fs.read", agent_path="/agents/claude") is None


def test_an_approval_keeps_the_agent_file_that_asked(store: Store) -> None:
    made = store.approvals.create(
        ApprovalRecord(agent_id="claude", agent_path="/agents/claude", tool="fs.read")
    )
    assert store.approvals.get(made.id).agent_path == "/agents/claude"
    assert store.approvals.list()[0].agent_path == "/agents/claude"


def test_traces_record_who_decided_and_how_confidently(store: Store) -> None:
    store.traces.add(
        TraceRecord(
            agent_id="claude",
            tool="fs.read",
            decision="allow",
            resolved_level="policy",
            resolved_by="policy:read-ok",
        )
    )
    store.traces.add(
        TraceRecord(
            agent_id="claude",
            tool="fs.write",
            decision="allow",
            resolved_level="supervisor",
            resolved_by="agent:supervisor",
            reasoning="inside the project",
            confidence=0.93,
            decided_ms=812,
        )
    )
    latest = store.traces.list("claude")
    assert [t.tool for t in latest] == ["fs.write", "fs.read"]
    assert (latest[0].confidence, latest[0].reasoning) == (0.93, "inside the project")


def trace(tool: str) -> TraceRecord:
    """A policy's decision to allow a call of `tool`."""
    return TraceRecord(
        agent_id="a", tool=tool, decision="allow", resolved_level="policy", resolved_by="p"
    )


def trace_row(tool: str, **values: object) -> Row:
    return Row.of(trace(tool).model_copy(update=values))


def test_records_and_rows_are_inserted_in_order_a_run_of_one_table_in_one_statement(
    store: Store,
) -> None:
    session = store.sessions.create("a")
    statements: list[str] = []
    sa.event.listen(store.engine, "before_cursor_execute", lambda *call: statements.append(call[2]))
    first = utc_now()
    records: list[MessageRecord | TraceRecord | Row] = [
        trace_row("fs.a", created_at=first),
        trace_row("fs.b", created_at=first + timedelta(seconds=1)),
        MessageRecord(session_id=session.id, seq=1, role="user", content="numbered"),  # its id
        TraceRecord(
            agent_id="a",
            tool="fs.c",
            decision="deny",
            resolved_level="policy",
            resolved_by="p",
            created_at=first + timedelta(seconds=2),
        ),
        trace_row("fs.d", created_at=first + timedelta(seconds=3), reasoning="why"),
    ]

    store.traces.insert(records)

    inserts = [sql.split("(")[0].strip() for sql in statements if sql.startswith("INSERT")]
    assert inserts == ["INSERT INTO traces", "INSERT INTO messages", "INSERT INTO traces"]
    assert [t.tool for t in store.traces.list()] == ["fs.d", "fs.c", "fs.b", "fs.a"]
    assert store.traces.list()[0].reasoning == "why"
    assert [m.content for m in store.messages.list(session.id)] == ["numbered"]


def test_records_appended_with_events_are_stored_in_their_transaction(store: Store) -> None:
    """The journal's group: a decision's trace goes with the events, or neither is stored."""
    session = store.sessions.create("a")
    store.events.append_many([NewEvent(session.id, "note", {"n": 1})], also=[trace("fs.read")])

    def refuse(session: object, records: object) -> None:
        raise RuntimeError("refused")

    store.events.add_hook(refuse)
    with pytest.raises(RuntimeError, match="refused"):
        store.events.append_many([NewEvent(session.id, "note", {"n": 2})], also=[trace("fs.x")])
    assert [t.tool for t in store.traces.list()] == ["fs.read"]
    assert [event.payload for event in store.events.list(session.id)] == [{"n": 1}]


def test_records_appended_without_events_are_stored(store: Store) -> None:
    """A journal group can hold a kept trace and no event."""
    assert store.events.append_many([], also=[trace("fs.read")]) == []
    assert store.events.append_many([]) == []
    assert [t.tool for t in store.traces.list()] == ["fs.read"]
