"""The gateway's MCP server: an agent's tools offered to an MCP client, each call forwarded
through the agent's supervision on the engine's loop."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Coroutine
from typing import Any, TypeVar

import mcp.types as mcp_types
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.stdio import stdio_server

from foundry import __version__
from foundry.gateway.forwarding import ToolSession
from foundry.runtime.engine import Engine
from foundry.tools.catalog import ToolInfo
from foundry.tools.host import ToolResult

T = TypeVar("T")
PROGRESS_EVERY_S = 5.0
MAX_NAME = 64  # what the strictest clients accept: ^[a-zA-Z0-9_-]{1,64}$
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def exposed_names(tools: list[ToolInfo]) -> dict[str, str]:
    """Each tool's name for clients (`server__tool`, only letters, digits, `_` and `-`, at most
    64 characters, unique) mapped to its qualified `server.tool` name."""
    names: dict[str, str] = {}
    for tool in tools:
        base = _UNSAFE.sub("_", f"{tool.server}__{tool.tool}")[:MAX_NAME]
        name, number = base, 2
        while name in names:
            suffix = f"-{number}"
            name, number = base[: MAX_NAME - len(suffix)] + suffix, number + 1
        names[name] = tool.name
    return names


class Gateway:
    """One client connection: the MCP handlers, the engine's tool session behind them."""

    def __init__(self, engine: Engine, session: ToolSession, agent_name: str) -> None:
        self._engine = engine
        self._session = session
        self._agent = agent_name
        self._names: dict[str, str] = {}  # what the client was last offered
        self._known: dict[str, str] = {}  # every name ever offered: a call may use any of them
        self._titled = False
        self.server: Server[Any] = Server(
            "foundry-gateway",
            version=__version__,
            instructions=f"Tools of the agent {agent_name!r}, each call supervised by Foundry.",
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
        )

    async def _on_engine(self, work: Coroutine[Any, Any, T]) -> T:
        return await asyncio.wrap_future(self._engine.submit(work))

    async def _list_tools(
        self, ctx: Any, params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListToolsResult:
        await self._name_session(ctx)
        tools = self._session.tools()
        self._offer(exposed_names(tools))
        by_name = {tool.name: tool for tool in tools}
        return mcp_types.ListToolsResult(
            tools=[
                mcp_types.Tool(
                    name=exposed,
                    description=by_name[qualified].description or None,
                    input_schema=_object_schema(by_name[qualified].parameters),
                )
                for exposed, qualified in self._names.items()
            ]
        )

    async def _call_tool(
        self, ctx: Any, params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult:
        await self._name_session(ctx)
        if not self._known:
            self._offer(exposed_names(self._session.tools()))
        qualified = self._known.get(params.name, params.name)
        work = self._on_engine(self._session.call(qualified, dict(params.arguments or {})))
        result = await _reporting_progress(ctx, asyncio.ensure_future(work))
        await self._tell_if_tools_changed(ctx)
        return mcp_types.CallToolResult(
            content=[mcp_types.TextContent(text=result.text)], is_error=result.is_error
        )

    async def _tell_if_tools_changed(self, ctx: Any) -> None:
        """A server that died (or came back) changes the tools on offer: the client is told
        with `notifications/tools/list_changed` and lists them again."""
        offered = exposed_names(self._session.tools())
        if set(offered) != set(self._names):
            self._offer(offered)
            await ctx.session.send_tool_list_changed()

    def _offer(self, names: dict[str, str]) -> None:
        self._names = names
        self._known.update(names)

    async def _name_session(self, ctx: Any) -> None:
        """Title the stored session after the client, once it has said who it is."""
        if self._titled:
            return
        self._titled = True
        params = getattr(ctx.session, "client_params", None)
        client = params.client_info.name if params and params.client_info else "an MCP client"
        title = f"{client} via the gateway"
        store = self._engine.store
        await asyncio.to_thread(store.sessions.update, self._session.session_id, title=title)


async def _reporting_progress(ctx: Any, work: asyncio.Future[ToolResult]) -> ToolResult:
    """Wait for the call, telling a client that asked for progress that it is still waiting
    (for a person, say); cancelling the wait cancels the call."""
    waited = 0.0
    try:
        while True:
            done, _ = await asyncio.wait({work}, timeout=PROGRESS_EVERY_S)
            if done:
                return work.result()
            waited += PROGRESS_EVERY_S
            message = f"waiting for the decision ({waited:g} s)"
            await ctx.session.report_progress(waited, None, message)
    finally:
        work.cancel()


def _object_schema(parameters: dict[str, Any]) -> dict[str, Any]:
    return parameters if parameters.get("type") == "object" else {"type": "object", **parameters}


async def serve_stdio(gateway: Gateway) -> None:
    async with stdio_server() as (read, write):
        options = gateway.server.create_initialization_options(
            NotificationOptions(tools_changed=True)
        )
        await gateway.server.run(read, write, options)
