"""The runtime's services over the store, as the inbox, the chat, the window and the API use
them: approvals read with their context, decided once, granted, followed; sessions listed."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from foundry.runtime.approvals import AlreadyResolved, ApprovalRecord, Approvals, utc_now
from foundry.runtime.sessions import StoredSessions
from foundry.session.events import ApprovalRequested, EventBody
from foundry.store import Store


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store.open(f"sqlite:///{tmp_path / 'store.sqlite3'}")
    yield opened
    opened.close()


def asked(
    store: Store, session_id: str | None = None, tool: str = "fs.write_file"
) -> ApprovalRecord:
    return store.approvals.create(
        ApprovalRecord(
            session_id=session_id,
            agent_id="writer",
            agent_path="/agents/writer/tsagent.json",
            tool=tool,
            params={"path": "src/app/main.py"},
            expires_at=utc_now() + timedelta(minutes=5),
        )
    )


def logged(store: Store, session_id: str, body: EventBody) -> None:
    store.events.append(session_id, body.kind, body.model_dump(mode="json"))


def test_an_approval_s_context_is_why_it_was_asked_its_session_and_its_agent_s_grants(
    store: Store,
) -> None:
    session = store.sessions.create("/agents/writer", "writer", "Cursor via the gateway")
    approval = asked(store, session.id)
    logged(
        store,
        session.id,
        ApprovalRequested(
            approval_id=approval.id, tool=approval.tool, level="L0", reason="writes need a person"
        ),
    )
    approvals = Approvals(store)
    mine = approvals.grant(
        "fs.read_*", utc_now() + timedelta(hours=1), "human:ana", "writer", approval.agent_path
    )
    approvals.grant(
        "fs.read_*", utc_now() + timedelta(hours=1), "human:ana", "writer", "/elsewhere/writer"
    )

    context = approvals.context(approval)

    assert context.request_reason == "writes need a person"
    assert context.session_title == "Cursor via the gateway"
    assert [grant.id for grant in context.grants] == [mine.id]
    assert approvals.agent_file(approval) == Path("/agents/writer")
    assert approvals.agent_file(asked(store)) is None  # no session: no agent to make a rule for


def test_the_first_decision_wins_and_the_second_sees_who_made_it(store: Store) -> None:
    approvals = Approvals(store)
    approval = asked(store)

    first = approvals.decide(approval.id, False, "human:cli:bo", "not there")
    second = approvals.decide(approval.id, True, "human:gui:ana")

    assert not first.conflict and first.approval.status == "denied"
    assert second.conflict and second.approval.resolved_by == "human:cli:bo"
    with pytest.raises(AlreadyResolved):
        approvals.resolve(approval.id, "approved", "api:bot")
    assert [trace.decision for trace in approvals.recent_calls("writer")] == ["deny"]


def test_a_grant_made_on_an_approval_someone_else_answered_is_revoked(store: Store) -> None:
    approvals = Approvals(store)
    answered, open_one = asked(store), asked(store, tool="fs.edit_file")
    approvals.decide(answered.id, False, "human:cli:bo")

    lost = approvals.approve_with_grant(
        answered, "human:gui:ana", "fs.*", timedelta(hours=1), "src"
    )
    won = approvals.approve_with_grant(open_one, "human:gui:ana", "fs.*", timedelta(hours=1), "src")

    assert lost.conflict and lost.grant is None
    assert won.grant is not None and won.approval.status == "approved"
    assert "fs.* granted in src for 1 h" in (won.approval.reasoning or "")
    assert [grant.id for grant in approvals.active_grants()] == [won.grant.id]


def test_a_feed_sees_what_arrived_and_what_was_answered_since_it_last_looked(
    store: Store,
) -> None:
    approvals = Approvals(store)
    feed = approvals.feed()
    waiting = asked(store)
    assert [record.id for record in feed.load()] == [waiting.id]

    arrived = asked(store, tool="fs.edit_file")
    approvals.decide(waiting.id, True, "human:gui:ana")

    changed = {record.id: record.status for record in feed.changes()}
    assert changed == {arrived.id: "pending", waiting.id: "approved"}
    assert feed.changes() == []


def test_watching_calls_back_when_approvals_change(store: Store) -> None:
    changed = threading.Event()
    with Approvals(store).watching(changed.set):
        asked(store)
        assert changed.wait(30)


def test_stored_sessions_are_listed_newest_first_with_their_first_messages(store: Store) -> None:
    older = store.sessions.create("/agents/a", "a", "")
    newer = store.sessions.create("/agents/b", "b", "")
    store.messages.add(older.id, "user", "What time is it in Tokyo?")
    sessions = StoredSessions(store)

    assert [record.id for record in sessions.recent()][:2] == [newer.id, older.id]
    assert sessions.get(older.id).agent_path == "/agents/a"
    assert sessions.first_messages([older.id, newer.id]) == {older.id: "What time is it in Tokyo?"}
