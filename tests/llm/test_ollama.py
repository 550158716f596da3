"""OllamaProvider against a real loopback server speaking Ollama's streaming chat protocol."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import AsyncGenerator, AsyncIterator, Iterator
from typing import Any, cast

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

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

DONE = {
    "message": {"role": "assistant", "content": ""},
    "done": True,
    "done_reason": "stop",
    "total_duration": 900_000_000,
    "prompt_eval_count": 12,
    "eval_count": 3,
}
TIME_TOOL = ToolSpec(
    name="get_time",
    description="The current time in a zone",
    parameters={
        "type": "object",
        "properties": {"zone": {"type": "string", "description": "IANA zone"}},
        "required": ["zone"],
    },
)


def _said(content: str) -> dict[str, Any]:
    return {"message": {"role": "assistant", "content": content}, "done": False}


def _called(*calls: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    tool_calls = [{"function": {"name": name, "arguments": args}} for name, args in calls]
    message = {"role": "assistant", "content": "", "tool_calls": tool_calls}
    return {"message": message, "done": False}


class FakeOllama:
    """Ollama's HTTP API on loopback in a thread; the request's model name picks the reply."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.disconnected = threading.Event()
        app = Starlette(
            routes=[
                Route("/api/chat", self._chat, methods=["POST"]),
                Route("/api/tags", self._tags, methods=["GET"]),
            ]
        )
        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._socket.getsockname()[1]}"
        config = uvicorn.Config(app, log_level="warning", lifespan="off")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._socket]}, daemon=True
        )

    def start(self) -> None:
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            assert time.monotonic() < deadline, "the fake Ollama server did not start"
            time.sleep(0.01)

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._socket.close()

    async def _chat(self, request: Request) -> Response:
        body = await request.json()
        self.bodies.append(body)
        model = body["model"]
        if model == "missing":
            return JSONResponse({"error": f"model '{model}' not found"}, status_code=404)
        if model == "endless":
            return StreamingResponse(self._endless(), media_type="application/x-ndjson")
        lines = "".join(json.dumps(line) + "\n" for line in SCRIPTS[model])
        return Response(lines, media_type="application/x-ndjson")

    async def _endless(self) -> AsyncIterator[str]:
        try:
            while True:
                yield json.dumps(_said("tick ")) + "\n"
                await asyncio.sleep(0.02)
        finally:
            self.disconnected.set()

    async def _tags(self, request: Request) -> Response:
        models = [{"model": "llama3.2:1b", "name": "llama3.2:1b"}, {"model": "qwen3:0.6b"}]
        return JSONResponse({"models": models})


SCRIPTS: dict[str, list[dict[str, Any]]] = {
    "talker": [_said("Hel"), _said("lo"), _said(" there"), DONE],
    "caller": [
        _called(("get_time", {"zone": "UTC"}), ("add", {"a": 1, "b": 2})),
        DONE | {"eval_count": 20},
    ],
    "broken": [_said("partial"), {"error": "the model runner crashed"}],
}


@pytest.fixture(scope="module")
def fake_ollama_server() -> Iterator[FakeOllama]:
    server = FakeOllama()
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
    started = time.perf_counter()
    with pytest.raises(ProviderError, match=r"within 0\.3 s") as raised:
        await _collect(provider.stream(_ask("endless", timeout_s=0.3)))

    assert time.perf_counter() - started < 3
    assert raised.value.retryable
    assert await _wait_for(fake_ollama.disconnected)
