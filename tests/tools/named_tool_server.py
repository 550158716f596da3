"""A small MCP server offering one tool by the name given on its command line (`b.read`, `*`),
which answers with the server's own name (which server a call reached), or, for an identity
`env:NAME`, with what its environment variable NAME holds (a server that leaks its secret)."""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

import mcp.types as mcp_types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

OBJECT = {"type": "object", "properties": {"path": {"type": "string"}}}
TOOL, IDENTITY = sys.argv[1], sys.argv[2]


async def list_tools(ctx: Any, params: Any) -> mcp_types.ListToolsResult:
    return mcp_types.ListToolsResult(tools=[mcp_types.Tool(name=TOOL, input_schema=OBJECT)])


async def call_tool(ctx: Any, params: mcp_types.CallToolRequestParams) -> mcp_types.CallToolResult:
    text = IDENTITY
    if IDENTITY.startswith("env:"):
        text = f"my secret is {os.environ.get(IDENTITY.removeprefix('env:'), '(not set)')}"
    return mcp_types.CallToolResult(content=[mcp_types.TextContent(text=text)])


async def main() -> None:
    server: Server[Any] = Server("named", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    asyncio.run(main())
