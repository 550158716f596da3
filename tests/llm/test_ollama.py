"""OllamaProvider against a real loopback server speaking Ollama's streaming chat protocol."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import AsyncGenerator, AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, cast

import pytest

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
from foundry.llm.ollama import OllamaProvider
from tests.llm.fakes import DONE, STALLED_PART, FakeOllama, called, said

TIME_TOOL = ToolSpec(
    name="get_time",
    description="The current time in a zone",
    parameters={
        "type": "object",
        "properties": {"zone": {"type": "string", "description": "IANA zone"}},
        "required": ["zone"],
    },
)
SCRIPTS: dict[str, list[dict[str, Any]]] = {
    "talker": [said("Hel"), said("lo"), said(" there"), DONE],
    "caller": [
        called(("get_time", {"zone": "UTC"}), ("add", {"a": 1, "b": 2})),
        DONE | {"eval_count": 20},
    ],
    "broken": [said("partial"), {"error": "the model runner crashed"}],
}


@pytest.fixture(scope="module")
def fake_ollama_server() -> Iterator[FakeOllama]:
    server = FakeOllama(SCRIPTS)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def fake_ollama(fake_ollama_server: FakeOllama) -> FakeOllama:
    fake_ollama_server.bodies.clear()
    fake_ollama_server.disconnected.clear()
    return fake_ollama_server


@pytest.fixture
async def provider(fake_ollama: FakeOllama) -> AsyncIterator[OllamaProvider]:
    provider = OllamaProvider(host=fake_ollama.url, timeout_s=10)
    yield provider
    await provider.aclose()


def _ask(model: str, **fields: Any) -> ChatRequest:
    return ChatRequest(model=model, messages=(ChatMessage(role="user", content="hi"),), **fields)


async def _collect(stream: AsyncIterator[Chunk]) -> list[Chunk]:
    return [chunk async for chunk in stream]


def _unused_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def _wait_for(event: threading.Event) -> bool:
    return await asyncio.to_thread(event.wait, 5)


def test_provider_speaks_the_protocol() -> None:
    assert isinstance(OllamaProvider(host="http://127.0.0.1:1"), ModelProvider)
    assert OllamaProvider.name == "ollama"


async def test_text_streams_as_deltas_then_usage_from_the_done_line(
    provider: OllamaProvider,
) -> None:
    chunks = await _collect(provider.stream(_ask("talker")))

    assert [c.text for c in chunks if isinstance(c, TextDelta)] == ["Hel", "lo", " there"]
    usage = chunks[-1]
    assert isinstance(usage, Usage)
    assert (usage.input_tokens, usage.output_tokens, usage.stop_reason) == (12, 3, "stop")
    assert usage.first_token_s is not None
    assert 0 < usage.first_token_s <= usage.total_s


async def test_tool_calls_arrive_whole_with_generated_ids(provider: OllamaProvider) -> None:
    chunks = await _collect(provider.stream(_ask("caller", tools=(TIME_TOOL,))))

    calls = [c.call for c in chunks if isinstance(c, ToolCallChunk)]
    assert calls == [
        ToolCall(id="call_0", name="get_time", arguments={"zone": "UTC"}),
        ToolCall(id="call_1", name="add", arguments={"a": 1, "b": 2}),
    ]
    usage = chunks[-1]
    assert isinstance(usage, Usage)
    assert (usage.output_tokens, usage.stop_reason) == (20, "tool_calls")


async def test_conversation_with_tool_results_is_sent_in_ollamas_shape(
    provider: OllamaProvider, fake_ollama: FakeOllama
) -> None:
    call = ToolCall(id="call_0", name="get_time", arguments={"zone": "UTC"})
    messages = (
        ChatMessage(role="system", content="Be brief."),
        ChatMessage(role="user", content="What time is it?"),
        ChatMessage(role="assistant", tool_calls=(call,)),
        ChatMessage(role="tool", content="12:00", tool_call_id="call_0", name="get_time"),
    )
    request = ChatRequest(model="talker", messages=messages, tools=(TIME_TOOL,))
    await _collect(provider.stream(request))

    sent = fake_ollama.bodies[-1]
    assert sent["model"] == "talker"
    assert sent["stream"] is True
    assert sent["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "What time is it?"},
        {
            "role": "assistant",
            "tool_calls": [{"function": {"name": "get_time", "arguments": {"zone": "UTC"}}}],
        },
        {"role": "tool", "content": "12:00", "tool_name": "get_time"},
    ]
    assert sent["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "get_time",
                "description": "The current time in a zone",
                "parameters": TIME_TOOL.parameters,
            },
        }
    ]


async def test_schema_and_sampling_options_are_sent(
    provider: OllamaProvider, fake_ollama: FakeOllama
) -> None:
    schema = {
        "type": "object",
        "properties": {"verdict": {"type": "string", "enum": ["allow", "deny"]}},
        "required": ["verdict"],
    }
    request = _ask("talker", response_schema=schema, temperature=0.2, top_p=0.9, max_tokens=32)
    await _collect(provider.stream(request))

    sent = fake_ollama.bodies[-1]
    assert sent["format"] == schema
    assert sent["options"] == {"temperature": 0.2, "top_p": 0.9, "num_predict": 32}
    assert "tools" not in sent or not sent["tools"]


async def test_plain_request_sends_no_format_and_no_options(
    provider: OllamaProvider, fake_ollama: FakeOllama
) -> None:
    await _collect(provider.stream(_ask("talker")))

    sent = fake_ollama.bodies[-1]
    assert "format" not in sent
    assert "options" not in sent


async def test_missing_model_says_how_to_pull_it(provider: OllamaProvider) -> None:
    with pytest.raises(ProviderError, match=r"`ollama pull missing`") as raised:
        await _collect(provider.stream(_ask("missing")))
    assert not raised.value.retryable


async def test_error_line_mid_stream_fails_after_the_text_so_far(
    provider: OllamaProvider,
) -> None:
    received: list[Chunk] = []
    with pytest.raises(ProviderError, match="Ollama failed: the model runner crashed"):
        async for chunk in provider.stream(_ask("broken")):
            received.append(chunk)
    assert received == [TextDelta(text="partial")]


async def test_server_down_is_a_retryable_error_naming_the_host() -> None:
    host = f"http://127.0.0.1:{_unused_port()}"
    provider = OllamaProvider(host=host, timeout_s=5)
    try:
        with pytest.raises(ProviderError) as raised:
            await _collect(provider.stream(_ask("talker")))
        with pytest.raises(ProviderError, match="not reachable"):
            await provider.list_models()
    finally:
        await provider.aclose()
    assert raised.value.retryable
    assert f"Ollama is not reachable at {host}" in str(raised.value)
    assert "ollama serve" in str(raised.value)


async def test_models_are_listed_from_the_tags_endpoint(provider: OllamaProvider) -> None:
    assert await provider.list_models() == ["llama3.2:1b", "qwen3:0.6b"]


async def test_host_falls_back_to_the_ollama_host_variable(
    fake_ollama: FakeOllama, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    provider = OllamaProvider()
    try:
        chunks = await _collect(provider.stream(_ask("talker")))
    finally:
        await provider.aclose()
    assert provider.host == fake_ollama.url
    assert isinstance(chunks[-1], Usage)


def test_host_defaults_to_the_local_ollama(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    assert OllamaProvider().host == "http://127.0.0.1:11434"


async def test_cancelling_the_consumer_closes_the_connection(
    provider: OllamaProvider, fake_ollama: FakeOllama
) -> None:
    first = asyncio.Event()

    async def consume() -> None:
        async for chunk in provider.stream(_ask("endless")):
            if isinstance(chunk, TextDelta):
                first.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(first.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 5)

    assert await _wait_for(fake_ollama.disconnected)


async def test_closing_the_stream_early_closes_the_connection(
    provider: OllamaProvider, fake_ollama: FakeOllama
) -> None:
    stream = cast(AsyncGenerator[Chunk, None], provider.stream(_ask("endless")))
    first = await asyncio.wait_for(anext(stream), 5)
    await asyncio.wait_for(stream.aclose(), 5)

    assert first == TextDelta(text="tick ")
    assert await _wait_for(fake_ollama.disconnected)


async def test_reply_slower_than_the_request_timeout_fails_and_disconnects(
    provider: OllamaProvider, fake_ollama: FakeOllama
) -> None:
    # the server would tick for ever: only the request's 0.3 s ends the call
    with pytest.raises(ProviderError, match=r"gave no answer within 0\.3 s") as raised:
        await asyncio.wait_for(_collect(provider.stream(_ask("endless", timeout_s=0.3))), 30)

    assert raised.value.retryable
    assert await _wait_for(fake_ollama.disconnected)


async def test_a_server_that_never_answers_fails_at_the_request_timeout(
    provider: OllamaProvider,
) -> None:
    with pytest.raises(ProviderError, match=r"no answer within 0\.3 s") as raised:
        await asyncio.wait_for(_collect(provider.stream(_ask("silent", timeout_s=0.3))), 10)
    assert raised.value.retryable


async def test_a_request_may_wait_longer_than_the_clients_own_timeout(
    fake_ollama: FakeOllama,
) -> None:
    provider = OllamaProvider(host=fake_ollama.url, timeout_s=0.2)
    try:
        stream = provider.stream(_ask("silent", timeout_s=0.8))
        with pytest.raises(ProviderError, match=r"no answer within 0\.8 s"):  # not "unreachable"
            await asyncio.wait_for(_collect(stream), 8)
    finally:
        await provider.aclose()


async def test_a_server_that_accepts_and_stays_silent_is_given_up_after_the_first_byte_limit(
    fake_ollama: FakeOllama,
) -> None:
    provider = OllamaProvider(host=fake_ollama.url, first_byte_timeout_s=0.3)
    try:
        stream = provider.stream(_ask("silent", timeout_s=60))
        with pytest.raises(
            ProviderError, match=r"accepted the connection but sent nothing for 0\.3 s"
        ) as raised:
            await asyncio.wait_for(_collect(stream), 20)
    finally:
        await provider.aclose()
    assert not raised.value.retryable  # a silent server is not asked four times over
    assert "FIRST_BYTE_TIMEOUT" in str(raised.value)


async def test_a_reply_that_stops_after_its_first_part_is_given_up_once_with_that_part(
    fake_ollama: FakeOllama,
) -> None:
    """One line of text, then nothing: given up after the idle limit (the first-byte one),
    not the request's 60 s, not to be retried, and the connection closed."""
    provider = OllamaProvider(host=fake_ollama.url, first_byte_timeout_s=0.3)
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
    assert await _wait_for(fake_ollama.disconnected)


class _NotOllama(BaseHTTPRequestHandler):
    """A web server that is not Ollama: every path is 404 with an HTML page."""

    def _not_found(self) -> None:
        body = b"<html><body>404 Not Found</body></html>"
        self.send_response(404)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _not_found

    def log_message(self, *args: Any) -> None:
        return None


@pytest.fixture
def not_ollama() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _NotOllama)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


async def test_a_404_from_a_server_that_is_not_ollama_says_so(not_ollama: str) -> None:
    provider = OllamaProvider(host=not_ollama)
    try:
        with pytest.raises(ProviderError, match="not an Ollama server at") as raised:
            await _collect(provider.stream(_ask("llama3.2:1b")))
    finally:
        await provider.aclose()
    assert "not installed" not in str(raised.value) and not raised.value.retryable
