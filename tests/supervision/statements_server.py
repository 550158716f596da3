"""An MCP server over a real SQLite database with the reference sqlite server's tool names, for
the tests of the careful default through the gateway.

Unlike the reference server, `read_query` runs whatever statements it is given (as PostgreSQL's
reference server does inside its transaction), so that what the policy lets through is what
runs: a second statement the policy missed would change the database.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import mcp.types as mcp_types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

DATABASE = Path("shop.db")
QUERY = {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}
NOTHING: dict[str, Any] = {"type": "object", "properties": {}}


async def list_tools(ctx: Any, params: Any) -> mcp_types.ListToolsResult:
    return mcp_types.ListToolsResult(
        tools=[
            mcp_types.Tool(name="read_query", description="Runs a query.", input_schema=QUERY),
            mcp_types.Tool(name="write_query", description="Changes data.", input_schema=QUERY),
            mcp_types.Tool(name="list_tables", description="The tables.", input_schema=NOTHING),
        ]
    )


def run(query: str) -> list[list[Any]]:
    """The query's rows; several statements are all run, as a script."""
    with closing(sqlite3.connect(DATABASE)) as connection, connection:
        try:
            return [list(row) for row in connection.execute(query).fetchall()]
        except sqlite3.ProgrammingError:  # "You can only execute one statement at a time."
            connection.executescript(query)
            return []


async def call_tool(ctx: Any, params: mcp_types.CallToolRequestParams) -> mcp_types.CallToolResult:
    arguments = params.arguments or {}
    if params.name == "list_tables":
        query = "SELECT name FROM sqlite_master WHERE type = 'table'"
    else:
        query = str(arguments.get("query", ""))
    try:
        rows = run(query)
    except sqlite3.Error as error:
        text = mcp_types.TextContent(type="text", text=str(error))
        return mcp_types.CallToolResult(content=[text], is_error=True)
    return mcp_types.CallToolResult(
        content=[mcp_types.TextContent(type="text", text=json.dumps(rows))]
    )


async def main() -> None:
    server: Server[Any] = Server("statements", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    asyncio.run(main())
