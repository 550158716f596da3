"""The gateway over streamable HTTP: loopback only, the API token required, a session per client."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from foundry.store import Store
from tests.gateway.test_gateway_stdio import POLICY, gateway_agent, text_of

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
        process.wait(30)


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
