"""A chat in shadow mode: the supervisor's review runs beside the person's decision, and closing
the session cancels a review still running, leaving nothing and logging nothing."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from foundry.runtime.engine import Engine
from foundry.store import ApprovalRecord, TraceRecord
from foundry.supervision.resolution import resolve_approval

from .conftest import TOKYO_TURNS, write_agent

SLOW_APPROVAL = {  # the supervisor answers long after the test has ended the session
    "turns": [
        {"json": {"decision": "approve", "confidence": 0.9, "reasoning": "ok"}, "delay_s": 30}
    ]
}


def shadowed_agent(tmp_path: Path) -> Path:
    write_agent(tmp_path / "judge", SLOW_APPROVAL, servers={})
    policy = {
        "rules": [{"name": "ask", "tool": "*", "action": "human"}],
        "supervisorAgentPath": "../judge",
        "shadowMode": True,
        "loopDetection": False,
    }
    supervisors = [{"type": "policy", "id": "tool-policy", "config": policy}]
    return write_agent(tmp_path / "tokyo", TOKYO_TURNS, supervisors=supervisors)


def waited_for(found: Callable[[], object], what: str) -> None:
    deadline = time.monotonic() + 30
    while not found():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within 30 s: {what}")
        time.sleep(0.02)


def test_closing_a_session_cancels_its_running_shadow_review(
    engine: Engine, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    engine.store.traces.add(  # a past call: the supervisor judges, not escalates, the agent
        TraceRecord(
            agent_id="tokyo",
            tool="time.now",
            decision="allow",
            resolved_level="policy",
            resolved_by="policy:ask",
        )
    )
    session_id = engine.submit(engine.open_session(shadowed_agent(tmp_path))).result(60)
    sending = engine.submit(engine.send(session_id, "What time is it in Tokyo?"))
    asked: list[ApprovalRecord] = []
    waited_for(lambda: asked.extend(engine.store.approvals.list("pending")) or asked, "a question")
    waited_for(lambda: engine._shadows[session_id].running == 1, "the shadow review")
    resolve_approval(engine.store, asked[0].id, "approved", "human:ana")
    result = sending.result(60)  # the person's answer did not wait for the supervisor
    engine.submit(engine.close_session(session_id)).result(30)

    assert result.reply == "It is evening in Tokyo (Asia/Tokyo)."
    assert session_id not in engine._shadows
    assert engine.store.approvals.get(asked[0].id).shadow_verdict is None
    kinds = [event.kind for event in engine.submit(engine.events(session_id)).result()]
    assert "approval_resolved" in kinds and "shadow_verdict" not in kinds
    assert not caplog.records
