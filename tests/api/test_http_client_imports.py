"""An async HTTP request (the approvals API's clients, Ollama's, the MCP SDK's) looks for no module.

httpcore asks `sniffio` which event loop it runs on, several times a request; when sniffio is not
installed, every one of those questions is a failed import, a search of the whole module path.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType

import httpx

RESPONSE = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: text/plain\r\n\r\nok"


class LookedFor:
    """A finder that only records the modules asked for."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def find_spec(
        self, name: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        self.names.append(name)
        return None


async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while (await reader.readline()) not in (b"\r\n", b""):
        pass
    writer.write(RESPONSE)
    await writer.drain()
    writer.close()


async def test_an_async_request_imports_nothing() -> None:
    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    looked_for = LookedFor()
    async with server, httpx.AsyncClient() as client:
        await client.get(f"http://127.0.0.1:{port}/")  # the first request may import lazily
        sys.meta_path.insert(0, looked_for)
        try:
            for _ in range(3):
                response = await client.get(f"http://127.0.0.1:{port}/")
                assert response.text == "ok"
        finally:
            sys.meta_path.remove(looked_for)
    assert looked_for.names == []
