"""The gateway as an MCP client sees it: the Python SDK's client starts `foundry gateway` on
stdio, lists the agent's tools and calls them; every call is decided and recorded."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.stdio import get_default_environment
from mcp.shared.exceptions import MCPError

from foundry.cli import main
from foundry.gateway.activity import GatewayCall, gateway_clients
from foundry.gateway.client_config import client_config, foundry_command
from foundry.gateway.server import exposed_names
from foundry.store import Store
from foundry.supervision.resolution import resolve_approval
from foundry.tools.catalog import ToolInfo
from tests.runtime.conftest import TIME_SERVER, write_agent

POLICY = {
    "type": "policy",
    "id": "tool-policy",
    "name": "Tool approvals",
    "config": {
        "rules": [
            {"name": "time-is-fine", "tool": "time.get_current_time", "action": "allow"},
            {"name": "no-conversions", "tool": "time.convert_time", "action": "deny"},
        ],
        "approvalTimeoutSeconds": 60,
    },
}


def gateway_agent(root: Path, supervisors: list[dict[str, Any]], trusted: bool = True) -> Path:
    servers = {"time": {**TIME_SERVER, "serverToolDefaults": {"include": "always"}}}
    turns = {"turns": []}
    return write_agent(root, turns, servers=servers, supervisors=supervisors, trusted=trusted)


def upstream_agent(root: Path, *supervisors: dict[str, Any]) -> Path:
    """An agent whose `up` server is tests/gateway/dying_server.py, every call allowed."""
    script = Path(__file__).with_name("dying_server.py")
    server = {"type": "stdio", "command": "python", "args": [str(script)]}
    defaults = {"include": "always", "permissionRequired": False}
    rules = [{"name": "ok", "tool": "*", "action": "allow"}]
    allow_all = {**POLICY, "config": {"rules": rules, "loopDetection": False}}
    return write_agent(
        root,
        {"turns": []},
        servers={"up": {**server, "serverToolDefaults": defaults}},
        supervisors=[*supervisors, allow_all],
    )


@asynccontextmanager
async def gateway(
    agent: Path, home: Path, *extra: str, on_message: Any = None
) -> AsyncIterator[ClientSession]:
    env = {**get_default_environment(), "FOUNDRY_HOME": str(home)}
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "foundry.cli", "gateway", *extra, str(agent)], env=env
    )
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write, message_handler=on_message) as session,
    ):
        await session.initialize()
        yield session


def text_of(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


async def test_a_client_lists_the_tools_and_calls_an_allowed_one(
    tmp_path: Path, foundry_home: Path
) -> None:
    agent = gateway_agent(tmp_path / "agent", [POLICY])
    async with gateway(agent, foundry_home) as client:
        listed = await client.list_tools()
        names = sorted(tool.name for tool in listed.tools)
        assert names == ["time__convert_time", "time__get_current_time"]
        result = await client.call_tool("time__get_current_time", {"timezone": "Asia/Tokyo"})
        assert not result.is_error and "Asia/Tokyo" in text_of(result)
        denied = await client.call_tool(
            "time__convert_time",
            {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"},
        )
        assert denied.is_error and "no-conversions" in text_of(denied)
    store = Store.open()
    [session] = store.sessions.list()
    client_name = session.title.removesuffix(" via the gateway")
    assert client_name != session.title and client_name != "an MCP client"  # clientInfo's name
    kinds = [event.kind for event in store.events.list(session.id)]
    assert kinds.count("tool_call_decided") == 2 and kinds.count("tool_call_finished") == 2
    traces = store.traces.list()
    assert sorted(t.decision for t in traces) == ["allow", "deny"]
    store.close()


async def test_an_escalated_call_waits_for_a_person_and_runs_when_approved(
    tmp_path: Path, foundry_home: Path
) -> None:
    policy = json.loads(json.dumps(POLICY))
    policy["config"]["rules"] = [{"name": "ask-a-person", "tool": "*", "action": "human"}]
    agent = gateway_agent(tmp_path / "agent", [policy])
    approved: list[str] = []
    listed_while_waiting: list[GatewayCall] = []

    def person() -> None:
        store = Store.open()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            pending = store.approvals.list(status="pending")
            listed = [call for client in gateway_clients(store) for call in client.calls]
            if pending and listed:  # the gateway's view of it is stored too
                listed_while_waiting.extend(listed)
                resolve_approval(store, pending[0].id, "approved", "human:test", "fine")
                approved.append(pending[0].tool)
                break
            time.sleep(0.05)
        store.close()

    async with gateway(agent, foundry_home) as client:
        helper = threading.Thread(target=person)
        helper.start()
        result = await asyncio.wait_for(
            client.call_tool("time__get_current_time", {"timezone": "UTC"}), 60
        )
        await asyncio.to_thread(helper.join)
    assert approved == ["time.get_current_time"]
    assert not result.is_error and "UTC" in text_of(result)
    [waiting] = listed_while_waiting  # View > Gateway lists it while the client waits
    assert waiting.waiting and waiting.tool == "time.get_current_time"
    assert "ask-a-person" in waiting.reason
    store = Store.open()
    [done] = [call for client in gateway_clients(store) for call in client.calls]
    assert not done.waiting and done.allowed and "UTC" in done.result
    store.close()


async def test_a_client_that_asked_for_progress_hears_from_a_call_waiting_for_a_person(
    tmp_path: Path, foundry_home: Path
) -> None:
    """The real SDK client's progressToken reaches the gateway: it reports progress while the
    call waits (every 5 s), and the person approves once the client has heard it."""
    policy = json.loads(json.dumps(POLICY))
    policy["config"]["rules"] = [{"name": "ask-a-person", "tool": "*", "action": "human"}]
    agent = gateway_agent(tmp_path / "agent", [policy])
    heard: list[str | None] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        heard.append(message)

    store = Store.open()
    async with gateway(agent, foundry_home) as client:
        call = client.call_tool(
            "time__get_current_time", {"timezone": "UTC"}, progress_callback=on_progress
        )
        waiting = asyncio.ensure_future(call)
        for _ in range(600):
            if heard and (pending := store.approvals.list(status="pending")):
                break
            await asyncio.sleep(0.05)
        assert heard, "no progress reached the client"
        resolve_approval(store, pending[0].id, "approved", "human:test", "fine")
        result = await asyncio.wait_for(waiting, 60)
    store.close()
    assert heard[0] is not None and "waiting for the decision" in heard[0]
    assert not result.is_error and "UTC" in text_of(result)


async def test_a_denial_by_a_person_is_a_tool_error_with_the_reason(
    tmp_path: Path, foundry_home: Path
) -> None:
    agent = gateway_agent(tmp_path / "agent", [])  # no policy: toolPermission asks the inbox
    servers_need_permission = json.loads((agent / "tsagent.json").read_text())
    servers_need_permission["mcpServers"]["time"]["serverToolDefaults"]["permissionRequired"] = True
    (agent / "tsagent.json").write_text(json.dumps(servers_need_permission))
    main(["trust", "--yes", str(agent)])

    def person() -> None:
        store = Store.open()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (pending := store.approvals.list("pending")):
            time.sleep(0.05)
        resolve_approval(store, pending[0].id, "denied", "human:test", "not today")
        store.close()

    async with gateway(agent, foundry_home) as client:
        helper = threading.Thread(target=person)
        helper.start()
        result = await client.call_tool("time__get_current_time", {"timezone": "UTC"})
        await asyncio.to_thread(helper.join)
    assert result.is_error and "not today" in text_of(result)


def test_an_untrusted_agent_is_refused_without_reading_stdin(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = gateway_agent(tmp_path / "agent", [POLICY], trusted=False)
    monkeypatch.setattr("foundry.cli.trust._interactive", lambda: True)  # even on a terminal
    assert main(["gateway", str(agent)]) == 2
    assert "not trusted" in capsys.readouterr().err


def test_names_are_safe_for_every_client_and_unique() -> None:
    def info(server: str, tool: str) -> ToolInfo:
        return ToolInfo(
            name=f"{server}.{tool}",
            server=server,
            tool=tool,
            description="",
            parameters={},
            include="always",
            permission_required=False,
        )

    tools = [info("fs", "read.file"), info("fs", "read_file"), info("x" * 40, "y" * 40)]
    names = exposed_names(tools)
    assert all(len(n) <= 64 and n.replace("_", "").replace("-", "").isalnum() for n in names)
    assert sorted(names.values()) == sorted(t.name for t in tools)


@pytest.mark.parametrize("client", ["claude-desktop", "cursor", "claude-code", "vscode"])
def test_print_config_gives_a_snippet_with_absolute_paths(tmp_path: Path, client: str) -> None:
    snippet = json.loads(client_config(client, Path("agents/assistant"), command="/opt/foundry"))
    servers = snippet["servers" if client == "vscode" else "mcpServers"]
    entry = servers["foundry"]
    assert entry["command"] == "/opt/foundry"
    assert entry["args"][0] == "gateway" and os.path.isabs(entry["args"][1])


def test_the_packaged_app_names_its_own_executable_as_the_command(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    bundled = tmp_path / "opt" / "foundry" / "foundry"
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", str(bundled))
    monkeypatch.setattr(sys, "argv", ["foundry"])  # started from PATH: no path to resolve
    assert foundry_command() == str(bundled)


async def test_a_client_that_cancels_withdraws_its_approval(
    tmp_path: Path, foundry_home: Path
) -> None:
    policy = json.loads(json.dumps(POLICY))
    policy["config"]["rules"] = [{"name": "ask-a-person", "tool": "*", "action": "human"}]
    agent = gateway_agent(tmp_path / "agent", [policy])
    store = Store.open()
    async with gateway(agent, foundry_home) as client:
        waiting = asyncio.ensure_future(
            client.call_tool("time__get_current_time", {"timezone": "UTC"})
        )
        for _ in range(600):
            if pending := store.approvals.list(status="pending"):
                break
            await asyncio.sleep(0.05)
        assert pending, "no approval reached the inbox"
        waiting.cancel()
        for _ in range(600):
            current = store.approvals.get(pending[0].id)
            if current.status != "pending":
                break
            await asyncio.sleep(0.05)
    assert (current.status, current.resolved_by) == ("timed_out", "withdrawn")
    store.close()


async def test_a_server_that_dies_is_restarted_and_its_calls_fail_clearly_meanwhile(
    tmp_path: Path, foundry_home: Path
) -> None:
    agent = upstream_agent(tmp_path / "agent")
    told: list[str] = []

    async def on_message(message: Any) -> None:
        told.append(type(message).__name__)

    async with gateway(agent, foundry_home, on_message=on_message) as client:
        first = text_of(await client.call_tool("up__echo", {}))
        crashed = await client.call_tool("up__die", {})
        assert crashed.is_error and "restarting MCP server 'up'" in text_of(crashed)
        for _ in range(200):
            again = await client.call_tool("up__echo", {})
            if not again.is_error:
                break
            assert "restarting" in text_of(again) or "unavailable" in text_of(again)
            await asyncio.sleep(0.1)
    assert not again.is_error and text_of(again).startswith("pid ") and text_of(again) != first
    assert "ToolListChangedNotification" in told


async def test_the_printed_config_starts_a_gateway_whose_calls_reach_audit_and_dashboards(
    tmp_path: Path, foundry_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from foundry.metrics import load_metric_events
    from foundry.metrics.series import human_wait_series, resolution_series

    policy = json.loads(json.dumps(POLICY))
    policy["config"]["rules"][1:] = [{"name": "ask", "tool": "*", "action": "human"}]
    agent = gateway_agent(tmp_path / "agent", [policy])
    assert main(["gateway", "--print-config", "claude-desktop", str(agent)]) == 0
    entry = json.loads(capsys.readouterr().out)["mcpServers"]["foundry"]
    assert Path(entry["command"]).name == "foundry" and Path(entry["command"]).is_absolute()
    params = StdioServerParameters(  # exactly what Claude Desktop would start
        command=entry["command"],
        args=entry["args"],
        env={**get_default_environment(), "FOUNDRY_HOME": str(foundry_home), **_code_path()},
    )
    person = threading.Thread(target=_approve_first, args=(foundry_home,))
    person.start()
    async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
        await client.initialize()
        assert "time__get_current_time" in {t.name for t in (await client.list_tools()).tools}
        await client.call_tool("time__get_current_time", {"timezone": "UTC"})
        with pytest.raises(MCPError, match="offers no tool"):  # no such tool: asks no one
            await client.call_tool("time__list_nothing", {})
        converted = await client.call_tool(  # asks a person, who approves
            "time__convert_time",
            {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"},
        )
        assert not converted.is_error
    await asyncio.to_thread(person.join)
    assert main(["audit", "export"]) == 0
    audit = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {(line["tool"], line["decision"]) for line in audit} >= {
        ("time.get_current_time", "allow")
    }
    store = Store.open()
    events = load_metric_events(store)
    levels = {(point.tool, point.level) for point in resolution_series(events)}
    assert ("time.get_current_time", "policy") in levels
    assert [point.status for point in human_wait_series(events)] == ["approved"]
    store.close()


def _code_path() -> dict[str, str]:
    """The PYTHONPATH the tests run with, so that the `foundry` command runs the code under test
    (a client passes only a few safe variables on)."""
    return {"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}


def _approve_first(home: Path) -> None:
    store = Store.open()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (pending := store.approvals.list("pending")):
        time.sleep(0.05)
    resolve_approval(store, pending[0].id, "approved", "human:test", "fine")
    store.close()


async def test_the_guardian_masks_results_and_refuses_blocked_text(
    tmp_path: Path, foundry_home: Path
) -> None:
    guardian = {
        "type": "guardian",
        "id": "guardian",
        "config": {"blockKeywords": ["DROP TABLE", "secret-key"]},
    }
    agent = upstream_agent(tmp_path / "agent", guardian)
    async with gateway(agent, foundry_home) as client:
        masked = await client.call_tool("up__say", {"text": "write to ana@example.com"})
        blocked = await client.call_tool("up__say", {"text": "please drop table users"})
        hidden = await client.call_tool("up__say", {"text": "please dr\u200bop <b>ta\u00adble</b>"})
        withheld = await client.call_tool("up__leak", {})
    server_block, note = masked.content  # the server's block masked, the gateway's note after it
    assert getattr(server_block, "text", "") == "write to [email]"
    assert "masked" in getattr(note, "text", "")
    for refused in (blocked, hidden):  # named as configured
        assert refused.is_error and "supervisor:guardian" in text_of(refused)
        assert "'DROP TABLE'" in text_of(refused)
    assert withheld.is_error and "SECRET-KEY" not in text_of(withheld)
    assert "withheld" in text_of(withheld)
    store = Store.open()
    [session] = store.sessions.list()
    finished = store.events.list(session.id, kinds=("tool_call_finished",))
    assert "SECRET-KEY-42" not in json.dumps([event.payload for event in finished])
    assert store.approvals.count() == 0  # a refusal of blocked text asks no one
    store.close()


async def test_an_upstream_tool_list_change_reaches_the_client(
    tmp_path: Path, foundry_home: Path
) -> None:
    agent = upstream_agent(tmp_path / "agent")
    changed = asyncio.Event()

    async def on_message(message: Any) -> None:
        if type(message).__name__ == "ToolListChangedNotification":
            changed.set()

    store = Store.open()
    async with gateway(agent, foundry_home, on_message=on_message) as client:
        before = {tool.name for tool in (await client.list_tools()).tools}
        await client.call_tool("up__grow", {})
        await asyncio.wait_for(changed.wait(), 20)
        after = {tool.name for tool in (await client.list_tools()).tools}
        growing = asyncio.ensure_future(client.call_tool("up__grown1", {}))
        # a tool its trusted server did not offer before asks a person, once (tool_pins.py)
        approval = await _pending_approval(store)
        await asyncio.to_thread(store.approvals.resolve, approval.id, "approved", "human:ana")
        grown = await growing
    store.close()
    assert "up__grown1" not in before and after - before == {"up__grown1"}
    assert [concern["kind"] for concern in approval.concerns] == ["new-tool"]
    assert not grown.is_error


async def _pending_approval(store: Store) -> Any:
    for _ in range(1000):
        pending = await asyncio.to_thread(store.approvals.list, "pending")
        if pending:
            return pending[0]
        await asyncio.sleep(0.02)
    raise AssertionError("no approval appeared")
