"""The gateway's MCP server: an agent's tools offered to MCP clients, each call forwarded through
the agent's supervision. It serves on the engine's loop, where the calls are decided and run: a
call never waits for another thread (a hop between two busy loops costs a GIL hand-over each
way). On stdio it serves one client; over streamable HTTP (loopback, the API token as Bearer)
each client gets its own recorded session."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import re
import signal
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mcp.types as mcp_types
from mcp.server.connection import Connection
from mcp.server.lowlevel import NotificationOptions, Server

from foundry import __version__
from foundry.gateway.forwarding import TITLE_SUFFIX, ToolSession
from foundry.gateway.stdio import stdio_streams
from foundry.runtime.engine import Engine
from foundry.session.events import Event, ToolServerChanged
from foundry.tools.catalog import ToolInfo
from foundry.tools.host import ToolResult

PROGRESS_EVERY_S = 5.0
MAX_NAME = 64  # what the strictest clients accept: ^[a-zA-Z0-9_-]{1,64}$
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
MAX_CLIENT_NAME = 100
_LINE_BREAK = dict.fromkeys("\t\n\v\f\r\x85\u2028\u2029", " ")


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


@dataclass
class _Client:
    """One client connection: its session and the tool names it was offered."""

    session: ToolSession
    peer: Any = None  # the client's MCP session, to tell it of changes between its requests
    titled: bool = False
    names: dict[str, str] = field(default_factory=dict)  # what it was last offered
    known: dict[str, str] = field(default_factory=dict)  # every name ever offered to it

    def offer(self, names: dict[str, str]) -> None:
        self.names = names
        self.known.update(names)


class _ToolsChangeServer(Server[Any]):
    """The SDK's server, saying on every transport that it tells clients when its tools change
    (the SDK's HTTP sessions are initialized with its defaults, which say it does not)."""

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> Any:
        return super().create_initialization_options(
            notification_options or NotificationOptions(tools_changed=True),
            experimental_capabilities,
            extensions,
        )


class Gateway:
    """The MCP handlers, served on the engine's loop; the first client uses `first`, later ones
    (over HTTP) sessions of their own on the same running servers."""

    def __init__(self, engine: Engine, first: ToolSession, agent: Path, agent_name: str) -> None:
        self._engine = engine
        self._first = first
        self._agent = agent
        self._clients: dict[str, _Client] = {}
        self._first_taken = False
        self._told: set[asyncio.Future[None]] = set()
        self.server: Server[Any] = _ToolsChangeServer(
            "foundry-gateway",
            version=__version__,
            instructions=f"Tools of the agent {agent_name!r}, each call supervised by Foundry.",
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
        )

    def watch(self) -> Callable[[], None]:
        """Tell clients, between their requests, when the tools on offer change (a server
        listed its tools again, died or came back); returns the way to stop watching."""
        loop = asyncio.get_running_loop()
        sessions = {self._first.session_id}

        def on_event(event: Event) -> None:
            if isinstance(event.body, ToolServerChanged) and event.session_id in sessions:
                loop.call_soon_threadsafe(self._tell_clients)

        return self._engine.bus.subscribe(on_event)

    def _tell_clients(self) -> None:
        for client in list(self._clients.values()):
            if client.peer is not None:
                self._told.add(asyncio.ensure_future(_tell_if_tools_changed(client)))
                self._told = {task for task in self._told if not task.done()}

    def options(self) -> Any:
        return self.server.create_initialization_options()

    async def aclose(self) -> None:
        for client in list(self._clients.values()):
            if client.session is not self._first:
                await client.session.aclose()

    def clients(self) -> int:
        """How many clients are connected (each with its session)."""
        return len(self._clients)

    async def _client(self, ctx: Any) -> _Client:
        """The connection's client, its session titled after it once it has said who it is.
        An HTTP client's session ends with its connection (the client's DELETE, the SDK's idle
        timeout, the gateway's end)."""
        key = _connection_key(ctx)
        client = self._clients.get(key)
        if client is None:
            client = self._clients[key] = _Client(await self._new_session())
            connection = _connection_of(ctx)
            if key and connection is not None:
                connection.exit_stack.push_async_callback(self._client_left, key)
        client.peer = ctx.session
        if not client.titled:
            client.titled = True
            title = f"{_client_name(ctx)}{TITLE_SUFFIX}"
            update = self._engine.store.sessions.update
            await asyncio.to_thread(update, client.session.session_id, title=title)
        return client

    async def _new_session(self) -> ToolSession:
        """The first client's is `first`; every later one (over HTTP) gets a session of its own
        (the first's is never handed out again, even once its client has left)."""
        if not self._first_taken:
            self._first_taken = True
            return self._first
        return await self._engine.open_tool_session(self._agent, "", host=self._first.host)

    async def _client_left(self, key: str) -> None:
        """A client's connection ended: its session is ended, what it recorded stored (the
        first session, which runs the servers, stays open for the others and is closed last)."""
        client = self._clients.get(key)
        if client is None:
            return
        if client.session is self._first:
            await client.session.settle()
        else:
            await client.session.aclose()
        del self._clients[key]  # once stored: `clients()` counts it until then

    async def _list_tools(
        self, ctx: Any, params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListToolsResult:
        client = await self._client(ctx)
        tools = client.session.tools()
        client.offer(exposed_names(tools))
        by_name = {tool.name: tool for tool in tools}
        return mcp_types.ListToolsResult(
            tools=[
                mcp_types.Tool(
                    name=exposed,
                    description=by_name[qualified].description or None,
                    input_schema=_object_schema(by_name[qualified].parameters),
                )
                for exposed, qualified in client.names.items()
            ]
        )

    async def _call_tool(
        self, ctx: Any, params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult:
        client = await self._client(ctx)
        if not client.known:
            client.offer(exposed_names(client.session.tools()))
        qualified = client.known.get(params.name, params.name)
        result = await _answered(ctx, client.session.call(qualified, dict(params.arguments or {})))
        await _tell_if_tools_changed(client)
        return mcp_types.CallToolResult(
            content=[mcp_types.TextContent(text=result.text)], is_error=result.is_error
        )


async def _tell_if_tools_changed(client: _Client) -> None:
    """Tools on offer that changed (a server listed new ones, died or came back) are sent to
    the client as `notifications/tools/list_changed`, and it lists them again."""
    tools = client.session.tools()
    if [tool.name for tool in tools] == list(client.names.values()):
        return  # the same tools in the same order are offered under the same names
    offered = exposed_names(tools)
    if set(offered) != set(client.names) and client.peer is not None:
        client.offer(offered)
        await client.peer.send_tool_list_changed()


def _connection_key(ctx: Any) -> str:
    """Which client sent the request: its HTTP session's id, or the one stdio client."""
    request = getattr(ctx, "request", None)
    headers = getattr(request, "headers", None)
    return str(headers.get("mcp-session-id", "")) if headers is not None else ""


def _connection_of(ctx: Any) -> Connection | None:
    """The SDK's connection a request came on, whose `exit_stack` it unwinds when the connection
    ends (over HTTP: the client's DELETE, the idle timeout, a crash, the server's end). The SDK
    gives it to its high-level Context, not to a low-level handler's: it is read off the
    request's session (mcp 2.3.0; None, and sessions last until the gateway ends, otherwise)."""
    connection = getattr(ctx.session, "_connection", None)
    return connection if isinstance(connection, Connection) else None


def _client_name(ctx: Any) -> str:
    params = getattr(ctx.session, "client_params", None)
    info = getattr(params, "client_info", None)
    return shown_name(str(info.name) if info is not None else "")


def shown_name(claimed: str) -> str:
    """The client's name as the inbox and the Gateway view show it: one line of at most
    MAX_CLIENT_NAME printable characters (control, direction and zero-width characters dropped,
    line breaks and runs of spaces made one space). Markup stays text: the views escape it."""
    printable = "".join(
        char if char.isprintable() else _LINE_BREAK.get(char, "") for char in claimed
    )
    return " ".join(printable.split())[:MAX_CLIENT_NAME].rstrip() or "an MCP client"


async def _answered(ctx: Any, call: Coroutine[Any, Any, ToolResult]) -> ToolResult:
    """The call's result; a client that asked for progress (its request has a progressToken)
    is told meanwhile that it is still waiting. Cancelling the request cancels the call."""
    if (ctx.meta or {}).get("progress_token") is None:
        return await call  # no task, no timer: nothing to report to
    return await _reporting_progress(ctx, asyncio.ensure_future(call))


async def _reporting_progress(ctx: Any, work: asyncio.Future[ToolResult]) -> ToolResult:
    """Wait for the call, telling the client every PROGRESS_EVERY_S that it is still waiting
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
    """Serve the one client on stdin and stdout until it closes stdin."""
    stop_watching = gateway.watch()
    try:
        async with stdio_streams() as (read, write):
            await gateway.server.run(read, write, gateway.options())
    finally:
        stop_watching()


async def until_stopped(serving: Coroutine[Any, Any, None], stop: asyncio.Event) -> None:
    """Serve until done or `stop` is set (SIGTERM, Ctrl+C), which ends serving as a closed
    stdin does, so that what was recorded is then stored before the process exits."""
    task = asyncio.ensure_future(serving)
    stopping = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({task, stopping}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopping.cancel()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def serve_on_engine(engine: Engine, serving: Coroutine[Any, Any, None]) -> None:
    """Run `serving` on the engine's loop until it ends, or SIGTERM or Ctrl+C stop it (the
    signals reach this, the main, thread, which only waits)."""
    stop = asyncio.Event()

    def terminate(*_: object) -> None:
        engine.submit(_set(stop))

    # What start-up allocated (modules, schemas, the servers' sessions) lives as long as the
    # gateway: kept out of the full collections, which held every call up for about 75 ms
    # (20 to 35 ms since), as the app does.
    gc.freeze()
    served = engine.submit(until_stopped(serving, stop))
    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        while True:
            try:
                return served.result()
            except KeyboardInterrupt:
                terminate()
    finally:
        signal.signal(signal.SIGTERM, previous)


async def _set(event: asyncio.Event) -> None:
    event.set()
