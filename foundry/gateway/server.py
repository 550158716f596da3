"""The gateway's MCP server: an agent's tools (and, read-only, its servers' resources and prompts)
offered to MCP clients, each call and read forwarded through the agent's supervision. It serves
on the engine's loop, where the calls are decided and run: a call never waits for another thread
(a hop between two busy loops costs a GIL hand-over each way). On stdio it serves one client;
over streamable HTTP (loopback, the API token as Bearer) each client gets its own recorded
session."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import signal
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mcp.types as mcp_types
from mcp.server.connection import Connection
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.shared.exceptions import MCPError

from foundry import __version__
from foundry.gateway import reads
from foundry.gateway.activity import TITLE_SUFFIX
from foundry.gateway.passthrough import CallerRelay, client_result, exposed, offered_tool
from foundry.gateway.stdio import stdio_streams
from foundry.runtime.engine import Engine
from foundry.runtime.tool_session import ToolSession
from foundry.session.events import Event, ToolServerChanged
from foundry.tools.catalog import ToolInfo
from foundry.tools.host import ReadKind, ToolResult, listening

PROGRESS_EVERY_S = 5.0
MAX_CLIENT_NAME = 100
_LINE_BREAK = dict.fromkeys("\t\n\v\f\r\x85\u2028\u2029", " ")


def exposed_names(tools: list[ToolInfo]) -> dict[str, str]:
    """Each tool's name for clients (`server__tool`, only letters, digits, `_` and `-`, at most
    64 characters, unique) mapped to its qualified `server.tool` name."""
    shown = exposed((tool.server, tool.tool) for tool in tools)
    return dict(zip(shown, (tool.name for tool in tools), strict=True))


@dataclass
class _Client:
    """One client connection: its session and the tools it was offered."""

    session: ToolSession
    peer: Any = None  # the client's MCP session, to tell it of changes between its requests
    titled: bool = False
    names: dict[str, str] = field(default_factory=dict)  # what it was last offered
    known: dict[str, str] = field(default_factory=dict)  # every name ever offered to it
    prompts: reads.Prompts = field(default_factory=dict)  # every prompt name offered to it
    offered: list[mcp_types.Tool] = field(default_factory=list)  # the entries last offered
    offered_from: list[ToolInfo] = field(default_factory=list)

    def offer(self, tools: list[ToolInfo]) -> list[mcp_types.Tool]:
        """Offer these tools (each entry as its server listed it, under the exposed name)."""
        if tools == self.offered_from and self.offered:
            return self.offered  # the same tools (the same objects, found at once)
        self.offered_from = tools
        self.names = exposed_names(tools)
        self.known.update(self.names)
        by_name = {tool.name: tool for tool in tools}
        self.offered = [offered_tool(shown, by_name[name]) for shown, name in self.names.items()]
        return self.offered


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
            on_list_resources=self._list_resources,
            on_list_resource_templates=self._list_resource_templates,
            on_read_resource=self._read_resource,
            on_list_prompts=self._list_prompts,
            on_get_prompt=self._get_prompt,
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
        return mcp_types.ListToolsResult(tools=client.offer(client.session.tools()))

    async def _call_tool(
        self, ctx: Any, params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult:
        """The call decided and run as the session does; the result passed on as the server sent
        it (but what supervision changed), its JSON-RPC error as that error. A tool the gateway
        does not offer is a JSON-RPC error too (the refusal is still recorded and traced)."""
        client = await self._client(ctx)
        if not client.known:
            client.offer(client.session.tools())
        qualified = client.known.get(params.name, params.name)
        unknown = _unknown(client.session, qualified)
        call = client.session.call(qualified, dict(params.arguments or {}))
        result = await _answered(ctx, call)
        await _tell_if_tools_changed(client)
        if unknown:
            raise MCPError(mcp_types.INVALID_PARAMS, result.text)
        return client_result(result)

    async def _list_resources(
        self, ctx: Any, params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListResourcesResult:
        client = await self._client(ctx)
        return await reads.resources(client.session.host)

    async def _list_resource_templates(
        self, ctx: Any, params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListResourceTemplatesResult:
        client = await self._client(ctx)
        return await reads.resource_templates(client.session.host)

    async def _read_resource(
        self, ctx: Any, params: mcp_types.ReadResourceRequestParams
    ) -> mcp_types.ReadResourceResult:
        """Read as a call of `SERVER.read_resource` the gate decides, recorded as calls are."""
        client = await self._client(ctx)
        uri = str(params.uri)
        server = await reads.resource_server(client.session.host, uri)
        result = await _read(ctx, client.session, server, "read_resource", {"uri": uri})
        return reads.read_result(result)

    async def _list_prompts(
        self, ctx: Any, params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListPromptsResult:
        client = await self._client(ctx)
        listed, names = await reads.prompts(client.session.host)
        client.prompts.update(names)
        return listed

    async def _get_prompt(
        self, ctx: Any, params: mcp_types.GetPromptRequestParams
    ) -> mcp_types.GetPromptResult:
        """Got as a call of `SERVER.get_prompt` the gate decides, recorded as calls are."""
        client = await self._client(ctx)
        if params.name not in client.prompts:
            client.prompts.update((await reads.prompts(client.session.host))[1])
        if params.name not in client.prompts:
            message = f"The gateway offers no prompt named {params.name!r}: list the prompts."
            raise MCPError(mcp_types.INVALID_PARAMS, message)
        server, name = client.prompts[params.name]
        arguments = {"name": name, "arguments": dict(params.arguments or {})}
        result = await _read(ctx, client.session, server, "get_prompt", arguments)
        return reads.prompt_result(result)


async def _read(
    ctx: Any, session: ToolSession, server: str, kind: ReadKind, arguments: dict[str, Any]
) -> ToolResult:
    tool = session.host.read_tool(server, kind)
    if tool is None:
        message = f"MCP server {server!r} is not running: try again in a moment."
        raise MCPError(mcp_types.INTERNAL_ERROR, message)
    return await _answered(ctx, session.call(tool.name, arguments, read=tool))


def _unknown(session: ToolSession, name: str) -> bool:
    """No tool of that name is on offer, and no server it could belong to is down (whose tools
    come back when it is restarted: their calls are results that say so)."""
    if session.tool(name) is not None:
        return False
    servers = [status for status in session.host.statuses() if name.startswith(f"{status.name}.")]
    return all(status.state == "running" for status in servers)


async def _tell_if_tools_changed(client: _Client) -> None:
    """Tools on offer that changed (a server listed new ones, died, came back, or changed a
    tool's definition under the same name) are sent to the client as
    `notifications/tools/list_changed`, and it lists them again."""
    if client.peer is None:
        return
    before = client.offered
    if client.offer(client.session.tools()) != before:
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
    """The call's result. What its server says meanwhile reaches the client that made it (its
    log messages, its questions for the user; its progress if the request has a progressToken,
    and then the gateway's own: still waiting). Cancelling the request cancels the call."""
    relay = CallerRelay(ctx)
    with listening(relay.listener()):
        if (ctx.meta or {}).get("progress_token") is None:
            return await call  # no task, no timer: nothing to report to
        return await _reporting_progress(relay, asyncio.ensure_future(call))


async def _reporting_progress(relay: CallerRelay, work: asyncio.Future[ToolResult]) -> ToolResult:
    """Wait for the call, telling the client every PROGRESS_EVERY_S that it is still waiting
    (for a person, say); cancelling the wait cancels the call."""
    waited = 0.0
    try:
        while True:
            done, _ = await asyncio.wait({work}, timeout=PROGRESS_EVERY_S)
            if done:
                return work.result()
            waited += PROGRESS_EVERY_S
            await relay.waiting(waited)
    finally:
        work.cancel()


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


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def serve_on_engine(engine: Engine, serving: Coroutine[Any, Any, None]) -> None:
    """Run `serving` on the engine's loop until it ends, or SIGTERM or Ctrl+C stop it (the
    signals reach this, the main, thread, which only waits). Both are handled here, also when
    the process was started with SIGINT ignored (from a shell's background job, as a test
    runner started with `&` starts it): the gateway then ignored Ctrl+C and never stopped."""
    stop = asyncio.Event()

    def terminate(*_: object) -> None:
        engine.submit(_set(stop))

    # What start-up allocated (modules, schemas, the servers' sessions) lives as long as the
    # gateway: kept out of the full collections, which held every call up for about 75 ms
    # (20 to 35 ms since), as the app does.
    gc.freeze()
    served = engine.submit(until_stopped(serving, stop))
    previous = {number: signal.signal(number, terminate) for number in STOP_SIGNALS}
    try:
        return served.result()
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


async def _set(event: asyncio.Event) -> None:
    event.set()
