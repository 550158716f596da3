"""A small MCP server for the gateway's tests: `die` ends its process (a server that crashes
mid-session), `say` answers with its text, `leak` answers with a secret, `grow` adds a tool and
says its tool list changed, `note` writes its text to a file (a call that leaves a trace)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import mcp.types as mcp_types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

OBJECT = {"type": "object", "properties": {}}
GROWN: list[str] = []
TEXT = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
NOTE = {"type": "object", "properties": {"path": {"type": "string"}, "text": {"type": "string"}}}


async def list_tools(ctx: Any, params: Any) -> mcp_types.ListToolsResult:
    return mcp_types.ListToolsResult(
        tools=[
            mcp_types.Tool(name="echo", description="Says pid.", input_schema=OBJECT),
            mcp_types.Tool(name="die", description="Ends the server.", input_schema=OBJECT),
            mcp_types.Tool(name="say", description="Says the text.", input_schema=TEXT),
            mcp_types.Tool(name="leak", description="Says a secret.", input_schema=OBJECT),
            mcp_types.Tool(name="grow", description="Adds a tool.", input_schema=OBJECT),
            mcp_types.Tool(name="note", description="Writes a file.", input_schema=NOTE),
            *(mcp_types.Tool(name=name, input_schema=OBJECT) for name in GROWN),
        ]
    )


async def call_tool(ctx: Any, params: mcp_types.CallToolRequestParams) -> mcp_types.CallToolResult:
    if params.name == "die":
        os._exit(3)
    if params.name == "grow":
        GROWN.append(f"grown{len(GROWN) + 1}")
        await ctx.session.send_tool_list_changed()
    if params.name == "note":
        arguments = params.arguments or {}
        Path(arguments["path"]).write_text(arguments.get("text", ""))
    if params.name in ("say", "leak"):
        text = (params.arguments or {}).get("text", "the key is SECRET-KEY-42")
        return mcp_types.CallToolResult(content=[mcp_types.TextContent(text=text)])
    return mcp_types.CallToolResult(content=[mcp_types.TextContent(text=f"pid {os.getpid()}")])


async def main() -> None:
    server: Server[Any] = Server("dying", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    asyncio.run(main())
