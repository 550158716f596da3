"""Hosts an agent's MCP servers: each one's connection, its status, and calls to its tools."""

from __future__ import annotations

import asyncio
import logging
import math
import os
import sys
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Iterable, Iterator
from contextlib import (
    AbstractAsyncContextManager,
    AsyncExitStack,
    asynccontextmanager,
    contextmanager,
)
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, NamedTuple, TextIO

import anyio
import httpx2
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp import types as mcp_types
from mcp.client.session import MessageHandlerFnT
from mcp.client.sse import sse_client
from mcp.client.stdio import get_default_environment
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.dispatcher import ProgressFnT
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from pydantic import BaseModel, ConfigDict, TypeAdapter

from foundry.agent.models import (
    InternalServer,
    McpServerConfig,
    SseServer,
    StdioServer,
    StreamableHttpServer,
)
from foundry.agent.secrets import (
    DOTENV_NAME,
    SecretError,
    SecretNotSetError,
    resolve_secret,
)
from foundry.tools.catalog import ToolInfo, qualified_name, resolve_tool_settings
from foundry.tools.confinement import confined, confinement_for

logger = logging.getLogger(__name__)

ServerState = Literal["starting", "running", "failed", "stopped"]
HostedServer = StdioServer | SseServer | StreamableHttpServer | InternalServer
Incoming = SessionMessage | Exception
# A transport's (read, write) streams; the SDK's own alias for the pair is private.
TransportStreams = tuple[Any, Any]

STATE_WORDS: dict[ServerState, str] = {
    "starting": "is still starting",
    "running": "is running",
    "failed": "has failed",
    "stopped": "is stopped",
}
INTERNAL_SERVER_NOTE = "internal tools are provided by Foundry itself"
CHANGED_SINCE_TRUSTED = (
    "held: its command, script or environment changed since it was trusted (Trust and start, "
    "or `foundry trust`)"
)
STOP_TIMEOUT_S = 10.0  # the SDK gives a stdio server 2 s after stdin closes, then 2 s after SIGTERM
CALL_GRACE_S = 5.0  # beyond a call's own timeout, for a request that cannot even be sent
HTTP_TIMEOUT_S = 30.0
HTTP_READ_TIMEOUT_S = 300.0
STDERR_TAIL_BYTES = 4000
MAX_TOOL_PAGES = 100
PYTHON_COMMANDS = ("python", "python3")


class UpstreamError(BaseModel):
    """The JSON-RPC error a server answered a request with, as it sent it."""

    model_config = ConfigDict(frozen=True)

    code: int
    message: str
    data: Any = None


class ToolResult(BaseModel):
    """What a tool call gave back, as the model will read it."""

    model_config = ConfigDict(frozen=True)

    text: str
    is_error: bool
    # the server answered with a JSON-RPC error, not a result (then `text` says it in words)
    error: UpstreamError | None = None
    structured: dict[str, Any] | None = None
    # the result's content blocks as the server sent them, in MCP's wire shape (images, audio,
    # resource links and embedded resources too); empty for a result made here, which is `text`
    content: tuple[dict[str, Any], ...] = ()
    meta: dict[str, Any] | None = None  # the result's `_meta`
    final: bool = False  # the text is the agent's answer: the turn ends with it, word for word


Progress = ProgressFnT  # (progress, total, message), awaited
LogMessage = Callable[[mcp_types.LoggingMessageNotificationParams], Awaitable[None]]
Elicit = Callable[[mcp_types.ElicitRequestParams], Awaitable[mcp_types.ElicitResult]]


@dataclass(frozen=True)
class CallListener:
    """Who hears what a server says during a request besides its answer: its progress, its log
    messages, and its questions to the user (elicitation). Set with `listening` around the
    request: it is the caller's, whatever layers (the gate, the recording) lie between."""

    progress: Progress | None = None
    log: LogMessage | None = None
    elicit: Elicit | None = None


_listener: ContextVar[CallListener | None] = ContextVar("foundry_call_listener", default=None)


def current_listener() -> CallListener | None:
    """The listener of the requests made here (`listening`), if any."""
    return _listener.get()


@contextmanager
def listening(listener: CallListener) -> Iterator[None]:
    """Requests made to a server inside this block are heard by `listener`."""
    token = _listener.set(listener)
    try:
        yield
    finally:
        _listener.reset(token)


class ServerStatus(BaseModel):
    """Where one MCP server stands, with the reason and its last error output when it failed."""

    model_config = ConfigDict(frozen=True)

    name: str
    state: ServerState
    error: str | None = None
    stderr_tail: str = ""
    tools: tuple[ToolInfo, ...] = ()


OfferKind = Literal["resources", "resourceTemplates", "prompts"]
ReadKind = Literal["read_resource", "get_prompt"]
# a resource read or prompt get is judged as a call of `SERVER.read_resource` or
# `SERVER.get_prompt` with these parameters
READ_SCHEMAS: dict[ReadKind, dict[str, Any]] = {
    "read_resource": {
        "type": "object",
        "properties": {"uri": {"type": "string"}},
        "required": ["uri"],
    },
    "get_prompt": {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "arguments": {"type": "object", "additionalProperties": {"type": "string"}},
        },
        "required": ["name"],
    },
}
READ_DESCRIPTIONS: dict[ReadKind, str] = {
    "read_resource": "Reads a resource of MCP server {server!r} (resources/read).",
    "get_prompt": "Gets a prompt of MCP server {server!r} (prompts/get).",
}


class ServerItem(NamedTuple):
    """A resource, resource template or prompt one server offers, in MCP's wire shape."""

    server: str
    item: dict[str, Any]


class ServerNotHostedError(LookupError):
    """A server name that this host does not run."""


class ServerStartError(Exception):
    """A server configuration that cannot be started, in plain words."""


StatusListener = Callable[[ServerStatus], None]
# how an internal server (`type: internal`) is reached: a transport to the in-process server
# that serves its `tool` (runtime/internal_tools.py), for the server's name and configuration
InternalTransport = Callable[[str, InternalServer], AbstractAsyncContextManager[TransportStreams]]
Send = Callable[[ClientSession, Progress | None], Awaitable[ToolResult]]


class _Listing(NamedTuple):
    statuses: tuple[ServerStatus, ...]  # the servers' statuses the tools were listed from
    tools: tuple[ToolInfo, ...]
    by_name: dict[str, ToolInfo]


class ToolHost:
    """Starts an agent's MCP servers and calls their tools; a failing server never raises."""

    def __init__(
        self,
        servers: dict[str, McpServerConfig],
        base_dir: Path,
        on_status: StatusListener | None = None,
        start_timeout_s: float = 20.0,
        untrusted: Callable[[], Collection[str]] | None = None,
        workspace: Path | None = None,
        internal: InternalTransport | None = None,
    ) -> None:
        """`untrusted` names the servers whose commands are not trusted as the files are now
        (blocking: it reads them); a restart holds those instead of starting what changed.
        `workspace` is the folder the stdio servers may change (the agent's folder unless
        given); the kernel confines them to it (tools/confinement.py). `internal` reaches the
        internal servers, which run as any other then; without it they are not offered."""
        self._order = list(servers)
        self._untrusted = untrusted
        self._internal = {
            name: ServerStatus(name=name, state="stopped", error=INTERNAL_SERVER_NOTE)
            for name, config in servers.items()
            if isinstance(config, InternalServer) and internal is None
        }
        self._runners = {
            name: _ServerRunner(
                name=name,
                config=config,
                base_dir=base_dir,
                workspace=base_dir if workspace is None else workspace,
                start_timeout_s=start_timeout_s,
                on_status=on_status,
                internal=internal,
            )
            for name, config in servers.items()
            if name not in self._internal
        }
        self._listing = _Listing((), (), {})

    async def __aenter__(self) -> ToolHost:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def start(self) -> None:
        """Starts every server at once (but those held) and returns when each is running or has
        failed."""
        await asyncio.gather(*(runner.start() for runner in self._runners.values()))

    def hold(self, servers: Collection[str], reason: str) -> None:
        """Keeps these servers stopped, saying why (their commands are not trusted), until
        `release`; call it before `start`."""
        for name in servers:
            self._runner(name).held = reason

    async def release(self) -> None:
        """Starts the servers that were held."""
        held = [runner for runner in self._runners.values() if runner.held is not None]
        for runner in held:
            runner.held = None
        await asyncio.gather(*(runner.start() for runner in held))

    @property
    def held(self) -> list[str]:
        return [name for name, runner in self._runners.items() if runner.held is not None]

    def statuses(self) -> list[ServerStatus]:
        return [self._status(name) for name in self._order]

    def tools(self) -> list[ToolInfo]:
        """The tools of the running servers, each under a name that reads as its own server's."""
        return list(self._listed().tools)

    def tool(self, name: str) -> ToolInfo | None:
        """The tool called `name` among `tools`."""
        return self._listed().by_name.get(name)

    def _listed(self) -> _Listing:
        """`tools`, listed again only when a server's status changed (each call looks its tool
        up, and a status is replaced, never changed)."""
        statuses = tuple(runner.status for runner in self._runners.values())
        if statuses != self._listing.statuses:  # the same objects compare at once
            tools = tuple(
                tool
                for status in statuses
                if status.state == "running"
                for tool in status.tools
                if self._server_named_in(tool.name) == tool.server
            )
            by_name: dict[str, ToolInfo] = {}
            for tool in tools:
                by_name.setdefault(tool.name, tool)
            self._listing = _Listing(statuses, tools, by_name)
        return self._listing

    def _server_named_in(self, name: str) -> str | None:
        """The server a tool's name reads as, the longest server name it starts with, as paths
        are judged: a tool `b.read` of server `a` cannot pass for `read` of server `a.b`."""
        servers = (server for server in self._order if name.startswith(server + "."))
        return max(servers, key=len, default=None)

    async def call(
        self, name: str, arguments: dict[str, Any], timeout_s: float = 60.0
    ) -> ToolResult:
        """Calls the tool `server.tool`; every failure comes back as an error result."""
        tool = self.tool(name)
        if tool is None:
            return _error(self._unavailable(name))
        return await self._runners[tool.server].call(tool, arguments, timeout_s)

    async def offered(self, kind: OfferKind) -> list[ServerItem]:
        """What the running servers offer besides tools (their resources, resource templates or
        prompts, each in MCP's wire shape, as sent), server by server in the agent's order."""
        runners = [self._runners[name] for name in self._order if name in self._runners]
        listed = await asyncio.gather(*(runner.offered(kind) for runner in runners))
        return [
            ServerItem(runner.name, item)
            for runner, items in zip(runners, listed, strict=True)
            for item in items
        ]

    def read_tool(self, server: str, kind: ReadKind) -> ToolInfo | None:
        """A resource read or prompt get of the server as the call the gate judges: the tool
        `SERVER.read_resource` (`uri`) or `SERVER.get_prompt` (`name`, `arguments`), under the
        settings the agent gives that name; None for a server not running."""
        runner = self._runners.get(server)
        if runner is None or runner.status.state != "running":
            return None
        return runner.read_tool(kind)

    async def read(self, tool: ToolInfo, arguments: dict[str, Any]) -> ToolResult:
        """Run a read (`read_tool`) with the arguments it was judged with."""
        if tool.tool == "read_resource":
            return await self.read_resource(tool.server, str(arguments["uri"]))
        prompt_arguments = {
            key: str(value) for key, value in arguments.get("arguments", {}).items()
        }
        return await self.get_prompt(tool.server, str(arguments["name"]), prompt_arguments)

    async def read_resource(self, server: str, uri: str, timeout_s: float = 60.0) -> ToolResult:
        """The server's resource at `uri`: each of its contents an embedded resource block."""

        async def send(session: ClientSession, progress: Progress | None) -> ToolResult:
            return _resource_result(await session.read_resource(uri))

        subject = f"Reading {uri!r} of MCP server {server!r}"
        return await self._request(server, subject, send, timeout_s)

    async def get_prompt(
        self, server: str, name: str, arguments: dict[str, str], timeout_s: float = 60.0
    ) -> ToolResult:
        """The server's prompt `name` filled in: its description and messages (in wire shape)
        are the result's `structured`, their text its `text`."""

        async def send(session: ClientSession, progress: Progress | None) -> ToolResult:
            return _prompt_result(await session.get_prompt(name, arguments))

        subject = f"The prompt {name!r} of MCP server {server!r}"
        return await self._request(server, subject, send, timeout_s)

    async def _request(self, server: str, subject: str, send: Send, timeout_s: float) -> ToolResult:
        runner = self._runners.get(server)
        if runner is None:
            return _error(f"{subject} is unavailable: the agent has no MCP server {server!r}.")
        if runner.status.state != "running":
            state = STATE_WORDS[runner.status.state]
            return _error(f"{subject} is unavailable: MCP server {server!r} {state}.")
        return await runner.request(subject, send, timeout_s)

    async def restart(self, server: str) -> None:
        runner = self._runner(server)
        await runner.stop()
        if self._untrusted is not None and server in await asyncio.to_thread(self._untrusted):
            runner.held = CHANGED_SINCE_TRUSTED  # its script or `.env` changed while it ran
        await runner.start()

    async def stop(self, server: str) -> None:
        await self._runner(server).stop()

    def log_tail(self, server: str) -> str:
        """The end of what the server has written to its error output so far."""
        return self._runner(server).log_tail()

    async def aclose(self) -> None:
        """Stops every server."""
        await asyncio.gather(*(runner.stop() for runner in self._runners.values()))

    def _status(self, name: str) -> ServerStatus:
        if name in self._internal:
            return self._internal[name]
        return self._runners[name].status

    def _runner(self, server: str) -> _ServerRunner:
        if server in self._internal:
            raise ServerNotHostedError(f"MCP server {server!r} is internal: {INTERNAL_SERVER_NOTE}")
        if server not in self._runners:
            known = ", ".join(self._runners) or "none"
            raise ServerNotHostedError(f"no MCP server named {server!r}; servers: {known}")
        return self._runners[server]

    def _unavailable(self, name: str) -> str:
        """Why the tool `name` cannot be called, in words the model can act on."""
        server = _server_of(name, self._order)
        if server is None:
            return f"Unknown tool {name!r}: no MCP server of this agent offers it."
        status = self._status(server)
        if status.state == "running":
            offered = ", ".join(tool.name for tool in status.tools) or "none"
            return f"Unknown tool {name!r}: MCP server {server!r} offers {offered}."
        reason = f" ({status.error})" if status.error else ""
        state = STATE_WORDS[status.state]
        return f"Tool {name!r} is unavailable: MCP server {server!r} {state}{reason}."


@dataclass
class _Run:
    """One run of a server, from its start until it stops or fails."""

    finish: asyncio.Event = field(default_factory=asyncio.Event)
    settled: asyncio.Event = field(default_factory=asyncio.Event)
    stop_requested: bool = False
    session: ClientSession | None = None
    startup: anyio.CancelScope | None = None
    task: asyncio.Task[None] | None = None
    stderr_tail: str = ""
    errlog: TextIO | None = None
    relisting: asyncio.Future[None] | None = None


class _ServerRunner:
    """One MCP server whose connection lives in a task of its own.

    The task enters and leaves the transport and session contexts itself (anyio cancel scopes
    must be entered and exited in the same task); other tasks only ask it to stop.
    """

    def __init__(
        self,
        *,
        name: str,
        config: HostedServer,
        base_dir: Path,
        workspace: Path,
        start_timeout_s: float,
        on_status: StatusListener | None,
        internal: InternalTransport | None = None,
    ) -> None:
        self.name = name
        self._internal_transport = internal
        self.status = ServerStatus(name=name, state="stopped")
        self._config = config
        self._base_dir = base_dir
        self._workspace = workspace
        self._start_timeout_s = start_timeout_s
        self._on_status = on_status
        self._run: _Run | None = None
        self.held: str | None = None  # why it must stay stopped, while it must
        self._listeners: list[CallListener] = []  # those of the requests under way, in order

    async def start(self) -> None:
        """Starts the server and returns once it runs or has failed."""
        if self.held is not None:
            self._publish("stopped", error=self.held)
            return
        if self._run is not None and self._run.task is not None and not self._run.task.done():
            return
        run = self._run = _Run()
        self._publish("starting")
        run.task = asyncio.create_task(self._serve(run), name=f"mcp-server:{self.name}")
        await run.settled.wait()

    async def stop(self) -> None:
        """Closes the connection and ends the server; a failed server keeps its failure."""
        run = self._run
        if run is not None and run.task is not None and not run.task.done():
            run.stop_requested = True
            run.finish.set()
            if run.startup is not None:
                run.startup.cancel()
            await _finish_task(run.task)
        if self.status.state in ("starting", "running"):
            self._publish("stopped")

    def log_tail(self) -> str:
        run = self._run
        if run is None:
            return ""
        if run.errlog is not None and not run.errlog.closed:
            return _read_tail(run.errlog)
        return run.stderr_tail

    async def call(self, tool: ToolInfo, arguments: dict[str, Any], timeout_s: float) -> ToolResult:
        async def send(session: ClientSession, progress: Progress | None) -> ToolResult:
            result = await session.call_tool(
                tool.tool, arguments, read_timeout_seconds=timeout_s, progress_callback=progress
            )
            return _tool_result(result)

        return await self.request(f"The tool {tool.name!r}", send, timeout_s)

    async def request(self, subject: str, send: Send, timeout_s: float) -> ToolResult:
        """`send` a request on the server's session; every failure comes back as an error
        result whose text begins with `subject` (a JSON-RPC error the server answered kept as
        it was sent). The caller's listener (`listening`) hears the server meanwhile."""
        run = self._run
        if run is None or run.session is None:
            return _error(f"{subject} is unavailable: MCP server {self.name!r} is closing.")
        listener = current_listener()
        if listener is not None:
            self._listeners.append(listener)
        try:
            with anyio.fail_after(timeout_s + CALL_GRACE_S):
                return await send(run.session, listener.progress if listener else None)
        except TimeoutError:
            return _error(_timeout_message(subject, timeout_s))
        except MCPError as exc:
            return await self._call_error(run, subject, exc, timeout_s)
        except Exception as exc:
            logger.exception("%s failed", subject)
            return _error(f"{subject} failed: {_plain(exc)}")
        finally:
            if listener is not None:
                self._listeners.remove(listener)

    def read_tool(self, kind: ReadKind) -> ToolInfo:
        settings = resolve_tool_settings(self._config, kind)
        return ToolInfo(
            name=qualified_name(self.name, kind),
            server=self.name,
            tool=kind,
            description=READ_DESCRIPTIONS[kind].format(server=self.name),
            parameters=READ_SCHEMAS[kind],
            include=settings.include,
            permission_required=settings.permission_required,
        )

    async def offered(self, kind: OfferKind) -> list[dict[str, Any]]:
        """Its resources, resource templates or prompts, every page; none when it does not
        say it has any, is not running, or fails to list them (that is logged)."""
        run = self._run
        session = run.session if run is not None else None
        if session is None or not _offers(session, kind):
            return []
        try:
            with anyio.fail_after(HTTP_TIMEOUT_S):
                return await _list_all(session, kind)
        except Exception as exc:
            logger.info("MCP server %s could not list its %s: %r", self.name, kind, exc)
            return []

    async def _call_error(
        self, run: _Run, subject: str, exc: MCPError, timeout_s: float
    ) -> ToolResult:
        if exc.code == mcp_types.REQUEST_TIMEOUT:
            return _error(_timeout_message(subject, timeout_s))
        if exc.code != mcp_types.CONNECTION_CLOSED:
            error = UpstreamError(code=exc.code, message=exc.message, data=exc.data)
            return ToolResult(text=f"{subject} failed: {exc.message}", is_error=True, error=error)
        run.finish.set()  # an HTTP transport does not end its stream when the server goes away
        if run.task is not None:
            await _finish_task(run.task)
        if run.stop_requested:
            return _error(f"{subject} was cut off: its MCP server was stopped.")
        message = f"{subject} failed: {self._lost_during_call()}."
        tail = self.status.stderr_tail
        return _error(f"{message}\nIts last error output:\n{tail}" if tail else message)

    def _lost_during_call(self) -> str:
        if isinstance(self._config, StdioServer):
            return f"MCP server {self.name!r} exited during the call"
        return f"the connection to MCP server {self.name!r} closed during the call"

    async def _serve(self, run: _Run) -> None:
        deadline = anyio.current_time() + self._start_timeout_s
        try:
            with anyio.CancelScope(deadline=deadline) as startup:
                run.startup = startup
                await self._connect_and_wait(run, startup)
            self._publish_end(run, timed_out=startup.cancelled_caught)
        except Exception as exc:
            logger.info("MCP server %s failed: %r", self.name, exc)
            self._publish_end(run, error=_describe_failure(exc, self._config))
        finally:
            run.session = None
            run.startup = None
            if self.status.state in ("starting", "running"):
                self._publish_end(run, error="the connection was abandoned: it did not close")
            run.settled.set()

    async def _connect_and_wait(self, run: _Run, startup: anyio.CancelScope) -> None:
        async with AsyncExitStack() as stack:
            launch = await self._stdio_launch(stack)
            read, write = await stack.enter_async_context(self._transport(run, stack, launch))
            watched = _WatchedStream(read, run.finish.set)
            on_message = self._message_handler(run)
            session = await stack.enter_async_context(
                ClientSession(
                    watched,
                    write,
                    message_handler=on_message,
                    logging_callback=self._heard_log,
                    elicitation_callback=self._heard_question,
                )
            )
            await session.initialize()
            tools = await self._list_tools(session)
            startup.deadline = math.inf
            run.startup = None
            run.session = session
            self._publish("running", tools=tools)
            run.settled.set()
            await run.finish.wait()
            run.session = None

    async def _heard_log(self, params: mcp_types.LoggingMessageNotificationParams) -> None:
        """A log message goes to the callers of the requests under way: over stdio nothing says
        which request it is about. With none under way it is only logged here."""
        hearing = [listener.log for listener in self._listeners if listener.log is not None]
        if not hearing:
            logger.debug("MCP server %s logged %s: %r", self.name, params.level, params.data)
        for log in hearing:
            await log(params)

    async def _heard_question(
        self, context: Any, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult:
        """A question for the user reaches the caller of the one request under way, if it can
        ask; otherwise (no caller, several, or one that cannot ask) it is declined."""
        asking = [listener.elicit for listener in self._listeners]
        if len(asking) != 1 or asking[0] is None:
            return mcp_types.ElicitResult(action="decline")
        return await asking[0](params)

    def _message_handler(self, run: _Run) -> MessageHandlerFnT:
        """A server that says its tool list changed is listed again (off the receiving task)."""

        async def on_message(message: Any) -> None:
            if isinstance(message, mcp_types.ToolListChangedNotification):
                run.relisting = asyncio.ensure_future(self._list_again(run))

        return on_message

    async def _list_again(self, run: _Run) -> None:
        session = run.session
        if session is None:
            return
        try:
            tools = await self._list_tools(session)
        except Exception as exc:  # the run ends on its own if the connection is gone
            logger.info("MCP server %s could not be listed again: %r", self.name, exc)
            return
        if run.session is session:
            self._publish("running", tools=tools)

    def _publish_end(self, run: _Run, *, timed_out: bool = False, error: str | None = None) -> None:
        """Publishes how a run ended: stopped when asked to, failed with a reason otherwise."""
        if run.stop_requested:
            self._publish("stopped")
            return
        if error is None:
            error = self._end_reason(timed_out)
        self._publish("failed", error=error, stderr_tail=run.stderr_tail)

    def _end_reason(self, timed_out: bool) -> str:
        if timed_out:
            return f"the server did not start within {self._start_timeout_s:g} s"
        if isinstance(self._config, StdioServer):
            return "the server exited unexpectedly"
        return "the connection to the server closed"

    async def _stdio_launch(self, stack: AsyncExitStack) -> StdioServerParameters | None:
        """How a stdio server is started, confined (its private folder removed with `stack`):
        worked out on a thread, since finding its program and installation reads files."""
        config = self._config
        if not isinstance(config, StdioServer):
            return None

        def prepare() -> StdioServerParameters:
            parameters = _stdio_parameters(config, self._base_dir)
            confinement = confinement_for(config, self._base_dir, self._workspace)
            return stack.enter_context(confined(parameters, confinement))

        return await anyio.to_thread.run_sync(prepare)

    def _transport(
        self, run: _Run, stack: AsyncExitStack, launch: StdioServerParameters | None
    ) -> AbstractAsyncContextManager[TransportStreams]:
        config = self._config
        if launch is not None:
            errlog = run.errlog = stack.enter_context(_stderr_file())
            stack.callback(_keep_tail, run, errlog)  # runs once the process has ended
            return stdio_client(launch, errlog=errlog)
        if isinstance(config, InternalServer):
            assert self._internal_transport is not None
            return self._internal_transport(self.name, config)
        assert not isinstance(config, StdioServer)
        headers = _resolve_env(config.headers, "headers", self._base_dir)
        if isinstance(config, StreamableHttpServer):
            return _streamable_http(config.url, headers)
        return sse_client(
            config.url,
            headers=headers,
            timeout=HTTP_TIMEOUT_S,
            sse_read_timeout=HTTP_READ_TIMEOUT_S,
        )

    async def _list_tools(self, session: ClientSession) -> tuple[ToolInfo, ...]:
        listed: list[mcp_types.Tool] = []
        cursor: str | None = None
        for _ in range(MAX_TOOL_PAGES):
            params = mcp_types.PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await session.list_tools(params=params)
            listed.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                break
        return tuple(self._tool_info(tool) for tool in listed)

    def _tool_info(self, tool: mcp_types.Tool) -> ToolInfo:
        settings = resolve_tool_settings(self._config, tool.name)
        return ToolInfo(
            name=qualified_name(self.name, tool.name),
            server=self.name,
            tool=tool.name,
            description=tool.description or "",
            parameters=dict(tool.input_schema),
            include=settings.include,
            permission_required=settings.permission_required,
            listed=_wire(tool),
        )

    def _publish(
        self,
        state: ServerState,
        *,
        error: str | None = None,
        tools: tuple[ToolInfo, ...] = (),
        stderr_tail: str = "",
    ) -> None:
        self.status = ServerStatus(
            name=self.name, state=state, error=error, stderr_tail=stderr_tail, tools=tools
        )
        if self._on_status is None:
            return
        try:
            self._on_status(self.status)
        except Exception:
            logger.exception("A status listener failed for MCP server %s", self.name)


def _stderr_file() -> TextIO:
    """An unnamed temporary file for a server's error output; the system removes it."""
    return tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")


def _keep_tail(run: _Run, errlog: TextIO) -> None:
    """Keeps the end of what the server wrote to its error output."""
    run.stderr_tail = _read_tail(errlog)


def _read_tail(errlog: TextIO) -> str:
    """The last bytes of the file; pread leaves the offset the server process shares alone."""
    descriptor = errlog.fileno()
    size = os.fstat(descriptor).st_size
    tail = os.pread(descriptor, STDERR_TAIL_BYTES, max(0, size - STDERR_TAIL_BYTES))
    return tail.decode("utf-8", errors="replace").strip()


async def _finish_task(task: asyncio.Task[None]) -> None:
    """Waits for a runner task to wind down; cancels it if it does not in time."""
    await asyncio.wait({task}, timeout=STOP_TIMEOUT_S)
    if not task.done():
        logger.warning("MCP server task %s did not stop in time; cancelling it", task.get_name())
        task.cancel()
        await asyncio.wait({task}, timeout=STOP_TIMEOUT_S)


class _WatchedStream:
    """The transport's messages as the session reads them, calling `on_close` when the server
    ends the stream. The session notices a closed connection only when a request is waiting;
    this lets the runner notice an idle server that died too. It reads in the session's own
    receive loop: a relaying task would cost every message a hop between tasks."""

    def __init__(self, source: Any, on_close: Callable[[], None]) -> None:
        self._source = source
        self._on_close = on_close

    @property
    def last_context(self) -> Any:
        """The sender's context, which the SDK's dispatcher runs a request's handler in."""
        return getattr(self._source, "last_context", None)

    async def receive(self) -> Incoming:
        try:
            item: Incoming = await self._source.receive()
        except anyio.EndOfStream:
            self._on_close()
            raise
        return item

    async def aclose(self) -> None:
        await self._source.aclose()

    def __aiter__(self) -> _WatchedStream:
        return self

    async def __anext__(self) -> Incoming:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> _WatchedStream:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


@asynccontextmanager
async def _streamable_http(url: str, headers: dict[str, str]) -> AsyncIterator[TransportStreams]:
    timeout = httpx2.Timeout(HTTP_TIMEOUT_S, read=HTTP_READ_TIMEOUT_S)
    async with (
        httpx2.AsyncClient(headers=headers, timeout=timeout) as client,
        streamable_http_client(url, http_client=client) as streams,
    ):
        yield streams


def _stdio_parameters(config: StdioServer, base_dir: Path) -> StdioServerParameters:
    """The process to run: `python` is this interpreter, paths are relative to the agent."""
    command = sys.executable if config.command in PYTHON_COMMANDS else config.command
    cwd = base_dir / config.cwd if config.cwd else base_dir
    if not cwd.is_dir():
        raise ServerStartError(f"the working folder {str(cwd)!r} does not exist")
    env = _server_environment(config, command, base_dir)
    return StdioServerParameters(command=command, args=config.args, env=env, cwd=cwd)


def _server_environment(config: StdioServer, command: str, base_dir: Path) -> dict[str, str]:
    """Only the SDK's safe variables, the library path and the server's own `env`: never
    Foundry's token, database URL or provider keys unless that `env` names them."""
    env = get_default_environment()
    env.update(_library_path(command))
    env.update(_resolve_env(config.env, "env", base_dir))
    return env


def _library_path(command: str) -> dict[str, str]:
    """The library path a server gets: the user's; a packaged Foundry's own for itself."""
    if not getattr(sys, "frozen", False):
        return _inherited("LD_LIBRARY_PATH")
    env = _inherited("LD_LIBRARY_PATH", "LD_LIBRARY_PATH_ORIG")
    if command != sys.executable:
        _unfreeze_library_path(env)
    return env


def _inherited(*names: str) -> dict[str, str]:
    return {name: os.environ[name] for name in names if name in os.environ}


def _unfreeze_library_path(env: dict[str, str]) -> None:
    """A packaged Foundry points LD_LIBRARY_PATH at its own libraries; other programs it starts
    (npx, uvx, ...) must get the library path the user had."""
    original = env.pop("LD_LIBRARY_PATH_ORIG", None)
    if original is None:
        env.pop("LD_LIBRARY_PATH", None)
    else:
        env["LD_LIBRARY_PATH"] = original


def _resolve_env(values: dict[str, str], field: str, base_dir: Path) -> dict[str, str]:
    """The values with each `env://NAME` resolved as providers resolve it (see agent.secrets)."""
    return {key: _resolve_value(value, f"{field}.{key}", base_dir) for key, value in values.items()}


def _resolve_value(value: str, where: str, base_dir: Path) -> str:
    try:
        return resolve_secret(value, base_dir)
    except SecretNotSetError as exc:
        raise ServerStartError(
            f"{where} asks for the environment variable {exc.variable}, which is not set: "
            f"export it or add it to {DOTENV_NAME} beside the agent"
        ) from exc
    except SecretError as exc:
        raise ServerStartError(f"{where}: {exc}") from exc


def _describe_failure(exc: BaseException, config: HostedServer) -> str:
    """A start failure in plain words."""
    leaf = _leaf(exc)
    if isinstance(leaf, ServerStartError):
        return str(leaf)
    if isinstance(leaf, FileNotFoundError) and isinstance(config, StdioServer):
        return f"the command {config.command!r} was not found; is it installed and on PATH?"
    if isinstance(leaf, PermissionError) and isinstance(config, StdioServer):
        return f"the command {config.command!r} could not be run: permission denied"
    if isinstance(leaf, MCPError) and leaf.code == mcp_types.CONNECTION_CLOSED:
        return "the server exited before it finished starting"
    if isinstance(leaf, httpx2.HTTPStatusError):
        return f"{leaf.request.url} answered HTTP {leaf.response.status_code}"
    if isinstance(leaf, httpx2.TransportError) and isinstance(
        config, SseServer | StreamableHttpServer
    ):
        return f"could not reach {config.url}: {_plain(leaf)}"
    return _plain(leaf)


def _leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _plain(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _server_of(tool_name: str, servers: list[str]) -> str | None:
    """The server a qualified tool name points at; the longest matching server name wins."""
    matches = [server for server in servers if tool_name.startswith(f"{server}.")]
    return max(matches, key=len, default=None)


def _timeout_message(subject: str, timeout_s: float) -> str:
    return f"{subject} timed out: no answer within {timeout_s:g} s."


def _error(text: str) -> ToolResult:
    return ToolResult(text=text, is_error=True)


def _tool_result(result: mcp_types.CallToolResult) -> ToolResult:
    text = "\n".join(_content_text(block) for block in result.content)
    structured = result.structured_content
    return ToolResult(
        text=text,
        is_error=result.is_error,
        structured=structured if isinstance(structured, dict) else None,
        content=tuple(_wire(block) for block in result.content),
        meta=result.meta,
    )


def _offers(session: ClientSession, kind: OfferKind) -> bool:
    capabilities = session.server_capabilities
    if capabilities is None:
        return False
    return (capabilities.prompts if kind == "prompts" else capabilities.resources) is not None


async def _list_all(session: ClientSession, kind: OfferKind) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    cursor: str | None = None
    for _ in range(MAX_TOOL_PAGES):
        params = mcp_types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page: mcp_types.PaginatedResult
        if kind == "resources":
            page = await session.list_resources(params=params)
        elif kind == "resourceTemplates":
            page = await session.list_resource_templates(params=params)
        else:
            page = await session.list_prompts(params=params)
        items.extend(_wire(page)[kind])
        cursor = page.next_cursor
        if cursor is None:
            break
    return items


def _wire(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def _resource_result(result: mcp_types.ReadResourceResult) -> ToolResult:
    blocks = tuple(
        mcp_types.EmbeddedResource(type="resource", resource=contents)
        for contents in result.contents
    )
    return ToolResult(
        text="\n".join(_content_text(block) for block in blocks),
        is_error=False,
        content=tuple(_wire(block) for block in blocks),
        meta=result.meta,
    )


def _prompt_result(result: mcp_types.GetPromptResult) -> ToolResult:
    wire = _wire(result)
    prompt = {key: wire[key] for key in ("description", "messages") if key in wire}
    return ToolResult(
        text="\n".join(_content_text(message.content) for message in result.messages),
        is_error=False,
        structured=prompt,
        meta=result.meta,
    )


_CONTENT_BLOCK: TypeAdapter[mcp_types.ContentBlock] = TypeAdapter(mcp_types.ContentBlock)


def content_text(blocks: Iterable[dict[str, Any]]) -> str:
    """The text of content blocks in wire shape, as a result's `text` has it."""
    return "\n".join(_content_text(_CONTENT_BLOCK.validate_python(block)) for block in blocks)


def _content_text(block: mcp_types.ContentBlock) -> str:
    if isinstance(block, mcp_types.TextContent):
        return block.text
    if isinstance(block, mcp_types.EmbeddedResource):
        resource = block.resource
        if isinstance(resource, mcp_types.TextResourceContents):
            return resource.text
        return f"[resource {resource.uri}]"
    if isinstance(block, mcp_types.ResourceLink):
        return f"[link {block.uri}]"
    return f"[{block.type} {getattr(block, 'mime_type', '')}]".replace(" ]", "]")
