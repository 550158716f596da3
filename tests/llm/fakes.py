"""Loopback model servers that speak the real wire protocols (Ollama's NDJSON, OpenAI's SSE)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

SILENT_S = 30.0  # how long the `silent` models keep a request waiting before any answer
STALLED_PART = "The first half of a rep"  # all that the `stalling` models send

DONE = {
    "message": {"role": "assistant", "content": ""},
    "done": True,
    "done_reason": "stop",
    "total_duration": 900_000_000,
    "prompt_eval_count": 12,
    "eval_count": 3,
}


def said(content: str) -> dict[str, Any]:
    """One line of an Ollama stream that carries text."""
    return {"message": {"role": "assistant", "content": content}, "done": False}


def called(*calls: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    """One line of an Ollama stream that carries whole tool calls."""
    tool_calls = [{"function": {"name": name, "arguments": args}} for name, args in calls]
    message = {"role": "assistant", "content": "", "tool_calls": tool_calls}
    return {"message": message, "done": False}


class FakeOllama:
    """Ollama's HTTP API on loopback in a thread; the request's model name picks the reply:
    a script of lines, or `missing` (404), `endless` (ticks until disconnected), `silent`
    (no answer for SILENT_S) or `stalling` (one line of text, then silence for SILENT_S)."""

    def __init__(self, scripts: dict[str, list[dict[str, Any]]] | None = None) -> None:
        self.scripts = dict(scripts or {})
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
        if model == "stalling":
            return StreamingResponse(self._stalling(request), media_type="application/x-ndjson")
        if model == "silent":
            await _until_disconnected(request)
        lines = "".join(json.dumps(line) + "\n" for line in self.scripts.get(model, [DONE]))
        return Response(lines, media_type="application/x-ndjson")

    async def _endless(self) -> AsyncIterator[str]:
        try:
            while True:
                yield json.dumps(said("tick ")) + "\n"
                await asyncio.sleep(0.02)
        finally:
            self.disconnected.set()

    async def _stalling(self, request: Request) -> AsyncIterator[str]:
        try:
            yield json.dumps(said(STALLED_PART)) + "\n"
            await _until_disconnected(request)
        finally:  # starlette cancels a stream whose client has left
            self.disconnected.set()

    async def _tags(self, request: Request) -> Response:
        models = [{"model": "llama3.2:1b", "name": "llama3.2:1b"}, {"model": "qwen3:0.6b"}]
        return JSONResponse({"models": models})


async def _until_disconnected(request: Request) -> None:
    deadline = time.monotonic() + SILENT_S
    while not await request.is_disconnected() and time.monotonic() < deadline:
        await asyncio.sleep(0.02)


def sse_event(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    """One OpenAI stream event with a delta."""
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


@dataclass
class FakeOpenAI:
    """An OpenAI-style SSE server on loopback; the request's model name picks the script, a
    model without one is a 404, `silent` keeps the request waiting for SILENT_S, and
    `stalling` sends the head and one event, then nothing for SILENT_S."""

    scripts: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    url: str = ""
    bodies: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = (await reader.readuntil(b"\r\n\r\n")).decode()
        fields = (line.partition(":") for line in head.split("\r\n")[1:] if line)
        headers = {name.lower(): value.strip() for name, _, value in fields}
        body = json.loads(await reader.readexactly(int(headers["content-length"])))
        self.headers.append(headers)
        self.bodies.append(body)
        if body["model"] in ("silent", "stalling"):  # no (more) answer until the client gives up
            if body["model"] == "stalling":
                writer.write(SSE_HEAD + _sse(sse_event({"content": STALLED_PART})))
                await writer.drain()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(reader.read(), SILENT_S)
            writer.close()
            return
        writer.write(self._reply(body["model"]))
        await writer.drain()
        writer.close()

    def _reply(self, model: str) -> bytes:
        if model not in self.scripts:
            error = json.dumps({"error": {"message": f"The model `{model}` does not exist"}})
            return (
                "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(error)}\r\nConnection: close\r\n\r\n{error}"
            ).encode()
        events = b"".join(_sse(event) for event in self.scripts[model])
        return SSE_HEAD + b": a comment line\n\n" + events + b"data: [DONE]\n\n"


SSE_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"


def _sse(event: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(event)}\n\n".encode()


async def serve_openai(fake: FakeOpenAI) -> asyncio.Server:
    """Start `fake` on a loopback port of the running loop and set its `/v1` url."""
    server = await asyncio.start_server(fake.handle, "127.0.0.1", 0)
    fake.url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1"
    return server
