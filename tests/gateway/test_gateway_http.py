"""The gateway over streamable HTTP: loopback only, the API token required, a session per client."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import Future
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from foundry.api.server import ApiServer
from foundry.gateway.http import http_app
from foundry.gateway.server import Gateway
from foundry.gateway.stdio import LINE_LIMIT
from foundry.runtime.engine import Engine
from foundry.store import Store
from tests.gateway.test_gateway_stdio import POLICY, gateway_agent, text_of
from tests.processes import wait_for_exit

TOKEN = "g" * 43


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def http_gateway(tmp_path: Path, foundry_home: Path) -> Iterator[str]:
    agent = gateway_agent(tmp_path / "agent", [POLICY])
    port = free_port()
    env = {**os.environ, "FOUNDRY_HOME": str(foundry_home), "FOUNDRY_API_TOKEN": TOKEN}
    command = [sys.executable, "-m", "foundry.cli", "gateway", "--http", "--port", str(port)]
    process = subprocess.Popen([*command, str(agent)], env=env, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        assert process.stderr is not None
        line = process.stderr.readline()  # "gateway at http://127.0.0.1:PORT/mcp: ..."
        assert url in line, line
        yield url
    finally:
        process.terminate()
        wait_for_exit(process, 30)


@asynccontextmanager
async def http_client(url: str, token: str = TOKEN) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        streamable_http_client(url, http_client=http) as (read, write, *_),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


async def test_two_clients_over_http_are_two_recorded_sessions(http_gateway: str) -> None:
    async with http_client(http_gateway) as first, http_client(http_gateway) as second:
        assert "time__get_current_time" in {t.name for t in (await first.list_tools()).tools}
        one = await first.call_tool("time__get_current_time", {"timezone": "UTC"})
        two = await second.call_tool("time__get_current_time", {"timezone": "Asia/Tokyo"})
        denied = await second.call_tool(
            "time__convert_time",
            {"source_timezone": "UTC", "time": "12:00", "target_timezone": "UTC"},
        )
    assert "UTC" in text_of(one) and "Asia/Tokyo" in text_of(two)
    assert denied.is_error and "no-conversions" in text_of(denied)
    store = Store.open()
    try:  # calls are recorded after their replies, within GATHER_S
        assert await recorded_decisions(store, [1, 2]) == [1, 2]
    finally:
        store.close()


async def test_http_clients_are_told_that_tool_list_changes_are_sent(http_gateway: str) -> None:
    async with http_client(http_gateway) as client:
        capabilities = client.server_capabilities
    assert capabilities is not None and capabilities.tools is not None
    assert capabilities.tools.list_changed


async def recorded_decisions(store: Store, expected: list[int]) -> list[int]:
    """The gateway sessions' numbers of decided calls, once they are `expected` (or after 10 s)."""
    deadline = time.monotonic() + 10
    while True:
        sessions = [s for s in store.sessions.list() if s.title.endswith("via the gateway")]
        kinds = ("tool_call_decided",)
        decided = sorted(len(store.events.list(s.id, kinds=kinds)) for s in sessions)
        if decided == expected or time.monotonic() > deadline:
            return decided
        await asyncio.sleep(0.05)


@pytest.mark.parametrize("token", ["", "wrong-token-" + "x" * 40])
def test_without_the_token_nothing_is_served(http_gateway: str, token: str) -> None:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    response = httpx.post(http_gateway, json=body, headers=headers, timeout=10)
    assert response.status_code == 401


@pytest.mark.parametrize("size", [5 << 20, LINE_LIMIT + 1], ids=["5 MiB", "over the limit"])
async def test_a_body_is_read_up_to_the_stdio_message_limit_and_no_further(
    http_gateway: str, size: int
) -> None:
    """A message as long as stdio takes is taken over HTTP too (the SDK's own limit is 4 MiB);
    a longer one gets 413 before it is read whole (sent in chunks: no length to refuse it by),
    and serving goes on."""
    headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
    headers["Accept"] = "application/json, text/event-stream"
    head = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"pad":"'
    tail = b'"}}}'

    async def chunks() -> AsyncIterator[bytes]:
        yield head
        left = size - len(head) - len(tail)
        while left > 0:
            yield b"x" * min(left, 1 << 20)
            left -= 1 << 20
        yield tail

    async with httpx.AsyncClient(timeout=60) as http:
        response = await http.post(http_gateway, content=chunks(), headers=headers)
    # 400: read whole and answered, a ping outside any session being a bad request
    assert response.status_code == (413 if size > LINE_LIMIT else 400), response.text

    async with http_client(http_gateway) as client:
        assert (await client.list_tools()).tools


async def test_a_request_nested_too_deep_to_read_gets_400_and_serving_goes_on(
    http_gateway: str,
) -> None:
    """The SDK's JSON parser reads 201 levels; a deeper request is answered, not left hanging."""
    headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
    headers["Accept"] = "application/json, text/event-stream"
    nested = "[" * 1000 + "]" * 1000
    body = '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"deep":' + nested + "}}}"
    async with httpx.AsyncClient(timeout=30) as http:
        response = await http.post(http_gateway, content=body, headers=headers)
    assert response.status_code == 400 and "Parse error" in response.text, response.text
    async with http_client(http_gateway) as client:
        assert (await client.list_tools()).tools


def test_it_listens_on_loopback_only(http_gateway: str) -> None:
    port = int(http_gateway.rsplit(":", 1)[1].split("/")[0])
    listening = [
        fields[1]
        for table in ("/proc/net/tcp", "/proc/net/tcp6")
        if Path(table).exists()
        for fields in (line.split() for line in Path(table).read_text().splitlines()[1:])
        if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port
    ]
    assert listening == [f"0100007F:{port:04X}"]  # 127.0.0.1, and nothing else


# --- clients that come and go: each session ends with its client's -------------------------------


@asynccontextmanager
async def in_process_gateway(agent: Path, idle_timeout_s: float) -> AsyncIterator[tuple[Any, str]]:
    """The gateway served over HTTP on this test's loop: (the Gateway, its URL)."""
    with Engine() as engine:
        session = engine.submit(engine.open_tool_session(agent, "first")).result(60)
        gateway = Gateway(engine, session, agent, "agent")
        served: Future[str] = Future()
        stop = asyncio.Event()

        async def serve() -> None:
            app = http_app(gateway, TOKEN, idle_timeout_s=idle_timeout_s)
            async with gateway.server.session_manager.run():
                server = ApiServer(app)
                served.set_result(await server.start() + "/mcp")
                await stop.wait()
                await server.stop()
            await gateway.aclose()
            await session.aclose()

        async def stop_serving() -> None:
            stop.set()

        serving = engine.submit(serve())
        try:
            yield gateway, await asyncio.wrap_future(served)
        finally:
            engine.submit(stop_serving())
            serving.result(60)


async def test_clients_that_come_and_go_leave_no_session_behind(
    tmp_path: Path, foundry_home: Path
) -> None:
    """Thirty clients connect, call a tool and leave (the SDK's client ends its HTTP session
    with a DELETE): each one's session ends then, its calls stored, and the gateway keeps
    none of them."""
    agent = gateway_agent(tmp_path / "agent", [POLICY])
    async with in_process_gateway(agent, idle_timeout_s=600) as (gateway, url):
        for _ in range(30):
            async with http_client(url) as client:
                await client.call_tool("time__get_current_time", {"timezone": "UTC"})
                assert gateway.clients() == 1
            assert await _eventually(lambda: gateway.clients() == 0)
        store = Store.open()
        try:  # stored when each client left, not when the gateway ends
            decided = [
                len(store.events.list(s.id, kinds=("tool_call_decided",)))
                for s in store.sessions.list()
                if s.title.endswith("via the gateway")
            ]
        finally:
            store.close()
    assert decided == [1] * 30


async def test_a_client_that_leaves_without_a_word_is_ended_when_idle(
    tmp_path: Path, foundry_home: Path
) -> None:
    """A client that never ends its HTTP session: after the idle timeout its session ends too."""
    agent = gateway_agent(tmp_path / "agent", [POLICY])
    async with in_process_gateway(agent, idle_timeout_s=1) as (gateway, url):
        for _ in range(3):
            headers = {"Authorization": f"Bearer {TOKEN}"}
            async with (
                httpx2.AsyncClient(headers=headers, timeout=30) as http,
                streamable_http_client(url, http_client=http, terminate_on_close=False) as (
                    read,
                    write,
                    *_,
                ),
                ClientSession(read, write) as client,
            ):
                await client.initialize()
                await client.call_tool("time__get_current_time", {"timezone": "UTC"})
        assert gateway.clients() >= 1
        assert await _eventually(lambda: gateway.clients() == 0, seconds=20)


async def _eventually(check: Callable[[], bool], seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while not check() and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    return check()


# `foundry` as a shell's background job starts it (`foundry gateway --http &`, or a test run
# started with `&`): with SIGINT ignored, which Python then leaves ignored
STARTED_IN_THE_BACKGROUND = (
    "import runpy, signal, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); "
    "sys.argv[0] = 'foundry'; runpy.run_module('foundry.cli', run_name='__main__')"
)
HOW_STARTED = {
    "in the foreground": ["-m", "foundry.cli"],
    "in the background": ["-c", STARTED_IN_THE_BACKGROUND],
}


@pytest.mark.parametrize("started", HOW_STARTED)
async def test_it_stops_at_once_with_a_client_connected(
    tmp_path: Path, foundry_home: Path, started: str
) -> None:
    """Ctrl+C with a client holding its stream open: the client's session is ended first, so
    the server does not wait for the stream and then cancel it with an error (6.7 s before).
    Started with SIGINT ignored, it stops too (it ignored Ctrl+C: the test waited 30 s)."""
    agent = gateway_agent(tmp_path / "agent", [POLICY])
    port = free_port()
    env = {**os.environ, "FOUNDRY_HOME": str(foundry_home), "FOUNDRY_API_TOKEN": TOKEN}
    command = [sys.executable, *HOW_STARTED[started], "gateway", "--http", "--port", str(port)]
    process = subprocess.Popen([*command, str(agent)], env=env, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    url = f"http://127.0.0.1:{port}/mcp"
    assert url in process.stderr.readline()
    try:
        async with http_client(url) as client:
            await client.list_tools()
            await asyncio.sleep(0.5)  # its stream for the server's notifications is open
            process.send_signal(signal.SIGINT)
            assert await asyncio.to_thread(wait_for_exit, process, 30) == 0
    finally:
        process.kill()
    said = process.stderr.read()
    assert "Traceback" not in said and "graceful shutdown exceeded" not in said, said
