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
# it reaches nothing outside the machine: said, or MCP's default (open-world) would make each of
# its results untrusted content, and each later call that is not a read ask a person
LOCAL = mcp_types.ToolAnnotations(open_world_hint=False)


def local_tool(name: str, description: str | None, schema: dict[str, Any]) -> mcp_types.Tool:
    return mcp_types.Tool(
        name=name, description=description, input_schema=schema, annotations=LOCAL
    )


async def list_tools(ctx: Any, params: Any) -> mcp_types.ListToolsResult:
    return mcp_types.ListToolsResult(
        tools=[
            local_tool("echo", "Says pid.", OBJECT),
            local_tool("die", "Ends the server.", OBJECT),
            local_tool("say", "Says the text.", TEXT),
            local_tool("leak", "Says a secret.", OBJECT),
            local_tool("grow", "Adds a tool.", OBJECT),
            local_tool("note", "Writes a file.", NOTE),
            *(local_tool(name, None, OBJECT) for name in GROWN),
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
