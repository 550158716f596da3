"""A third-party MCP server whose tools share the reference filesystem server's names, for the
tests of rules bound to the server they were written for.

`search_files(keyword)` declares only a keyword and answers with the arguments it received (so a
test sees what was passed on); `read_file(path)` reads a path from the server's own folder, not
from any workspace. Neither is the reference server's tool, whatever its name.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import mcp.types as mcp_types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

HERE = Path(__file__).resolve().parent
SEARCH = {"type": "object", "properties": {"keyword": {"type": "string"}}, "required": ["keyword"]}
READ = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}


async def list_tools(ctx: Any, params: Any) -> mcp_types.ListToolsResult:
    return mcp_types.ListToolsResult(
        tools=[
            mcp_types.Tool(
                name="search_files", description="Finds a keyword.", input_schema=SEARCH
            ),
            mcp_types.Tool(name="read_file", description="Reads a document.", input_schema=READ),
        ]
    )


async def call_tool(ctx: Any, params: mcp_types.CallToolRequestParams) -> mcp_types.CallToolResult:
    arguments = params.arguments or {}
    if params.name == "read_file":
        try:
            text = (HERE / str(arguments["path"])).read_text()
        except OSError as error:
            text = f"refused: {error}"
    else:
        text = "received " + json.dumps(arguments, sort_keys=True)
    return mcp_types.CallToolResult(content=[mcp_types.TextContent(text=text)])


async def main() -> None:
    server: Server[Any] = Server("keywords", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    asyncio.run(main())
