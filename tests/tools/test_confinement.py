"""Stdio servers confined by the kernel: the escape campaign, routine work, and what is granted."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from foundry.agent.models import StdioServer
from foundry.tools import confinement as confinement_module
from foundry.tools.confinement import KernelSupport, confinement_for, kernel_support
from foundry.tools.host import ToolHost
from tests.tools.escapes import NPM_BIN, SECRET, make_place, run_campaign, servers

needs_landlock = pytest.mark.skipif(
    not kernel_support().enforced, reason="this kernel offers no Landlock"
)
needs_npm = pytest.mark.skipif(
    not (NPM_BIN / "mcp-server-filesystem").exists()
    and os.environ.get("FOUNDRY_REQUIRE_NPM") != "1",
    reason="the reference filesystem server is not installed (npm ci in tests/gateway/npm)",
)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("FOUNDRY_HOME", str(tmp_path / "foundry-home"))
    yield tmp_path / "foundry-home"


@needs_landlock
@needs_npm
async def test_no_attempt_of_the_campaign_escapes_the_workspace(tmp_path: Path, home: Path) -> None:
    tally = await run_campaign(make_place(tmp_path), races=60)
    assert tally.total >= 200
    assert tally.escaped == 0, tally.examples
    assert tally.attempts["symlink swapped in"] == 180


async def test_without_the_kernel_the_same_campaign_escapes(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The campaign can fail: the same servers unconfined reach what lies outside."""
    monkeypatch.setattr(confinement_module, "kernel_support", lambda: KernelSupport(0))
    tally = await run_campaign(make_place(tmp_path), races=5)
    assert tally.escapes["read outside"] > 0 and tally.escapes["write outside"] > 0
    assert tally.escapes["network"] > 0 and tally.escapes["links made by the server"] > 0


@needs_landlock
async def test_routine_work_inside_the_workspace_runs_confined(tmp_path: Path, home: Path) -> None:
    place = make_place(tmp_path)
    ws = place.workspace
    async with ToolHost(servers(place), ws, workspace=ws) as host:
        for server in ("hostile", "wrapped", "env-wrapped"):
            read = await host.call(f"{server}.read_file", {"path": str(ws / "notes.md")})
            assert read.text == "ok: inside\n"
            made = ws / "sub" / f"{server}.txt"
            wrote = await host.call(f"{server}.write_file", {"path": str(made), "content": "x"})
            assert wrote.text.startswith("ok") and made.read_text() == "x"
            listed = await host.call(f"{server}.list_directory", {"path": str(ws)})
            assert "notes.md" in listed.text
            relative = await host.call(f"{server}.read_file", {"path": "notes.md"})
            assert relative.text == "ok: inside\n"  # its working folder is the agent's folder
        if host.tool("fs.read_text_file") is not None:
            read = await host.call("fs.read_text_file", {"path": str(ws / "notes.md")})
            assert not read.is_error and read.text == "inside\n"
            edit = {"oldText": "inside", "newText": "in"}
            edited = await host.call(
                "fs.edit_file", {"path": str(ws / "notes.md"), "edits": [edit]}
            )
            assert not edited.is_error and (ws / "notes.md").read_text() == "in\n"


@needs_landlock
async def test_the_time_server_answers_confined_with_no_network(tmp_path: Path, home: Path) -> None:
    time_server = StdioServer(command="python", args=["-m", "mcp_server_time"])
    assert not confinement_for(time_server, tmp_path, tmp_path).network
    async with ToolHost({"time": time_server}, tmp_path) as host:
        answer = await host.call("time.get_current_time", {"timezone": "Europe/Paris"})
    assert not answer.is_error and "Europe/Paris" in answer.text


@needs_landlock
async def test_a_server_declared_online_may_connect(tmp_path: Path, home: Path) -> None:
    place = make_place(tmp_path)
    script = str(place.server_code / "hostile_server.py")
    online = StdioServer.model_validate(
        {"command": sys.executable, "args": [script], "confinement": {"network": True}}
    )
    from tests.tools.escapes import listeners

    with listeners() as (tcp, _, _):
        async with ToolHost({"net": online}, place.workspace) as host:
            answer = await host.call("net.check_host", {"host": "127.0.0.1", "port": str(tcp.port)})
    assert answer.text == "ok: connected"


@needs_landlock
async def test_a_declared_read_folder_is_readable_and_no_more(tmp_path: Path, home: Path) -> None:
    """Widening is the agent's declaration (so a change its trust covers): `read` lets the
    server read that folder, not change it."""
    place = make_place(tmp_path)
    script = str(place.server_code / "hostile_server.py")
    widened = StdioServer.model_validate(
        {"command": sys.executable, "args": [script], "confinement": {"read": ["../outside/dir"]}}
    )
    async with ToolHost({"w": widened}, place.workspace) as host:
        deep = await host.call("w.read_file", {"path": str(place.outside / "dir" / "deep.txt")})
        other = await host.call("w.read_file", {"path": str(place.outside / "secret.txt")})
        write = await host.call(
            "w.write_file", {"path": str(place.outside / "dir" / "deep.txt"), "content": "x"}
        )
    assert SECRET in deep.text
    assert other.text.startswith("refused") and write.text.startswith("refused")


def test_no_grant_covers_the_home_folder_foundry_data_or_runs_the_workspace(
    tmp_path: Path, home: Path
) -> None:
    server = StdioServer(command="python", args=["-m", "mcp_server_time"])
    for too_wide in (Path.home(), Path("/"), home.parent):
        assert str(too_wide) not in confinement_for(server, tmp_path, too_wide).write
    inside_installation = Path(sys.prefix) / "agents" / "assistant"  # as in the packaged app
    granted = confinement_for(server, tmp_path, inside_installation)
    assert sys.prefix in granted.execute  # the server still runs from its installation
    assert not any(inside_installation.is_relative_to(path) for path in granted.write)


@pytest.mark.parametrize(
    ("config", "network"),
    [
        ({"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."]}, True),
        ({"command": str(NPM_BIN / "mcp-server-filesystem"), "args": ["."]}, False),
        ({"command": "uvx", "args": ["mcp-server-fetch"]}, True),
        ({"command": "python", "args": ["-m", "mcp_server_git", "-r", "."]}, False),
        ({"command": "my-own-server"}, True),
        ({"command": "my-own-server", "confinement": {"network": False}}, False),
        ({"command": "npx", "args": ["x"], "confinement": {"network": "false"}}, False),
    ],
)
def test_network_follows_the_kind_of_server_unless_declared(
    tmp_path: Path, home: Path, config: dict[str, object], network: bool
) -> None:
    granted = confinement_for(StdioServer.model_validate(config), tmp_path, tmp_path)
    assert granted.network is network and granted.network_reason


def test_a_launcher_gets_a_cache_of_foundry_s_not_the_user_s(tmp_path: Path, home: Path) -> None:
    server = StdioServer(command="npx", args=["-y", "@modelcontextprotocol/server-memory"])
    granted = confinement_for(server, tmp_path, tmp_path)
    assert granted.cache is not None and Path(granted.cache).is_relative_to(home)
    assert granted.env["npm_config_cache"] == granted.cache


def test_a_kernel_without_landlock_says_what_it_does_not_enforce() -> None:
    text = KernelSupport(0).describe()
    assert "not confined" in text and "outside its workspace" in text
    assert "Landlock ABI 7" in KernelSupport(7).describe()


async def test_a_command_that_does_not_exist_is_named_as_before(tmp_path: Path, home: Path) -> None:
    ghost = StdioServer(command="no-such-mcp-server-command")
    async with ToolHost({"ghost": ghost}, tmp_path) as host:
        status = host.statuses()[0]
    assert status.state == "failed" and "'no-such-mcp-server-command' was not found" in (
        status.error or ""
    )


def test_only_a_git_server_reads_the_user_s_git_settings(tmp_path: Path, home: Path) -> None:
    gitconfig = str(Path.home() / ".gitconfig")
    git = StdioServer(command="uvx", args=["mcp-server-git", "--repository", "."])
    other = StdioServer(command="uvx", args=["mcp-server-fetch"])
    assert gitconfig in confinement_for(git, tmp_path, tmp_path).read
    assert gitconfig not in confinement_for(other, tmp_path, tmp_path).read


def test_the_search_path_its_env_sets_is_readable_unless_too_wide(
    tmp_path: Path, home: Path
) -> None:
    library = tmp_path / "lib"
    library.mkdir()
    server = StdioServer(
        command="python", args=["-m", "x"], env={"PYTHONPATH": f"{library}:/:{Path.home()}"}
    )
    granted = confinement_for(server, tmp_path, tmp_path)
    assert str(library) in granted.read
    assert "/" not in granted.read and str(Path.home()) not in granted.read
    assert str(library) not in granted.write and str(library) not in granted.execute


def test_a_browser_server_runs_its_browsers_and_shares_memory(tmp_path: Path, home: Path) -> None:
    """Playwright's server runs the browsers it downloaded under ~/.cache and Chromium needs
    /dev/shm: granted to that kind only (not checked here with a real browser)."""
    browser = StdioServer(command="npx", args=["-y", "@playwright/mcp"])
    granted = confinement_for(browser, tmp_path, tmp_path)
    assert str(Path.home() / ".cache" / "ms-playwright") in granted.execute
    assert "/dev/shm" in granted.write
    assert (
        "/dev/shm"
        not in confinement_for(StdioServer(command="my-server"), tmp_path, tmp_path).write
    )


def test_a_venv_of_the_same_python_is_its_own_installation(tmp_path: Path, home: Path) -> None:
    """A server's own virtual environment, made from the interpreter Foundry runs on (its
    python a link to the same file): it runs from that environment, which it may read, and
    not from Foundry's (as it did: its own packages were out of reach, Foundry's granted)."""
    import subprocess

    own = tmp_path / "own-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(own)], check=True)
    server = StdioServer(command=str(own / "bin" / "python"), args=["-m", "their_server"])
    granted = confinement_for(server, tmp_path, tmp_path)
    assert str(own) in granted.execute
    if sys.prefix != sys.base_prefix:  # Foundry runs in a venv of its own
        assert sys.prefix not in granted.execute and sys.prefix not in granted.read
