"""A bare MCP proxy, the floor bench/gateway.py measures the gateway against: the same parts of
the `mcp` SDK the gateway is made of (its low-level server on stdio, a ClientSession to the
upstream server), forwarding each `tools/call` with no decision and no recording.

With --loop-stdio it serves on the gateway's stdio (pipes on the loop, foundry/gateway/stdio.py)
instead of the SDK's own (which reads and writes in worker threads).

Run (from the repository): python -m bench.bare_proxy [--loop-stdio] -- COMMAND [ARGS...]
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Sequence
from typing import Any

import mcp.types as mcp_types
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.stdio import get_default_environment
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server


async def serve(command: str, args: Sequence[str], loop_stdio: bool) -> None:
    params = StdioServerParameters(command=command, args=list(args), env=get_default_environment())
    async with stdio_client(params) as (read, write), ClientSession(read, write) as upstream:
        await upstream.initialize()
        listed = await upstream.list_tools()

        async def list_tools(ctx: Any, params: Any) -> mcp_types.ListToolsResult:
            return mcp_types.ListToolsResult(tools=listed.tools)

        async def call_tool(
            ctx: Any, params: mcp_types.CallToolRequestParams
        ) -> mcp_types.CallToolResult:
            return await upstream.call_tool(params.name, params.arguments)

        server: Server[Any] = Server("bare-proxy", on_list_tools=list_tools, on_call_tool=call_tool)
        streams: Any = stdio_server()
        if loop_stdio:
            from foundry.gateway.stdio import stdio_streams

            streams = stdio_streams()
        async with streams as (client_read, client_write):
            await server.run(client_read, client_write, server.create_initialization_options())


def run() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--loop-stdio", action="store_true")
    parser.add_argument("command")
    parser.add_argument("args", nargs="*")
    options = parser.parse_args()
    asyncio.run(serve(options.command, options.args, options.loop_stdio))


if __name__ == "__main__":
    run()
