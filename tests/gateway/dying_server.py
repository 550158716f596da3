"""An MCP server whose `die` tool ends its process: an upstream server that crashes mid-session."""

from __future__ import annotations

import asyncio
import os
from typing import Any

import mcp.types as mcp_types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

OBJECT = {"type": "object", "properties": {}}


async def list_tools(ctx: Any, params: Any) -> mcp_types.ListToolsResult:
    return mcp_types.ListToolsResult(
        tools=[
            mcp_types.Tool(name="echo", description="Says pid.", input_schema=OBJECT),
            mcp_types.Tool(name="die", description="Ends the server.", input_schema=OBJECT),
        ]
    )


async def call_tool(ctx: Any, params: mcp_types.CallToolRequestParams) -> mcp_types.CallToolResult:
    if params.name == "die":
        os._exit(3)
    return mcp_types.CallToolResult(content=[mcp_types.TextContent(text=f"pid {os.getpid()}")])


async def main() -> None:
    server: Server[Any] = Server("dying", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    asyncio.run(main())
