"""A tool's card in the chat says who decided its call, and which way."""

from __future__ import annotations

from datetime import UTC, datetime

from pytestqt.qtbot import QtBot

from foundry.llm.base import ChatMessage, ToolCall
from foundry.session.events import Event, EventBody, MessageAdded, ToolCallDecided
from foundry.ui.session.conversation import ConversationModel


def event(seq: int, body: EventBody) -> Event:
    return Event(session_id="s", seq=seq, time=datetime.now(UTC), body=body)


def test_a_denied_call_says_who_denied_it_and_an_allowed_one_who_approved_it(
    qtbot: QtBot,
) -> None:
    model = ConversationModel()
    denied = ToolCall(id="c1", name="time.convert_time", arguments={})
    allowed = ToolCall(id="c2", name="time.get_current_time", arguments={})
    for seq, body in enumerate(
        [
            ToolCallDecided(call=denied, allowed=False, by="policy:no-conversions"),
            ToolCallDecided(call=allowed, allowed=True, by="human:gui:ana"),
            MessageAdded(message=ChatMessage(role="tool", content="no", tool_call_id="c1",
                                             name="time.convert_time")),
            MessageAdded(message=ChatMessage(role="tool", content="12:00", tool_call_id="c2",
                                             name="time.get_current_time")),
        ],
        start=1,
    ):  # fmt: skip
        model.apply(event(seq, body))
    details = [row.detail for row in model.rows]
    assert details == [
        "time.convert_time, denied by policy:no-conversions",
        "time.get_current_time, approved by human:gui:ana",
    ]
