"""Capture a real MCP server's tool definitions for the attention benchmark, without its prose.

Starts the server (stdio, through the MCP Python SDK), lists its tools and writes
bench/servers/NAME.json: `{"server": how an agent launches it, "source": where the tools came
from, "tools": [...]}`, each tool with its name, title, input and output schemas and
annotations as the server listed them, with every `description` and `examples` keyword dropped
(a property that is itself named `description` stays: it is a name). The servers' sentences
are theirs, not ours to keep. Or, with --snapshots, reads `tools/list` entries saved one per
file (github/github-mcp-server's pkg/github/__toolsnaps__/*.snap) instead of running anything.

Run the server as installed here (after `--`), and say how an agent would launch it:
  python bench/servers/capture.py slack --launch 'npx -y @modelcontextprotocol/server-slack' \
      --source 'npm @modelcontextprotocol/server-slack 1.0.0, its tools/list' \
      --env SLACK_BOT_TOKEN=x --env SLACK_TEAM_ID=T1 -- node /tmp/x/server-slack/dist/index.js
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters, stdio_client

HERE = Path(__file__).parent
PROSE = frozenset({"description", "examples"})
SCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions"})
LIST_TIMEOUT_S = 60.0


def without_prose(schema: Any) -> Any:
    """`schema` without its prose keywords, at every level it describes a value."""
    if isinstance(schema, list):
        return [without_prose(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    kept: dict[str, Any] = {}
    for key, value in schema.items():
        if key in PROSE:
            continue
        if key in SCHEMA_MAPS and isinstance(value, dict):
            kept[key] = {name: without_prose(sub) for name, sub in value.items()}
        elif key in ("enum", "const", "default", "required"):
            kept[key] = value
        else:
            kept[key] = without_prose(value)
    return kept


def bench_entry(tool: dict[str, Any]) -> dict[str, Any]:
    """The parts of a `tools/list` entry the gate judges by, in the wire's names."""
    entry: dict[str, Any] = {"name": tool["name"]}
    if "title" in tool:
        entry["title"] = tool["title"]
    entry["inputSchema"] = without_prose(tool["inputSchema"])
    if "outputSchema" in tool:
        entry["outputSchema"] = without_prose(tool["outputSchema"])
    if "annotations" in tool:
        entry["annotations"] = tool["annotations"]
    return entry


async def listed_tools(argv: list[str], env: dict[str, str]) -> list[dict[str, Any]]:
    params = StdioServerParameters(command=argv[0], args=argv[1:], env={**os.environ, **env})
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        listing = await session.list_tools()
    return [tool.model_dump(by_alias=True, exclude_none=True) for tool in listing.tools]


def snapshot_tools(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(path.read_text()) for path in sorted(folder.glob("*.snap"))]


def write_definitions(
    name: str, launch: dict[str, Any], source: str, tools: list[dict[str, Any]]
) -> Path:
    document = {
        "server": launch,
        "source": source,
        "tools": [bench_entry(tool) for tool in tools],
    }
    path = HERE / f"{name}.json"
    path.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n")
    return path


def _assignments(items: list[str]) -> dict[str, str]:
    return dict(item.split("=", 1) for item in items)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name", help="the server's name in the calls (file NAME.json)")
    parser.add_argument("--launch", required=True, help="how an agent launches it")
    parser.add_argument("--source", required=True, help="package and version, or repository")
    parser.add_argument("--launch-env", action="append", default=[], help="NAME=VALUE it sets")
    parser.add_argument("--env", action="append", default=[], help="NAME=VALUE to run it here")
    parser.add_argument("--snapshots", type=Path, help="a folder of saved tools/list entries")
    words = sys.argv[1:]
    split = words.index("--") if "--" in words else len(words)
    args = parser.parse_args(words[:split])
    command = words[split + 1 :]
    if args.snapshots is None and not command:
        parser.error("give the command that runs the server here after --")
    if args.snapshots is not None:
        tools = snapshot_tools(args.snapshots)
    else:
        env = _assignments(args.env)
        tools = asyncio.run(asyncio.wait_for(listed_tools(command, env), LIST_TIMEOUT_S))
    words = shlex.split(args.launch)
    launch: dict[str, Any] = {"command": words[0], "args": words[1:]}
    if args.launch_env:
        launch["env"] = _assignments(args.launch_env)
    path = write_definitions(args.name, launch, args.source, tools)
    print(f"{path}: {len(tools)} tools")


if __name__ == "__main__":
    main()
