"""The scripted model replays its file the same way every time."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from foundry.llm.base import (
    ChatMessage,
    ChatRequest,
    ProviderError,
    TextDelta,
    ToolCallChunk,
    Usage,
)
from foundry.llm.registry import ModelChoice, open_provider
from foundry.llm.scripted import ScriptedProvider

SCRIPT = """\
turns:
  - text: "Checking the clock."
    tool_calls:
      - name: time.get_current_time
        arguments: {timezone: Asia/Tokyo}
  - json: {decision: allow, confidence: 0.9}
  - error: outage
"""


def history(assistant_messages: int) -> ChatRequest:
    messages = [ChatMessage(role="user", content="hi there")]
    messages += [ChatMessage(role="assistant", content="x")] * assistant_messages
    return ChatRequest(model="x", messages=tuple(messages))


async def chunks(provider: ScriptedProvider, request: ChatRequest) -> list[object]:
    return [chunk async for chunk in provider.stream(request)]


@pytest.fixture
def provider(tmp_path: Path) -> ScriptedProvider:
    (tmp_path / "turns.yaml").write_text(SCRIPT)
    provider = open_provider(ModelChoice.parse("scripted:turns.yaml"), {}, tmp_path)
    assert isinstance(provider, ScriptedProvider)
    return provider


async def test_the_turn_follows_the_number_of_assistant_messages(
    provider: ScriptedProvider,
) -> None:
    first = await chunks(provider, history(0))
    assert "".join(c.text for c in first if isinstance(c, TextDelta)) == "Checking the clock."
    [call] = [c.call for c in first if isinstance(c, ToolCallChunk)]
    assert (call.name, call.arguments) == ("time.get_current_time", {"timezone": "Asia/Tokyo"})
    assert isinstance(first[-1], Usage) and first[-1].stop_reason == "tool_calls"
    again = await chunks(provider, history(0))
    assert again[:-1] == first[:-1]  # replays identically (timings aside)


async def test_json_turns_and_error_turns(provider: ScriptedProvider) -> None:
    second = await chunks(provider, history(1))
    text = "".join(c.text for c in second if isinstance(c, TextDelta))
    assert text == '{"decision": "allow", "confidence": 0.9}'
    with pytest.raises(ProviderError, match="outage") as error:
        await chunks(provider, history(2))
    assert error.value.retryable
    with pytest.raises(ProviderError, match="has 3 turn"):
        await chunks(provider, history(3))


def test_a_malformed_script_names_the_problem(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("turns:\n  - txt: typo\n")
    with pytest.raises(ProviderError, match="malformed"):
        ScriptedProvider(tmp_path / "bad.yaml")
    with pytest.raises(ProviderError, match="no scripted model file"):
        ScriptedProvider(tmp_path / "missing.yaml")


def test_model_references_split_at_the_first_colon() -> None:
    choice = ModelChoice.parse("ollama:qwen2.5:7b")
    assert (choice.provider, choice.model) == ("ollama", "qwen2.5:7b")
    assert str(ModelChoice.parse(None)) == "embedded:smollm2"
    with pytest.raises(ProviderError, match="provider:model"):
        ModelChoice.parse("qwen")


async def test_a_slow_turn_fails_at_the_request_timeout(tmp_path: Path) -> None:
    (tmp_path / "slow.yaml").write_text("turns:\n  - text: one two three\n    delay_s: 5\n")
    slow = ScriptedProvider(tmp_path / "slow.yaml")
    request = history(0).model_copy(update={"timeout_s": 0.1})
    with pytest.raises(ProviderError, match=r"no answer within 0\.1 s") as raised:
        await asyncio.wait_for(chunks(slow, request), 5)
    assert raised.value.retryable
