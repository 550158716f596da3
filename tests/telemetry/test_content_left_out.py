"""By default no message, result or written content leaves the machine: the GenAI conventions'
switch (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT) is off, so spans keep the shape of a
chat (who decided what, tokens, times) and a call's arguments as the store's traces keep them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider

from foundry.runtime.engine import Engine
from foundry.supervision.outgoing import OutgoingMask
from foundry.telemetry.builder import CAPTURE_CONTENT, SpanBuilder
from foundry.telemetry.export import spans_of

from .conftest import attributes, supervised_chat


@pytest.fixture(autouse=True)
def content_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CAPTURE_CONTENT)


def test_a_chat_is_exported_without_its_messages_or_results(engine: Engine, tmp_path: Path) -> None:
    session_id = supervised_chat(engine, tmp_path / "clock")
    spans = spans_of(engine.store, session_id)
    exported = "\n".join(span.to_json() for span in spans)
    assert "What time is it in UTC and Tokyo?" not in exported
    assert "evening in Tokyo" not in exported
    keys = {key for span in spans for key in attributes(span)}
    assert not keys & {"input.value", "output.value", "gen_ai.tool.call.result"}
    assert "gen_ai.input.messages" not in keys and "gen_ai.output.messages" not in keys
    # what supervision decided is all there
    assert any(span.name.startswith("run_guardrail") for span in spans)
    assert "gen_ai.usage.output_tokens" in keys and "gen_ai.tool.call.arguments" in keys


@pytest.mark.parametrize("switch", ["", "false", "1", "yes"])
def test_arguments_keep_their_paths_and_lose_their_content_unless_asked_for(
    monkeypatch: pytest.MonkeyPatch, switch: str
) -> None:
    monkeypatch.setenv(CAPTURE_CONTENT, switch)  # only "true" turns it on, as the SDK's readers
    builder = SpanBuilder(TracerProvider().get_tracer("test"), OutgoingMask(), "s1")
    arguments = {"path": "notes/plan.md", "content": "The merger closes on Friday."}
    shown = builder.masked({"gen_ai.tool.call.arguments": arguments})
    written = json.loads(shown["gen_ai.tool.call.arguments"])
    assert written["path"] == "notes/plan.md"
    assert "merger" not in shown["gen_ai.tool.call.arguments"]
    assert written["content"]["content_length"] == len(arguments["content"])
