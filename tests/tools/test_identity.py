"""A stdio command read as the server it runs, through wrappers and launchers."""

from __future__ import annotations

from pathlib import Path

import pytest

from foundry.agent.models import StdioServer
from foundry.tools.identity import identify
from tests.tools.escapes import NPM_BIN

FILESYSTEM = "@modelcontextprotocol/server-filesystem"


@pytest.mark.parametrize(
    ("command", "args", "package", "kind", "roots"),
    [
        ("npx", ["-y", f"{FILESYSTEM}@2025.8.21", "/data"], FILESYSTEM, "filesystem", ["/data"]),
        ("npx", ["--package=" + FILESYSTEM, "mcp-server-filesystem", "/d"], FILESYSTEM,
         "filesystem", ["/d"]),
        ("sh", ["-c", "exec mcp-server-filesystem /dir"], "mcp-server-filesystem", "filesystem",
         ["/dir"]),
        ("bash", ["-c", "FOO=1 exec mcp-server-filesystem '/a b'"], "mcp-server-filesystem",
         "filesystem", ["/a b"]),
        ("env", ["-i", "A=b", "mcp-server-filesystem", "/x"], "mcp-server-filesystem",
         "filesystem", ["/x"]),
        ("uvx", ["mcp-server-git", "--repository", "/r"], "mcp-server-git", "git", ["/r"]),
        ("uv", ["tool", "run", "mcp-server-git", "-r", "/r"], "mcp-server-git", "git", ["/r"]),
        ("python", ["-m", "mcp_server_git", "--repository=/r"], "mcp_server_git", "git", ["/r"]),
        ("python3", ["-m", "mcp_server_time"], "mcp_server_time", "time", []),
        ("pipx", ["run", "mcp-server-fetch==2025.1"], "mcp-server-fetch", "fetch", []),
        ("my-server", ["/data"], "my-server", None, []),
    ],
)  # fmt: skip
def test_wrappers_and_launchers_are_read_through(
    tmp_path: Path,
    command: str,
    args: list[str],
    package: str,
    kind: str | None,
    roots: list[str],
) -> None:
    identity = identify(StdioServer(command=command, args=args), tmp_path)
    assert identity.package == package and identity.kind_name == kind
    assert [str(root) for root in identity.roots(tmp_path)] == roots


@pytest.mark.parametrize(
    "line",
    [
        "cat /etc/passwd; exec mcp-server-filesystem /",
        "mcp-server-filesystem $(pwd)",
        "mcp-server-filesystem / | tee log",
        "exec mcp-server-filesystem `pwd`",
    ],
)
def test_a_shell_line_that_does_more_than_run_one_program_is_of_no_known_kind(
    tmp_path: Path, line: str
) -> None:
    assert identify(StdioServer(command="sh", args=["-c", line]), tmp_path).kind is None


def test_a_name_alone_does_not_make_a_kind(tmp_path: Path) -> None:
    """A third-party server is known by its package, not by the names of its tools or its
    entry in mcpServers; the agent may declare a kind (a change its trust covers)."""
    third_party = StdioServer(command="node", args=["vendor/search/index.js"])
    assert identify(third_party, tmp_path).kind is None
    declared = identify(third_party, tmp_path, declared_kind="filesystem")
    assert declared.kind_name == "filesystem" and declared.declared


@pytest.mark.skipif(not (NPM_BIN / "mcp-server-filesystem").exists(), reason="npm parts missing")
def test_an_installed_program_is_known_by_the_package_it_lies_in(tmp_path: Path) -> None:
    direct = identify(StdioServer(command=str(NPM_BIN / "mcp-server-filesystem")), tmp_path)
    through_node = identify(
        StdioServer(command="node", args=[str(NPM_BIN / "mcp-server-filesystem"), "."]), tmp_path
    )
    assert direct.package == through_node.package == FILESYSTEM


def test_the_program_is_found_on_the_path_the_server_s_env_sets(tmp_path: Path) -> None:
    bin_folder = tmp_path / "bin"
    bin_folder.mkdir()
    program = bin_folder / "mcp-server-filesystem"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    server = StdioServer(command="mcp-server-filesystem", env={"PATH": str(bin_folder)})
    assert identify(server, tmp_path).programs == (program,)


def test_the_packaged_app_is_known_as_the_python_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In the bundle `python` runs as `foundry -m MODULE` (launcher.py): still the time server,
    whose kind keeps its network off (it was taken for a program named foundry)."""
    import sys

    bundle = tmp_path / "foundry"
    bundle.symlink_to(sys.executable)
    monkeypatch.setattr(sys, "executable", str(bundle))
    identity = identify(StdioServer(command="python", args=["-m", "mcp_server_time"]), tmp_path)
    assert identity.package == "mcp_server_time" and identity.kind_name == "time"
