"""A gateway call is decided before it is forwarded and recorded after its reply: its events and
trace wait for no one, and are all stored by the time the gateway has exited (stdin closed or
SIGTERM). A call the policy refuses never reaches the server, however long recording takes."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import signal
import sys
from collections.abc import AsyncIterator, Coroutine, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import mcp.types as mcp_types
import pytest

from foundry.gateway.server import serve_on_engine
from foundry.runtime.engine import Engine
from foundry.runtime.tool_session import ToolSession
from foundry.store import Store
from tests.gateway.test_gateway_stdio import POLICY, upstream_agent

T = TypeVar("T")
CALL_KINDS = ("tool_call_decided", "tool_call_finished")
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    store = Store.open(f"sqlite:///{tmp_path / 'gateway.sqlite3'}")
    with Engine(store) as started:
        yield started
    store.close()


async def on_engine(engine: Engine, work: Coroutine[Any, Any, T]) -> T:
    return await asyncio.wait_for(asyncio.wrap_future(engine.submit(work)), 60)


@asynccontextmanager
async def tool_session(engine: Engine, agent: Path) -> AsyncIterator[ToolSession]:
    session = await on_engine(engine, engine.open_tool_session(agent, "a test via the gateway"))
    try:
        yield session
    finally:
        await on_engine(engine, session.aclose())


def recorded_calls(store: Store, session_id: str) -> list[tuple[str, str]]:
    """(kind, call id) of the session's call events, in the order they were stored."""
    return [
        (event.kind, event.payload.get("call_id") or event.payload["call"]["id"])
        for event in store.events.list(session_id, kinds=CALL_KINDS)
    ]


def in_order(calls: int) -> list[tuple[str, str]]:
    return [(kind, f"gateway-{number}") for number in range(1, calls + 1) for kind in CALL_KINDS]


async def test_a_call_is_answered_while_recording_is_held_up_and_recorded_in_order_after(
    tmp_path: Path, engine: Engine
) -> None:
    agent = upstream_agent(tmp_path / "agent")
    async with tool_session(engine, agent) as session:
        with engine.store.write_lock:  # nothing can be written to the store meanwhile
            results = [
                await on_engine(engine, session.call("up.say", {"text": f"call {n}"}))
                for n in range(5)
            ]
            assert recorded_calls(engine.store, session.session_id) == []
        assert [result.text for result in results] == [f"call {n}" for n in range(5)]
        await on_engine(engine, session.settle())
        assert recorded_calls(engine.store, session.session_id) == in_order(5)
        traces = engine.store.traces.list()
        assert [trace.decision for trace in traces] == ["allow"] * 5
        assert {trace.session_id for trace in traces} == {session.session_id}


async def test_a_refused_call_never_reaches_the_server_while_recording_is_held_up(
    tmp_path: Path, engine: Engine
) -> None:
    """The decision does not wait for, or depend on, what has been stored: the deny rule and
    the rate limit (counted as calls are decided) hold while nothing can be written."""
    rules = [
        {"name": "no-notes", "tool": "up.note", "action": "deny"},
        {"name": "ok", "tool": "*", "action": "allow"},
    ]
    limited = {
        **POLICY,
        "config": {
            "rules": rules,
            "loopDetection": False,
            "rateLimits": [{"tool": "up.echo", "maxCalls": 2, "perSeconds": 600}],
        },
    }
    agent = upstream_agent(tmp_path / "agent")
    config = json.loads((agent / "tsagent.json").read_text())
    config["supervisors"] = [limited]
    (agent / "tsagent.json").write_text(json.dumps(config))
    target = tmp_path / "written-by-the-server.txt"
    async with tool_session(engine, agent) as session:
        with engine.store.write_lock:
            note = {"path": str(target), "text": "should never be written"}
            refused = await on_engine(engine, session.call("up.note", note))
            echoes = [await on_engine(engine, session.call("up.echo", {})) for _ in range(4)]
        assert refused.is_error and "no-notes" in refused.text
        assert not target.exists()
        assert [echo.is_error for echo in echoes] == [False, False, True, True]
        assert "rate limit" in echoes[-1].text
        await on_engine(engine, session.settle())
    decisions = [trace.decision for trace in reversed(engine.store.traces.list())]
    assert decisions == ["deny", "allow", "allow", "deny", "deny"]
    finished = engine.store.events.list(session.session_id, kinds=("tool_call_finished",))
    assert [event.payload["is_error"] for event in finished] == [True, False, False, True, True]


async def test_calls_refused_before_the_gate_are_in_the_decision_trail(
    tmp_path: Path, engine: Engine
) -> None:
    """No tool of that name, arguments its schema refuses, blocked text: each is traced as the
    gate's decisions are, so the audit export holds it (parameters redacted)."""
    guardian = {"type": "guardian", "id": "guardian", "config": {"blockKeywords": ["DROP TABLE"]}}
    agent = upstream_agent(tmp_path / "agent", guardian)
    async with tool_session(engine, agent) as session:
        calls = [
            ("up.nothing", {}),
            ("up.say", {"text": 42}),
            ("up.say", {"text": "drop table users; password=hunter2"}),
        ]
        results = [await on_engine(engine, session.call(name, args)) for name, args in calls]
        await on_engine(engine, session.settle())
    assert all(result.is_error for result in results)
    traces = list(reversed(engine.store.traces.list()))
    assert [(t.tool, t.decision, t.resolved_level, t.resolved_by) for t in traces] == [
        ("up.nothing", "deny", "policy", "policy:gateway"),
        ("up.say", "deny", "policy", "policy:gateway"),
        ("up.say", "deny", "supervisor", "supervisor:guardian"),
    ]
    assert {t.session_id for t in traces} == {session.session_id}
    assert "hunter2" not in json.dumps([t.params for t in traces])
    assert "no tool named 'up.nothing'" in (traces[0].reasoning or "")


class RawClient:
    """An MCP client speaking JSON-RPC lines to a `foundry gateway` process it started."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self._ids = 0

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._ids += 1
        await self.send({"jsonrpc": "2.0", "id": self._ids, "method": method, "params": params})
        assert self.process.stdout is not None
        while True:
            line = await asyncio.wait_for(self.process.stdout.readline(), 60)
            assert line, "the gateway closed its stdout"
            message = json.loads(line)
            if message.get("id") == self._ids:
                return dict(message)

    async def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        await self.process.stdin.drain()


@asynccontextmanager
async def gateway_process(agent: Path) -> AsyncIterator[RawClient]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "foundry.cli",
        "gateway",
        str(agent),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    client = RawClient(process)
    try:
        initialize = {
            "protocolVersion": mcp_types.LATEST_PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "Raw", "version": "1"},
        }
        assert "result" in await client.request("initialize", initialize)
        await client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        yield client
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


@pytest.mark.parametrize("ending", ["SIGTERM", "stdin closed"])
async def test_everything_recorded_is_stored_when_the_gateway_ends(
    tmp_path: Path, foundry_home: Path, ending: str
) -> None:
    agent = upstream_agent(tmp_path / "agent")
    calls = 20
    async with gateway_process(agent) as client:
        for number in range(calls):
            arguments = {"text": f"call {number}"}
            reply = await client.request("tools/call", {"name": "up__say", "arguments": arguments})
            assert reply["result"]["content"][0]["text"] == f"call {number}"
        # at once, while the last calls' recording is still being gathered
        if ending == "SIGTERM":
            client.process.send_signal(signal.SIGTERM)
        else:
            assert client.process.stdin is not None
            client.process.stdin.close()
        assert await asyncio.wait_for(client.process.wait(), 60) == 0
    store = Store.open()
    [session] = store.sessions.list()
    assert session.title == "Raw via the gateway"
    assert recorded_calls(store, session.id) == in_order(calls)
    assert len(store.traces.list()) == calls
    store.close()


def test_what_start_up_made_is_kept_out_of_full_collections(engine: Engine) -> None:
    """A full collection of a gateway's objects held every call up for about 75 ms; what was
    made before serving (modules, schemas, the servers' sessions) is not looked at again."""
    frozen: list[int] = []

    async def serving() -> None:
        frozen.append(gc.get_freeze_count())

    gc.unfreeze()
    try:
        serve_on_engine(engine, serving())
    finally:
        gc.unfreeze()  # the other tests' objects are this process's to collect
    assert frozen and frozen[0] > 0
