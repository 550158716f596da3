"""What View > Gateway reads of a gateway session: its calls, and those waiting for a person."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from foundry.gateway.activity import TITLE_SUFFIX, gateway_clients
from foundry.session.events import ApprovalRequested, EventBody, SessionStarted
from foundry.store import ApprovalRecord, Store
from foundry.store.tables import utc_now
from foundry.supervision.resolution import resolve_approval


def record(store: Store, session_id: str, body: EventBody) -> None:
    store.events.append(session_id, body.kind, body.model_dump(mode="json"))


def asking_gateway_session(store: Store) -> ApprovalRecord:
    """A gateway session (as the gateway records one) whose call waits for a person."""
    session = store.sessions.create("/agents/files", "files", "Cursor" + TITLE_SUFFIX)
    started = SessionStarted(agent_path="/agents/files", agent_name="files", model="gateway")
    record(store, session.id, started)
    approval = store.approvals.create(
        ApprovalRecord(
            agent_id="files",
            tool="fs.write_file",
            level="L0",
            params={"path": "notes.md", "content": "hello"},
            session_id=session.id,
            expires_at=utc_now() + timedelta(minutes=5),
        )
    )
    asked = ApprovalRequested(
        approval_id=approval.id, tool=approval.tool, level="L0", reason="rule ask matched"
    )
    record(store, session.id, asked)
    return approval


def listed_calls(store: Store) -> list[tuple[str, bool]]:
    return [(call.tool, call.waiting) for client in gateway_clients(store) for call in client.calls]


def test_a_call_waiting_for_a_person_is_listed_until_its_approval_is_no_longer_pending(
    tmp_path: Path,
) -> None:
    """A gateway that stopped while its call waited never records how the wait ended: the
    approval's state in the store says whether it still waits."""
    store = Store.open(f"sqlite:///{tmp_path / 'store.sqlite3'}")
    approval = asking_gateway_session(store)
    [client] = gateway_clients(store)
    assert client.client == "Cursor" and client.agent == "files"
    assert listed_calls(store) == [("fs.write_file", True)]

    resolve_approval(store, approval.id, "expired", "timeout", "nobody answered")
    assert listed_calls(store) == []
    store.close()
