"""Finding Ollama and OpenAI-compatible servers: real HTTP on loopback, as each server answers."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator
from typing import Any

import pytest

from foundry.llm.discovery import FoundServer, ServerToAsk, find_model_servers, servers_to_ask
from foundry.llm.ollama import DEFAULT_HOST

HANG_GUARD_S = 30  # a probe that never gives up fails here instead of hanging the suite
OLLAMA_TAGS = {
    "models": [
        {"name": "nomic-embed-text:latest", "model": "nomic-embed-text:latest"},
        {"name": "llama3.2:latest", "model": "llama3.2:latest"},
        {"name": "qwen3:4b", "model": "qwen3:4b"},
    ]
}


class JsonServer:
    """An HTTP server on loopback that answers GET `path` with its JSON, other paths with 404;
    `silent` accepts and never answers. It records the paths asked."""

    def __init__(self, routes: dict[str, Any], silent: bool = False) -> None:
        self.routes = routes
        self.silent = silent
        self.asked: list[str] = []
        self.headers: list[str] = []
        self._server: asyncio.Server | None = None
        self.url = ""

    async def __aenter__(self) -> JsonServer:
        self._server = await asyncio.start_server(self._answer, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = (await reader.readuntil(b"\r\n\r\n")).decode()
        self.asked.append(head.split()[1])
        self.headers.append(head)
        if self.silent:
            await reader.read()  # until the client gives up
            writer.close()
            return
        body = self.routes.get(head.split()[1])
        status = "200 OK" if body is not None else "404 Not Found"
        data = json.dumps(body if body is not None else {"error": "not found"}).encode()
        writer.write(
            f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n".encode()
            + data
        )
        await writer.drain()
        writer.close()


@pytest.fixture
async def ollama() -> AsyncIterator[JsonServer]:
    async with JsonServer({"/api/tags": OLLAMA_TAGS}) as server:
        yield server


def closed_port_url() -> str:
    """A loopback address nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}"


async def found(asked: list[ServerToAsk]) -> list[FoundServer]:
    return await asyncio.wait_for(find_model_servers(asked, timeout_s=1.0), HANG_GUARD_S)


async def test_a_running_ollama_is_found_with_its_chat_models(ollama: JsonServer) -> None:
    [server] = await found([ServerToAsk(provider="ollama", settings={"OLLAMA_HOST": ollama.url})])
    assert ollama.asked == ["/api/tags"]
    assert server.models == ("nomic-embed-text:latest", "llama3.2:latest", "qwen3:4b")
    assert server.chat_models == ("llama3.2:latest", "qwen3:4b")  # the embedding model is not
    assert server.suggested == "llama3.2:latest"
    assert server.reference("llama3.2:latest") == "ollama:llama3.2:latest"
    assert server.settings == {"OLLAMA_HOST": ollama.url}
    assert server.label == f"Ollama at {ollama.url}"


async def test_nothing_listening_is_nothing_found() -> None:
    asked = [ServerToAsk(provider="ollama", settings={"OLLAMA_HOST": closed_port_url()})]
    assert await found(asked) == []


async def test_a_server_that_never_answers_is_given_up() -> None:
    async with JsonServer({}, silent=True) as silent:
        asked = [ServerToAsk(provider="ollama", settings={"OLLAMA_HOST": silent.url})]
        assert await found(asked) == []
        assert silent.asked == ["/api/tags"]


async def test_an_ollama_with_only_embedding_models_is_not_offered() -> None:
    tags = {"models": [{"name": "nomic-embed-text:latest", "model": "nomic-embed-text:latest"}]}
    async with JsonServer({"/api/tags": tags}) as server:
        asked = [ServerToAsk(provider="ollama", settings={"OLLAMA_HOST": server.url})]
        assert await found(asked) == []


async def test_an_openai_compatible_server_is_found_with_its_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("STUDIO_KEY", "sk-local-123")
    listing = {"object": "list", "data": [{"id": "qwen2.5-7b-instruct", "object": "model"}]}
    async with JsonServer({"/v1/models": listing}) as studio:
        settings = {"BASE_URL": f"{studio.url}/v1", "API_KEY": "env://STUDIO_KEY"}
        [server] = await found([ServerToAsk(provider="lmstudio", settings=settings)])
    assert server.suggested == "qwen2.5-7b-instruct"
    assert server.reference("qwen2.5-7b-instruct") == "lmstudio:qwen2.5-7b-instruct"
    assert server.label == f"lmstudio at {studio.url}/v1"
    assert "authorization: bearer sk-local-123" in studio.headers[0].lower()


async def test_every_server_is_asked_at_once_and_only_answers_count(ollama: JsonServer) -> None:
    asked = [
        ServerToAsk(provider="ollama", settings={"OLLAMA_HOST": ollama.url}),
        ServerToAsk(provider="studio", settings={"BASE_URL": f"{closed_port_url()}/v1"}),
    ]
    assert [server.provider for server in await found(asked)] == ["ollama"]


def test_ollama_is_asked_at_its_default_place_with_nothing_to_write(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    [asked] = servers_to_ask({})
    assert (asked.provider, asked.url, asked.settings) == ("ollama", DEFAULT_HOST, {})


def test_the_environment_and_the_agent_say_where_ollama_is(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:11500")
    [from_environment] = servers_to_ask({})
    assert from_environment.settings == {"OLLAMA_HOST": "http://127.0.0.1:11500"}
    configured = {"ollama": {"OLLAMA_HOST": "http://gpu-box:11434"}}
    assert servers_to_ask(configured)[0].url == "http://gpu-box:11434"


def test_only_the_agents_openai_compatible_providers_are_asked_besides_ollama() -> None:
    providers = {
        "embedded": {},
        "studio": {"BASE_URL": "http://127.0.0.1:1234/v1"},
        "openai": {"OPENAI_API_KEY": "env://OPENAI_API_KEY"},  # no BASE_URL: not looked for
    }
    assert [server.provider for server in servers_to_ask(providers)] == ["ollama", "studio"]
