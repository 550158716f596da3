"""Tool definitions judged: the real reference servers' (none should be flagged, none should
shadow another) and the poisoned set of the tests (all should be), with the time each takes.

Starts every reference MCP server it finds (the filesystem server from the tests' npm parts, the
time server from this venv, and the others from the folders given), lists its tools over stdio
as Foundry does, and judges each definition (supervision/tool_poisoning.py) and the tools of all
the servers together as one agent's (supervision/tool_shadowing.py). Nothing is committed of
what the servers say: it is read live.

    python bench/tool_definitions.py [--bin DIR ...]

`--bin` adds a folder of server programs (an npm `node_modules/.bin`, a venv's `bin`), searched
for mcp-server-memory, -sequential-thinking, -everything, -github, -gitlab, -slack, -postgres,
-puppeteer, -git and -fetch.
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from foundry.supervision.tool_poisoning import judge_definition  # noqa: E402
from foundry.supervision.tool_shadowing import find_shadowing  # noqa: E402
from foundry.tools.catalog import ToolInfo  # noqa: E402
from tests.supervision.test_tool_poisoning import POISONED, ROUTINE  # noqa: E402

NPM_BIN = ROOT / "tests" / "gateway" / "npm" / "node_modules" / ".bin"
LIST_TIMEOUT_S = 60.0
# name -> (program, arguments, environment); `{dir}` is a scratch folder, `{repo}` a git one
SERVERS: dict[str, tuple[str, tuple[str, ...], dict[str, str]]] = {
    "filesystem": ("mcp-server-filesystem", ("{dir}",), {}),
    "memory": ("mcp-server-memory", (), {"MEMORY_FILE_PATH": "{dir}/memory.json"}),
    "sequential-thinking": ("mcp-server-sequential-thinking", (), {}),
    "everything": ("mcp-server-everything", ("stdio",), {}),
    "github": ("mcp-server-github", (), {"GITHUB_PERSONAL_ACCESS_TOKEN": "x"}),
    "gitlab": ("mcp-server-gitlab", (), {"GITLAB_PERSONAL_ACCESS_TOKEN": "x"}),
    "slack": ("mcp-server-slack", (), {"SLACK_BOT_TOKEN": "x", "SLACK_TEAM_ID": "T0"}),
    "postgres": ("mcp-server-postgres", ("postgresql://127.0.0.1:9/none",), {}),
    "puppeteer": ("mcp-server-puppeteer", (), {}),
    "git": ("mcp-server-git", ("--repository", "{repo}"), {}),
    "fetch": ("mcp-server-fetch", (), {}),
}


def find_program(name: str, folders: list[Path]) -> str | None:
    return next((str(f / name) for f in folders if (f / name).exists()), None)


async def list_server(params: StdioServerParameters) -> list[dict[str, Any]]:
    async with AsyncExitStack() as stack:
        errors = stack.enter_context(open("/dev/null", "w"))  # noqa: SIM115
        read, write = await stack.enter_async_context(stdio_client(params, errlog=errors))
        session = await stack.enter_async_context(ClientSession(read, write))
        await session.initialize()
        listed = await session.list_tools()
        return [
            tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in listed.tools
        ]


def tool_info(server: str, listed: dict[str, Any]) -> ToolInfo:
    return ToolInfo(
        name=f"{server}.{listed['name']}",
        server=server,
        tool=listed["name"],
        description=listed.get("description", ""),
        parameters=listed.get("inputSchema", {}),
        include="always",
        permission_required=True,
        listed=listed,
    )


async def reference_tools(folders: list[Path], scratch: Path) -> dict[str, list[ToolInfo]]:
    repo = scratch / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    found: dict[str, list[ToolInfo]] = {}
    places = {"dir": str(scratch), "repo": str(repo)}
    commands = {**SERVERS, "time": (sys.executable, ("-m", "mcp_server_time"), {})}
    for server, (program, args, env) in commands.items():
        command = program if program == sys.executable else find_program(program, folders)
        if command is None:
            print(f"  {server}: not found, skipped")
            continue
        params = StdioServerParameters(
            command=command,
            args=[arg.format(**places) for arg in args],
            env={**{k: v.format(**places) for k, v in env.items()}, "PATH": "/usr/bin:/bin"},
        )
        try:
            listed = await asyncio.wait_for(list_server(params), LIST_TIMEOUT_S)
        except Exception as error:  # a server that needs what is not here
            print(f"  {server}: could not be listed ({type(error).__name__}), skipped")
            continue
        found[server] = [tool_info(server, entry) for entry in listed]
    return found


def judged(definitions: list[dict[str, Any]]) -> tuple[int, float]:
    """How many are flagged, and the mean time per definition in ms."""
    started = time.perf_counter()
    flagged = sum(judge_definition(definition) is not None for definition in definitions)
    return flagged, (time.perf_counter() - started) * 1000 / max(1, len(definitions))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", type=Path, action="append", default=[])
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        servers = asyncio.run(reference_tools([NPM_BIN, *options.bin], Path(scratch)))
    print(f"\n{'server':22} {'tools':>5} {'flagged':>7} {'ms/def':>7}")
    every: list[ToolInfo] = []
    for server, tools in servers.items():
        flagged, ms = judged([tool.definition() for tool in tools])
        every += tools
        print(f"{server:22} {len(tools):5} {flagged:7} {ms:7.2f}")
        for tool in tools:
            flag = judge_definition(tool.definition())
            if flag is not None:
                print(f"    {tool.name}: {flag.describe()}")
    for name, labelled in (("poisoned (tests)", POISONED), ("routine (tests)", ROUTINE)):
        flagged, ms = judged(list(labelled.values()))
        print(f"{name:22} {len(labelled):5} {flagged:7} {ms:7.2f}")
    started = time.perf_counter()
    shadowing = find_shadowing(every)
    took = (time.perf_counter() - started) * 1000
    print(
        f"\nshadowing across {len(servers)} servers' {len(every)} tools: {len(shadowing)} found "
        f"in {took:.1f} ms"
    )
    for found in shadowing:
        print(f"    {found.describe()}")


if __name__ == "__main__":
    main()
