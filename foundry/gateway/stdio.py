"""The gateway's stdio: the process's stdin and stdout as pipes on the event loop, for the mcp
SDK's stdio transport (which still reads and writes the JSON-RPC messages).

The SDK's own files read each line and write each reply in a worker thread (three thread hops a
call), and a read under way cannot be stopped, so SIGTERM could not end serving until the client
wrote again. Pipes on the loop do neither. As with the SDK, while serving fd 0 reads the null
device and fd 1 writes to stderr: stray output of the process or its children never reaches the
client. Where stdio is not a pipe or a socket (Windows, a terminal, a file), the SDK's files serve.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import stat
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import pydantic_core
from mcp.server.stdio import stdio_server

LINE_LIMIT = 64 * 1024 * 1024  # the longest message a client may send
MAX_NESTING = 201  # levels of arrays and objects the SDK's JSON parser reads (pydantic-core 2.50)
PARSE_ERROR = -32700
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[][{}]')  # a string, or a bracket outside strings
_ID_VALUE = re.compile(r'\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")')


@asynccontextmanager
async def stdio_streams() -> AsyncIterator[tuple[Any, Any]]:
    """The read and write streams of the SDK's stdio transport over this process's stdio."""
    if sys.platform == "win32" or not (_is_pipe(0) and _is_pipe(1)):
        async with stdio_server() as streams:
            yield streams
        return
    with (
        _diverted(0, os.open(os.devnull, os.O_RDONLY)) as wire_in,
        _diverted(1, os.dup(2)) as wire_out,
    ):
        lines, output = await _open_pipes(wire_in, wire_out)
        try:
            async with stdio_server(lines, output) as streams:  # type: ignore[arg-type]
                yield streams
        finally:
            lines.close()
            output.close()


class _Lines:
    """Lines from the client, as the SDK reads them from its file."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        transport: asyncio.BaseTransport,
        answer: Callable[[str], None],
    ) -> None:
        self._reader = reader
        self._transport = transport
        self._answer = answer

    def __aiter__(self) -> _Lines:
        return self

    async def __anext__(self) -> str:
        """The next line the SDK can read; a request nested too deeply for its JSON parser is
        answered here with an error (the SDK drops such a line unanswered, and the client would
        wait for ever)."""
        while True:
            line = await self._next_line()
            refusal = too_deep_refusal(line)
            if refusal is None:
                return line
            self._answer(refusal)

    async def _next_line(self) -> str:
        """The next line; a line over LINE_LIMIT is dropped whole (the client gets no answer to
        it, as to any message that is not JSON-RPC) and serving goes on."""
        dropping = False
        while True:
            try:
                line = await self._reader.readuntil(b"\n")
            except asyncio.IncompleteReadError as end:  # the input ended
                if dropping or not end.partial:
                    raise StopAsyncIteration from None
                line = end.partial
            except asyncio.LimitOverrunError as over:  # its start is in the buffer: let it go
                if not dropping:
                    print(f"gateway: dropped a message over {LINE_LIMIT} bytes", file=sys.stderr)
                dropping = True
                await self._reader.readexactly(over.consumed)
                continue
            if not dropping:
                return line.decode("utf-8", errors="replace")
            dropping = False  # that was the rest of the dropped line

    def close(self) -> None:
        self._transport.close()


class _Output:
    """Messages to the client, as the SDK writes them to its file."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def write(self, text: str) -> None:
        self.write_now(text)

    def write_now(self, text: str) -> None:
        self._writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self._writer.drain()

    def close(self) -> None:
        self._writer.close()


async def _open_pipes(wire_in: int, wire_out: int) -> tuple[_Lines, _Output]:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    reading, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(wire_in, "rb", buffering=0)
    )
    writing, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(wire_out, "wb", buffering=0)
    )
    output = _Output(asyncio.StreamWriter(writing, protocol, None, loop))
    return _Lines(reader, reading, lambda line: output.write_now(line + "\n")), output


def too_deep_refusal(line: str) -> str | None:
    """The JSON-RPC error answering a request nested deeper than the SDK's JSON parser reads
    (MAX_NESTING levels); None for any other line (a notification too: it gets no answer)."""
    if line.count("{") + line.count("[") <= MAX_NESTING:  # too few to nest that deep
        return None
    try:
        pydantic_core.from_json(line)
    except ValueError as error:
        request_id = _top_level_id(line) if "recursion limit" in str(error) else None
        if request_id is not None:
            message = f"nested more than {MAX_NESTING} levels deep, deeper than the gateway reads"
            error_body = {"code": PARSE_ERROR, "message": message}
            return json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error_body})
    return None


def _top_level_id(line: str) -> int | str | None:
    """The `id` member of the JSON object `line` holds, read without parsing the rest."""
    depth = 0
    for token in _TOKEN.finditer(line):
        text = token.group()
        if text in ("{", "["):
            depth += 1
        elif text in ("}", "]"):
            depth -= 1
        elif depth == 1 and _read(text) == "id":
            value = _ID_VALUE.match(line, token.end())
            request_id = _read(value.group(1)) if value is not None else None
            if isinstance(request_id, int | str):
                return request_id
    return None


def _read(text: str) -> Any:
    """A JSON string or number; None when it is not valid (`"\\x"`)."""
    try:
        return json.loads(text)
    except ValueError:
        return None


@contextmanager
def _diverted(fd: int, diversion: int) -> Iterator[int]:
    """Point `fd` at `diversion` while in the block; yields a duplicate of what `fd` pointed at
    (the pipe's to close), which `fd` points at again afterwards."""
    saved = os.dup(fd)
    wire = os.dup(fd)
    os.dup2(diversion, fd)
    os.close(diversion)
    try:
        yield wire
    finally:
        os.dup2(saved, fd)
        os.close(saved)


def _is_pipe(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)
