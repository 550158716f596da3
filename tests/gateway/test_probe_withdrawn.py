"""A client that goes away withdraws what it asked a person: the call waiting for an approval
is cancelled, and its approval can no longer be approved (stdio closed, an HTTP session
deleted)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from foundry.store import Store
from foundry.store.store import AlreadyResolved
from foundry.supervision.resolution import resolve_approval
from tests.gateway.test_gateway_http import TOKEN, in_process_gateway
from tests.gateway.test_probe_gateway import ALLOW_ALL, probe_agent

WAIT_S = 60.0
INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "leaving", "version": "1"},
}
ASK = {
    **ALLOW_ALL,
    "id": "ask-for-reports",
    "config": {
        "rules": [
            {"name": "ask-for-reports", "tool": "probe.report", "action": "human"},
            {"name": "the-rest", "tool": "*", "action": "allow"},
        ],
        "approvalTimeoutSeconds": 600,
        "loopDetection": False,
    },
}


def pending(home: Path) -> list[Any]:
    store = Store.open()
    try:
        return store.approvals.list("pending")
    finally:
        store.close()


def approval_status(approval_id: str) -> str:
    """`pending`, or how it was resolved and by whom (`timed_out by withdrawn`)."""
    store = Store.open()
    try:
        approval = store.approvals.get(approval_id)
        assert approval is not None
        if approval.status == "pending":
            return "pending"
        return f"{approval.status} by {approval.resolved_by}"
    finally:
        store.close()


def until(check: Any, seconds: float = WAIT_S) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError(f"not within {seconds:g} s")


def assert_not_approvable(approval_id: str) -> None:
    assert approval_status(approval_id) == "timed_out by withdrawn"
    store = Store.open()
    try:
        with pytest.raises(AlreadyResolved):
            resolve_approval(store, approval_id, "approved", "a late person", level="human")
    finally:
        store.close()


def _request(number: int, method: str, params: dict[str, Any] | None = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": number, "method": method}
    if params is not None:
        message["params"] = params
    return (json.dumps(message) + "\n").encode()


def test_closing_stdin_withdraws_the_approval_a_call_waits_for(
    tmp_path: Path, foundry_home: Path
) -> None:
    agent = probe_agent(tmp_path / "agent", ASK)
    env = {**os.environ, "FOUNDRY_HOME": str(foundry_home)}
    process = subprocess.Popen(
        [sys.executable, "-m", "foundry.cli", "gateway", str(agent)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        init = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        }
        process.stdin.write(_request(1, "initialize", init))
        process.stdin.flush()
        assert b'"id":1' in process.stdout.readline().replace(b" ", b"")
        process.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        call = {"name": "probe__report", "arguments": {"topic": "x"}}
        process.stdin.write(_request(2, "tools/call", call))
        process.stdin.flush()
        [approval] = until(lambda: pending(foundry_home))
        process.stdin.close()  # the client goes away: no SIGTERM, stdin just closes
        assert process.wait(WAIT_S) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        process.stdout.close()
    assert_not_approvable(approval.id)


HEADERS = {
    "Authorization": f"Bearer {TOKEN}",
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
}


async def _http_session(http: httpx.AsyncClient, url: str) -> dict[str, str]:
    """Initialize an MCP session over HTTP by hand: the headers its requests carry."""
    answer = await http.post(url, content=_request(1, "initialize", INIT), headers=HEADERS)
    assert answer.status_code == 200, answer.text
    headers = {**HEADERS, "mcp-session-id": answer.headers["mcp-session-id"]}
    version = {"mcp-protocol-version": "2025-11-25"}
    initialized = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
    await http.post(url, content=initialized, headers={**headers, **version})
    return {**headers, **version}


async def test_an_http_client_that_ends_its_session_withdraws_its_approval(
    tmp_path: Path, foundry_home: Path
) -> None:
    """The client deletes its session while its call waits (it never cancels the call)."""
    agent = probe_agent(tmp_path / "agent", ASK)
    async with (
        in_process_gateway(agent, idle_timeout_s=600) as (gateway, url),
        httpx.AsyncClient(timeout=WAIT_S) as http,
    ):
        headers = await _http_session(http, url)
        call = {"name": "probe__report", "arguments": {"topic": "x"}}
        waiting = asyncio.ensure_future(
            http.post(url, content=_request(2, "tools/call", call), headers=headers)
        )
        [approval] = await asyncio.to_thread(until, lambda: pending(foundry_home))
        deleted = await http.delete(url, headers=headers)
        assert deleted.status_code in (200, 204), deleted.text
        await asyncio.to_thread(until, lambda: approval_status(approval.id) != "pending")
        assert_not_approvable(approval.id)
        await asyncio.to_thread(until, lambda: gateway.clients() == 0)
        waiting.cancel()


async def test_an_http_client_that_vanishes_withdraws_its_approval_when_its_session_times_out(
    tmp_path: Path, foundry_home: Path
) -> None:
    """The client's connection drops while its call waits: no DELETE, no cancel. Its session
    ends at the idle timeout, and with it the call and the approval it waits for."""
    agent = probe_agent(tmp_path / "agent", ASK)
    async with in_process_gateway(agent, idle_timeout_s=2) as (gateway, url):
        async with httpx.AsyncClient(timeout=WAIT_S) as http:
            headers = await _http_session(http, url)
            call = {"name": "probe__report", "arguments": {"topic": "x"}}
            waiting = asyncio.ensure_future(
                http.post(url, content=_request(2, "tools/call", call), headers=headers)
            )
            [approval] = await asyncio.to_thread(until, lambda: pending(foundry_home))
            waiting.cancel()  # the connection is dropped with the client
        await asyncio.to_thread(until, lambda: approval_status(approval.id) != "pending")
        assert_not_approvable(approval.id)
        await asyncio.to_thread(until, lambda: gateway.clients() == 0)
