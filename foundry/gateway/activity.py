"""What the gateway's clients did, read from the store: their sessions and latest calls."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import sqlalchemy as sa
from pydantic import BaseModel, ConfigDict
from sqlmodel import col

from foundry.store import EventRecord, Store
from foundry.supervision.concerns import heading
from foundry.supervision.secrets import mask_text

TITLE_SUFFIX = " via the gateway"  # a gateway session's title: the client's name, then this
SCANNED_STARTS = 500  # the latest sessions looked at for gateway ones
CALL_KINDS = (
    "approval_requested",
    "approval_resolved",
    "tool_call_decided",
    "tool_call_finished",
    "tool_concern",
)
SHOWN_CHARS = 200  # of a call's result


class GatewayCall(BaseModel):
    model_config = ConfigDict(frozen=True)

    time: datetime
    tool: str
    allowed: bool
    by: str
    reason: str
    result: str = ""  # empty while the call runs
    is_error: bool = False
    waiting_on: str = ""  # the approval a person has yet to decide (in the inbox)
    # what supervision found wrong (concerns.py `heading`): about the tool (a changed or
    # flagged definition: a row of its own), its held call, or its result
    warning: str = ""

    @property
    def waiting(self) -> bool:
        return bool(self.waiting_on)


class GatewayClient(BaseModel):
    """One client connection: its session, who it is, the agent, and its latest calls."""

    model_config = ConfigDict(frozen=True)

    session_id: str
    client: str
    agent: str
    started: datetime
    calls: tuple[GatewayCall, ...]


def gateway_clients(store: Store, limit: int = 20, calls: int = 50) -> list[GatewayClient]:
    """The latest gateway sessions, newest first, each with its latest `calls` calls."""
    query = (
        sa.select(col(EventRecord.session_id), col(EventRecord.time), col(EventRecord.payload))
        .where(col(EventRecord.kind) == "session_started")
        .order_by(col(EventRecord.id).desc())
        .limit(SCANNED_STARTS)
    )
    with store.engine.connect() as connection:
        starts = [row for row in connection.execute(query) if row[2].get("model") == "gateway"]
    return [_client(store, session_id, time, calls) for session_id, time, _ in starts[:limit]]


def _client(store: Store, session_id: str, started: datetime, limit: int) -> GatewayClient:
    record = store.sessions.get(session_id)
    calls = _calls(store.events.list(session_id, kinds=CALL_KINDS))
    asked = {call.waiting_on for call in calls if call.waiting}
    if asked:  # a gateway that stopped while a call waited never said how it ended
        still = {
            approval.id for approval in store.approvals.many(asked) if approval.status == "pending"
        }
        calls = [call for call in calls if not call.waiting or call.waiting_on in still]
    return GatewayClient(
        session_id=session_id,
        client=record.title.removesuffix(TITLE_SUFFIX) or "an MCP client",
        agent=record.agent_name,
        started=started,
        calls=tuple(reversed(calls[-limit:])),
    )


def _calls(events: Sequence[EventRecord]) -> list[GatewayCall]:
    """Each decided call, with the start of its result (secrets masked) once it has one, and
    each call still waiting for a person, oldest first."""
    decided: dict[str, GatewayCall] = {}
    waiting: dict[str, GatewayCall] = {}
    for event in events:
        payload = event.payload
        if event.kind == "approval_requested":
            kinds = [str(concern.get("kind", "")) for concern in payload.get("concerns", [])]
            waiting[payload["approval_id"]] = GatewayCall(
                time=event.time,
                tool=payload["tool"],
                allowed=False,
                by="",
                reason=payload.get("reason", ""),
                waiting_on=payload["approval_id"],
                warning="; ".join(heading(kind) for kind in kinds),
            )
        elif event.kind == "tool_concern":
            _concern(decided, event)
        elif event.kind == "approval_resolved":
            waiting.pop(payload["approval_id"], None)
        elif event.kind == "tool_call_decided":
            call = payload["call"]
            decided[call["id"]] = GatewayCall(
                time=event.time,
                tool=call["name"],
                allowed=payload["allowed"],
                by=payload["by"],
                reason=payload.get("reason", ""),
            )
        elif payload.get("call_id") in decided:
            shown = mask_text(payload["text"])[:SHOWN_CHARS]  # masked whole, then cut
            update = {"result": shown, "is_error": payload["is_error"]}
            decided[payload["call_id"]] = decided[payload["call_id"]].model_copy(update=update)
    return sorted([*decided.values(), *waiting.values()], key=lambda call: call.time)


def _concern(decided: dict[str, GatewayCall], event: EventRecord) -> None:
    """A concern about a call's result marks that call; one about a tool is a row of its own."""
    payload = event.payload
    warning = heading(payload["concern"])
    call_id = payload.get("call_id")
    if call_id in decided:
        decided[call_id] = decided[call_id].model_copy(update={"warning": warning})
        return
    decided[f"concern-{event.seq}"] = GatewayCall(
        time=event.time,
        tool=payload["tool"],
        allowed=False,
        by="supervision",
        reason=payload.get("reason", ""),
        warning=warning,
    )
