"""The supervision timeline names what supervision found wrong: a tool's concern, a held call."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from foundry.session.events import (
    ApprovalRequested,
    Event,
    EventBody,
    SupervisorOff,
    ToolConcernRaised,
)
from foundry.supervision.concerns import Concern
from foundry.ui.session.timeline import COLOURS, TimelineModel, describe

pytestmark = pytest.mark.usefixtures("qapp")


def event(body: EventBody, seq: int = 1) -> Event:
    return Event(session_id="s", seq=seq, time=datetime.now(UTC), body=body)


def test_a_flagged_result_is_a_row_of_its_own() -> None:
    flagged = ToolConcernRaised(
        tool="web.fetch", concern="flagged-result", reason="'ignore previous' in ROT13"
    )
    row = describe(event(flagged))
    assert row is not None
    assert row.title == "tool web.fetch · ⚠ The result reads like a prompt injection"
    assert (row.reasoning, row.action) == ("'ignore previous' in ROT13", "concern")
    assert "concern" in COLOURS


def test_a_supervisor_left_off_is_said_to_be_off_not_deferred() -> None:
    off = SupervisorOff(
        supervisor_id="architect", supervisor="Architect", reason="it needs a capable model"
    )
    row = describe(event(off))
    assert row is not None
    assert (row.title, row.verdict) == ("Architect · off for this chat", "off")
    assert "deferred" not in row.title and row.reasoning == "it needs a capable model"


def test_a_held_call_says_what_held_it() -> None:
    changed = Concern(kind="definition-changed", reason="calc.add changed")
    tainted = Concern(kind="untrusted-content", reason="after web.fetch")
    requested = ApprovalRequested(
        approval_id="a", tool="calc.add", level="L0", reason="r",
        concerns=[changed.record(), tainted.record()],
    )  # fmt: skip
    plain = ApprovalRequested(approval_id="b", tool="calc.add", level="L0", reason="r")
    model = TimelineModel()
    model.replay([event(requested), event(plain, 2)])
    held, asked = (row.title for row in model.rows)
    assert held.startswith("tool calc.add · waiting for a human (L0) · ⚠ held: ")
    assert "definition changed" in held and "untrusted content" in held
    assert asked == "tool calc.add · waiting for a human (L0)"


def test_the_session_view_shows_concerns_in_its_timeline(qtbot: QtBot, tmp_path: Path) -> None:
    from foundry.llm.base import ToolCall
    from foundry.session.events import ToolCallDecided
    from foundry.ui.session.view import SessionView

    from .conftest import save_screenshot

    view = SessionView()
    qtbot.addWidget(view)
    view.resize(1200, 700)
    fetched = ToolCall(id="c1", name="web.fetch", arguments={"url": "https://a.example"})
    tainted = Concern(
        kind="untrusted-content",
        reason="the session read untrusted content from web.fetch at 10:42; this call sends "
        "data out: a message to #general",
    )
    view.timeline.replay(
        [
            event(ToolConcernRaised(
                tool="calc.add", concern="definition-changed",
                reason="calc.add changed since server 'calc' was trusted: its description",
            ), 1),
            event(ToolCallDecided(call=fetched, allowed=True, by="policy:reading-a-page"), 2),
            event(ToolConcernRaised(
                tool="web.fetch", concern="flagged-result", call_id="c1",
                reason="its result reads like a prompt injection: override-instructions",
            ), 3),
            event(ApprovalRequested(
                approval_id="a", tool="chat.post_message", level="L0",
                reason=f"rule x matched; but {tainted.reason}, so a person decides",
                concerns=[tainted.record()],
            ), 4),
        ]
    )  # fmt: skip
    view.show()
    qtbot.wait(50)
    assert view.timeline.rowCount() == 4
    save_screenshot(view.decisions, tmp_path, "timeline-concerns.png")
