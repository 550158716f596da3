"""ToolHost against real MCP servers: mcp-server-time and small SDK servers written per test."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from foundry.agent.models import IncludeMode, McpServerConfig, StdioServer
from foundry.tools import ServerStatus, ToolHost, resolve_tool_settings

TIME_SERVER = {"command": "python", "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}

TOOLS_SERVER = '''
import os
import sys
import time

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("test-tools")


@server.tool()
def echo(text: str) -> str:
    """Give the text back."""
    return text


@server.tool()
def crash() -> str:
    """Exit the server process in the middle of the call."""
    print("crashing now: the disk is on fire", file=sys.stderr, flush=True)
    os._exit(3)


@server.tool()
def crash_soon(seconds: float) -> str:
    """Answer now, and exit the server process a while later, idle."""
    import threading

    def exit_now() -> None:
        print("gone while idle", file=sys.stderr, flush=True)
        os._exit(4)

    threading.Timer(seconds, exit_now).start()
    return "bye"


@server.tool()
def wait(seconds: float) -> str:
    """Answer after a while."""
    time.sleep(seconds)
    return "done"


@server.tool()
def header(name: str, ctx: Context) -> str:
    """The value of an HTTP header of this request."""
    return (ctx.headers or {}).get(name, "")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        server.run(transport=sys.argv[2], host="127.0.0.1", port=int(sys.argv[1]))
    else:
        server.run()
'''

StartHost = Callable[..., Awaitable[ToolHost]]


def server_configs(raw: dict[str, Any]) -> dict[str, McpServerConfig]:
    return TypeAdapter(dict[str, McpServerConfig]).validate_python(raw)


@pytest.fixture
def tools_server(tmp_path: Path) -> dict[str, Any]:
    """A stdio config for the test server, its script relative to the agent folder."""
    (tmp_path / "tools_server.py").write_text(TOOLS_SERVER)
    return {"command": "python", "args": ["tools_server.py"]}


@pytest.fixture
async def start_host(tmp_path: Path) -> AsyncIterator[StartHost]:
    hosts: list[ToolHost] = []

    async def start(servers: dict[str, Any], **options: Any) -> ToolHost:
        host = ToolHost(server_configs(servers), tmp_path, **options)
        hosts.append(host)
        await host.start()
        return host

    yield start
    for host in hosts:
        await host.aclose()


def status_of(host: ToolHost, name: str) -> ServerStatus:
    return next(status for status in host.statuses() if status.name == name)


async def test_time_server_offers_its_tools_and_answers(
    start_host: StartHost, sample_agents: Path
) -> None:
    agent = json.loads((sample_agents / "assistant" / "tsagent.json").read_text())
    host = await start_host(agent["mcpServers"])

    tools = {tool.name: tool for tool in host.tools()}
    assert set(tools) == {"time.get_current_time", "time.convert_time"}
    assert tools["time.get_current_time"].include is IncludeMode.ALWAYS
    assert tools["time.convert_time"].include is IncludeMode.AGENT
    assert not tools["time.get_current_time"].permission_required
    assert "timezone" in tools["time.get_current_time"].parameters["properties"]

    result = await host.call("time.get_current_time", {"timezone": "Asia/Tokyo"})
    assert not result.is_error
    assert "Asia/Tokyo" in result.text
    assert result.structured is not None
    assert result.structured["timezone"] == "Asia/Tokyo"


@pytest.mark.parametrize(
    ("server", "expected"),
    [
        pytest.param({}, {"a": ("always", True), "b": ("always", True)}, id="built-in-defaults"),
        pytest.param(
            {
                "serverToolDefaults": {"permissionRequired": False, "include": "manual"},
                "tools": {"b": {"permissionRequired": True}},
            },
            {"a": ("manual", False), "b": ("manual", True)},
            id="tool-overrides-server-defaults",
        ),
        pytest.param(
            {
                "toolPermissionRequired": {"serverDefault": False, "tools": {"b": "true"}},
                "toolInclude": {"serverDefault": "manual", "tools": {"b": "agent"}},
            },
            {"a": ("manual", False), "b": ("agent", True)},
            id="legacy-tsagent-keys",
        ),
        pytest.param(
            {
                "serverToolDefaults": {"permissionRequired": True},
                "tools": {"b": {"include": "always"}},
                "toolPermissionRequired": {"serverDefault": False},
                "toolInclude": {"serverDefault": "manual", "tools": {"b": "agent"}},
            },
            {"a": ("manual", True), "b": ("always", True)},
            id="new-keys-win-over-legacy-keys",
        ),
    ],
)
def test_tool_settings_resolve_most_specific_first(
    server: dict[str, Any], expected: dict[str, tuple[str, bool]]
) -> None:
    config = StdioServer.model_validate({"command": "python", **server})

    for tool, (include, permission_required) in expected.items():
        settings = resolve_tool_settings(config, tool)
        assert (settings.include.value, settings.permission_required) == (
            include,
            permission_required,
        )


async def test_missing_command_fails_while_other_servers_run(start_host: StartHost) -> None:
    seen: list[ServerStatus] = []
    host = await start_host(
        {"ghost": {"command": "no-such-mcp-server-command"}, "time": TIME_SERVER},
        on_status=seen.append,
    )

    ghost = status_of(host, "ghost")
    assert ghost.state == "failed"
    assert ghost.error is not None
    assert "'no-such-mcp-server-command' was not found" in ghost.error
    assert status_of(host, "time").state == "running"
    assert ghost in seen
    assert [tool.server for tool in host.tools()] == ["time", "time"]

    result = await host.call("ghost.anything", {})
    assert result.is_error
    assert "MCP server 'ghost' has failed" in result.text


async def test_server_exiting_at_start_reports_its_error_output(start_host: StartHost) -> None:
    exits = (
        "import sys; sys.stderr.write('missing API key for the weather service\\n'); sys.exit(2)"
    )
    host = await start_host({"weather": {"command": "python", "args": ["-c", exits]}})

    status = status_of(host, "weather")
    assert status.state == "failed"
    assert status.error == "the server exited before it finished starting"
    assert "missing API key for the weather service" in status.stderr_tail
    assert host.tools() == []


async def test_server_silent_at_start_fails_after_the_start_timeout(
    start_host: StartHost,
) -> None:
    silent = {"command": "python", "args": ["-c", "import sys; sys.stdin.read()"]}
    host = await start_host({"silent": silent}, start_timeout_s=1.0)

    status = status_of(host, "silent")
    assert status.state == "failed"
    assert status.error == "the server did not start within 1 s"


@pytest.mark.parametrize(
    ("settings", "error"),
    [
        pytest.param(
            {"env": {"API_KEY": "env://FOUNDRY_TEST_UNSET_VARIABLE"}},
            "env.API_KEY asks for the environment variable FOUNDRY_TEST_UNSET_VARIABLE,"
            " which is not set",
            id="unset-env-variable",
        ),
        pytest.param(
            {"cwd": "no-such-folder"},
            "the working folder",
            id="missing-working-folder",
        ),
    ],
)
async def test_unusable_stdio_settings_fail_in_plain_words(
    start_host: StartHost,
    settings: dict[str, Any],
    error: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("FOUNDRY_TEST_UNSET_VARIABLE", raising=False)
    host = await start_host({"time": {**TIME_SERVER, **settings}})

    status = status_of(host, "time")
    assert status.state == "failed"
    assert status.error is not None
    assert status.error.startswith(error)


async def test_a_server_that_exits_while_idle_is_seen_failed_without_a_call(
    start_host: StartHost, tools_server: dict[str, Any]
) -> None:
    seen: list[ServerStatus] = []
    host = await start_host({"tools": tools_server}, on_status=seen.append)
    assert (await host.call("tools.crash_soon", {"seconds": 0.2})).text == "bye"

    for _ in range(100):
        if status_of(host, "tools").state != "running":
            break
        await asyncio.sleep(0.05)

    status = status_of(host, "tools")
    assert (status.state, status.error) == ("failed", "the server exited unexpectedly")
    assert "gone while idle" in status.stderr_tail
    assert seen[-1] == status and host.tools() == []


async def test_crash_mid_call_is_a_tool_error_and_restart_recovers(
    start_host: StartHost, tools_server: dict[str, Any]
) -> None:
    seen: list[ServerStatus] = []
    host = await start_host({"tools": tools_server}, on_status=seen.append)
    assert status_of(host, "tools").state == "running"

    result = await host.call("tools.crash", {})

    assert result.is_error
    assert "'tools.crash'" in result.text
    assert "MCP server 'tools' exited during the call" in result.text
    assert "the disk is on fire" in result.text
    status = status_of(host, "tools")
    assert status.state == "failed"
    assert "the disk is on fire" in status.stderr_tail
    assert seen[-1] == status
    assert host.tools() == []

    await host.restart("tools")

    assert status_of(host, "tools").state == "running"
    again = await host.call("tools.echo", {"text": "back again"})
    assert (again.text, again.is_error) == ("back again", False)


async def test_error_output_of_a_running_server_can_be_read_while_it_runs(
    start_host: StartHost,
) -> None:
    talks = (
        "import sys; print('time server warming up', file=sys.stderr, flush=True); "
        "sys.argv = ['mcp_server_time', '--local-timezone', 'UTC']; "
        "from mcp_server_time import main; main()"
    )
    host = await start_host({"chatty": {"command": "python", "args": ["-c", talks]}})
    assert status_of(host, "chatty").state == "running"

    assert "time server warming up" in host.log_tail("chatty")
    assert (await host.call("chatty.get_current_time", {"timezone": "UTC"})).is_error is False
    await host.stop("chatty")
    assert "time server warming up" in host.log_tail("chatty")


async def test_call_exceeding_its_timeout_is_a_tool_error(
    start_host: StartHost, tools_server: dict[str, Any]
) -> None:
    host = await start_host({"tools": tools_server})

    result = await host.call("tools.wait", {"seconds": 10}, timeout_s=0.5)

    assert result.is_error  # the tool would have answered after 10 s, without an error
    assert result.text == "The tool 'tools.wait' timed out: no answer within 0.5 s."
    assert status_of(host, "tools").state == "running"
    assert (await host.call("tools.echo", {"text": "still here"})).text == "still here"


async def test_stopping_a_server_cuts_off_its_running_call(
    start_host: StartHost, tools_server: dict[str, Any]
) -> None:
    host = await start_host({"tools": tools_server})
    call = asyncio.create_task(host.call("tools.wait", {"seconds": 10}))
    await asyncio.sleep(0.3)

    await host.stop("tools")

    result = await call
    assert result.is_error
    assert result.text == "The tool 'tools.wait' was cut off: its MCP server was stopped."
    assert status_of(host, "tools").state == "stopped"


async def test_unknown_tools_and_internal_servers_are_explained(
    start_host: StartHost,
) -> None:
    host = await start_host({"time": TIME_SERVER, "notes": {"type": "internal", "tool": "notes"}})

    assert status_of(host, "notes") == ServerStatus(
        name="notes", state="stopped", error="internal tools are provided by Foundry itself"
    )
    missing = await host.call("time.set_time", {})
    assert missing.is_error
    assert "MCP server 'time' offers time.get_current_time, time.convert_time" in missing.text
    nowhere = await host.call("weather.forecast", {})
    assert nowhere.is_error
    assert "no MCP server of this agent offers it" in nowhere.text


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_for_port(port: int, process: subprocess.Popen[bytes], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert process.poll() is None, "the HTTP test server exited"
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.1)
    raise TimeoutError(f"the HTTP test server did not listen on {port} within {timeout_s} s")


@pytest.fixture(params=["streamable-http", "sse"])
def http_server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[dict[str, str]]:
    """A test server over HTTP, as the `type` and `url` of its config."""
    transport: str = request.param
    script = tmp_path / "tools_server.py"
    script.write_text(TOOLS_SERVER)
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(script), str(port), transport],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, process, timeout_s=20)
        path = "/sse" if transport == "sse" else "/mcp"
        yield {"type": transport, "url": f"http://127.0.0.1:{port}{path}"}
    finally:
        process.terminate()
        process.wait(timeout=10)


async def test_http_server_lists_and_answers_with_its_headers(
    start_host: StartHost, http_server: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FOUNDRY_TEST_TOKEN", "secret-token")
    headers = {"X-Foundry-Token": "env://FOUNDRY_TEST_TOKEN"}
    host = await start_host({"remote": {**http_server, "headers": headers}})

    assert status_of(host, "remote").state == "running"
    names = {tool.name for tool in host.tools()}
    assert names == {
        "remote.echo",
        "remote.crash",
        "remote.crash_soon",
        "remote.wait",
        "remote.header",
    }
    result = await host.call("remote.echo", {"text": "over HTTP"})
    assert (result.text, result.is_error) == ("over HTTP", False)
    token = await host.call("remote.header", {"name": "x-foundry-token"})
    assert token.text == "secret-token"


async def test_unreachable_http_server_fails_with_its_address(start_host: StartHost) -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    host = await start_host({"remote": {"type": "streamable-http", "url": url}})

    status = status_of(host, "remote")
    assert status.state == "failed"
    assert status.error is not None
    assert status.error.startswith(f"could not reach {url}")


def live_children() -> set[int]:
    """This process's child processes that have not exited (Linux /proc)."""
    children: set[int] = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        state, parent = fields[0], int(fields[1])
        if parent == os.getpid() and state != "Z":
            children.add(int(stat.parent.name))
    return children


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
async def test_aclose_leaves_no_child_processes(
    start_host: StartHost, tools_server: dict[str, Any]
) -> None:
    before = live_children()
    host = await start_host({"time": TIME_SERVER, "tools": tools_server})
    started = live_children() - before
    assert len(started) == 2

    await host.aclose()

    assert live_children() & started == set()
    assert {status.state for status in host.statuses()} == {"stopped"}


def test_a_packaged_foundry_gives_other_programs_the_users_library_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from foundry.tools.host import _stdio_parameters

    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setenv("LD_LIBRARY_PATH", "/opt/foundry/_internal")
    monkeypatch.setenv("LD_LIBRARY_PATH_ORIG", "/usr/local/lib")
    other = _stdio_parameters(StdioServer(command="npx", args=["server"]), tmp_path)
    assert other.env is not None and other.env["LD_LIBRARY_PATH"] == "/usr/local/lib"
    itself = _stdio_parameters(StdioServer(command="python", args=["-m", "x"]), tmp_path)
    assert itself.env is not None and itself.env["LD_LIBRARY_PATH"] == "/opt/foundry/_internal"
    monkeypatch.delenv("LD_LIBRARY_PATH_ORIG")
    other = _stdio_parameters(StdioServer(command="npx", args=["server"]), tmp_path)
    assert other.env is not None and "LD_LIBRARY_PATH" not in other.env
