"""The supervision timeline names what supervision found wrong: a tool's concern, a held call."""

from __future__ import annotations

from datetime import UTC, datetime

from foundry.session.events import ApprovalRequested, Event, EventBody, ToolConcernRaised
from foundry.supervision.concerns import Concern
from foundry.ui.timeline import COLOURS, TimelineModel, describe


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
