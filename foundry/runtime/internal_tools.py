"""tsagent's internal tool servers (`type: internal`), each a real MCP server run in process.

An agent written for tsagent names them in `mcpServers` (`type: internal`, `tool: rules`,
`references`, `tools` or `supervision`); the tool host reaches each one over in-memory streams
(`InternalServers`), so their calls pass the same gate, policy, concerns, tracing and result
screening as any server's. They act on the session whose host started them and on its agent:
a rule or reference the agent writes is saved to the agent's files with the document's atomic
save and recorded in the session (`context_item_saved`, with what it replaced), where a person
sees it in the chat and can undo it (`undo_save`: Undo in the chat's bar); including or
excluding one changes the session's context only (`context_changed`). Without a chat (the
gateway's sessions) the tools that need one answer as tsagent's do: no chat session.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

import anyio
from mcp import types as mcp_types
from mcp.server.lowlevel import Server
from mcp.shared.memory import create_client_server_memory_streams

from foundry.agent.document import AgentDocument, load_agent, save_agent, to_document
from foundry.agent.models import (
    Agent,
    ContextItem,
    IncludeMode,
    InternalServer,
    ServerToolDefaults,
    ToolOverride,
)
from foundry.agent.problems import AgentError
from foundry.runtime.internal_answers import (
    Answer,
    Handler,
    SavedKind,
    ToolError,
    compact,
    item_handlers,
)
from foundry.runtime.internal_catalog import INTERNAL_KINDS, SERVER_NAMES, InternalKind, tools_of
from foundry.runtime.internal_tool_answers import TOOL_HANDLERS
from foundry.session.chat import item_model, item_value, replacing
from foundry.session.context import ItemKind
from foundry.session.events import BY_THE_AGENT, AgentSave, ContextItemSaved, ToolSettingSaved
from foundry.tools.catalog import ToolInfo
from foundry.tools.host import ServerStartError

if TYPE_CHECKING:
    from foundry.session.chat import ChatSession

logger = logging.getLogger(__name__)

BY_A_PERSON = "user"  # who undid the agent's save
NO_SUPERVISED_SESSION = (
    "No supervised session set. Call setSupervisedSession() first. (Foundry gives an agent "
    "supervisor its supervised_* tools itself; this chat supervises no session.)"
)


class LiveSession(Protocol):
    """An open chat as the engine holds it: the chat, and the agent document it runs."""

    chat: ChatSession
    document: AgentDocument


@dataclass
class InternalPlace:
    """What the internal servers of one session act on: its chat once it is open (`live`), the
    agent's file, and the tools its host offers (`tools`, set once the host exists)."""

    document: AgentDocument
    live: Callable[[], LiveSession | None]
    tools_of_host: Callable[[], Sequence[ToolInfo]] = lambda: ()
    _writing: asyncio.Lock = field(default_factory=asyncio.Lock)

    def _chat(self) -> ChatSession | None:
        live = self.live()
        return None if live is None else live.chat

    def agent(self) -> Agent:
        chat = self._chat()
        if chat is not None:
            return chat.agent
        assert self.document.agent is not None
        return self.document.agent

    def has_session(self) -> bool:
        return self._chat() is not None

    def in_context(self, item: ItemKind, name: str, include: IncludeMode) -> bool:
        chat = self._chat()
        if chat is None:
            return False
        key = (item, name)
        if key in chat.context.excluded:
            return False
        return key in chat.context.included or include == IncludeMode.ALWAYS

    async def set_included(self, item: ItemKind, name: str, included: bool) -> None:
        chat = self._chat()
        if chat is None:
            raise ToolError("Chat session not found")
        await chat.set_included(item, name, included, by=BY_THE_AGENT)

    def tools(self) -> Sequence[ToolInfo]:
        return self.tools_of_host()

    async def save_item(self, kind: SavedKind, name: str, value: ContextItem | None) -> None:
        """Saved to the agent's files first (a file that does not load is left alone and the
        call fails), then to the session, whose copy of the agent the next request reads."""
        before, saved = await self._write(partial(_with_item, kind=kind, name=name, value=value))
        adopt(self.live(), saved, _part(kind))
        chat = self._chat()
        if chat is not None:
            replaced = _item_of(before.agent, kind, name)
            await chat.save_item(kind, name, value, by=BY_THE_AGENT, replaced=replacing(replaced))

    async def set_include_mode(self, server: str, tool: str | None, mode: str) -> None:
        before, saved = await self._write(partial(_with_mode, server=server, tool=tool, mode=mode))
        adopt(self.live(), saved, "mcp_servers")
        chat = self._chat()
        if chat is not None:
            body = ToolSettingSaved(
                server=server,
                tool=tool,
                value=_setting_value(saved.agent, server, tool),
                before=_setting_value(before.agent, server, tool),
                by=BY_THE_AGENT,
            )
            await chat.record(body)

    async def _write(self, change: Callable[[Agent], Agent]) -> tuple[AgentDocument, AgentDocument]:
        async with self._writing:
            try:
                return await asyncio.to_thread(_save_changed, self.document.path, change)
            except AgentError as error:
                raise ToolError(f"the agent's file was not changed: {error}") from None
            except OSError as error:
                raise ToolError(f"the agent's file could not be written: {error}") from None


def adopt(live: LiveSession | None, saved: AgentDocument, part: str) -> None:
    """The open chat's document takes the saved part, so that the save is not reported to it
    as a change waiting for a restart (it has it already); other chats of the agent are told
    by the engine as of any save."""
    if live is None or live.document.agent is None or saved.agent is None:
        return
    agent = live.document.agent.model_copy(update={part: getattr(saved.agent, part)})
    live.document = replace(live.document, agent=agent)


def _save_changed(
    path: Path, change: Callable[[Agent], Agent]
) -> tuple[AgentDocument, AgentDocument]:
    """Read the agent's file as it is now, change it and save it atomically (blocking): the
    agent as it was read, and as saved."""
    document = load_agent(path)
    assert document.agent is not None
    return document, save_agent(replace(document, agent=change(document.agent)))


def _part(kind: SavedKind) -> str:
    return "rules" if kind == "rule" else "references"


def _item_of(agent: Agent | None, kind: SavedKind, name: str) -> ContextItem | None:
    items: list[ContextItem] = [] if agent is None else getattr(agent, _part(kind))
    return next((item for item in items if item.name == name), None)


def _with_item(agent: Agent, kind: SavedKind, name: str, value: ContextItem | None) -> Agent:
    """The agent with the item in its place (last when new), or without it."""
    part = _part(kind)
    items = list(getattr(agent, part))
    where = next((n for n, item in enumerate(items) if item.name == name), len(items))
    items[where : where + 1] = [] if value is None else [value]
    return agent.model_copy(update={part: items})


def _with_mode(agent: Agent, server: str, tool: str | None, mode: str) -> Agent:
    """The agent with the include mode of one tool of `server`, or of its tools by default."""
    config = agent.mcp_servers[server]
    current: ToolOverride | ServerToolDefaults
    if tool is None:
        current = config.server_tool_defaults or ServerToolDefaults()
    else:
        current = config.tools.get(tool) or ToolOverride()
    changed = current.model_copy(update={"include": IncludeMode(mode)})
    return _with_setting(agent, server, tool, changed)


def _with_setting(
    agent: Agent, server: str, tool: str | None, setting: ToolOverride | ServerToolDefaults | None
) -> Agent:
    """The agent with one tool's setting of `server` (or its tools' defaults) as given; None
    takes it out."""
    config = agent.mcp_servers[server]
    value: object
    if tool is None:
        field_name, value = "server_tool_defaults", setting
    else:
        tools = dict(config.tools)  # an override set again keeps its place
        if setting is None:
            tools.pop(tool, None)
        else:
            tools[tool] = cast(ToolOverride, setting)
        field_name, value = "tools", tools
    config = config.model_copy(update={field_name: value})
    if not value:  # not written at all, as before the agent set it
        config.__pydantic_fields_set__.discard(field_name)
    return agent.model_copy(update={"mcp_servers": {**agent.mcp_servers, server: config}})


def _setting_value(agent: Agent | None, server: str, tool: str | None) -> dict[str, Any] | None:
    """One tool's setting of `server` (or its tools' defaults) as an event keeps it."""
    config = None if agent is None else agent.mcp_servers.get(server)
    if config is None:
        return None
    setting = config.server_tool_defaults if tool is None else config.tools.get(tool)
    return None if setting is None else to_document(setting)


# -- undo ---------------------------------------------------------------------------------------

CHANGED_AGAIN = "was changed again after the agent saved it, so it is left as it is; change it in "
CHANGED_AGAIN += "the agent's editor."


class UndoRefused(Exception):
    """A save that cannot be taken back; the message says why, in a sentence for the user."""


async def undo_save(live: LiveSession, saved: AgentSave, seq: int) -> None:
    """Take back what the agent saved in event `seq`: the agent's files get the rule, reference
    or tool setting as it was (a new one goes), then the session, as the save reached both.
    Refused, the files untouched, if it was changed again since (by anyone)."""
    if not saved.undoable:
        raise UndoRefused("Only a change the agent saved to its files can be undone here.")
    if isinstance(saved, ContextItemSaved):
        await _undo_item(live, saved, seq)
    else:
        await _undo_setting(live, saved, seq)


async def _undo_item(live: LiveSession, saved: ContextItemSaved, seq: int) -> None:
    assert saved.before is not None
    was = saved.before.value
    restored = None if was is None else item_model(saved.item).model_validate(was)

    def change(agent: Agent) -> Agent:
        if item_value(_item_of(agent, saved.item, saved.name)) != saved.value:
            raise UndoRefused(f"The {saved.item} {saved.name!r} {CHANGED_AGAIN}")
        return _with_item(agent, saved.item, saved.name, restored)

    before = await _rewrite(live, change, _part(saved.item))
    replaced = _item_of(before.agent, saved.item, saved.name)
    await live.chat.save_item(
        saved.item, saved.name, restored, by=BY_A_PERSON, replaced=replacing(replaced), undoes=seq
    )


async def _undo_setting(live: LiveSession, saved: ToolSettingSaved, seq: int) -> None:
    model = ToolOverride if saved.tool else ServerToolDefaults
    restored = None if saved.before is None else model.model_validate(saved.before)

    def change(agent: Agent) -> Agent:
        if _setting_value(agent, saved.server, saved.tool) != saved.value:
            raise UndoRefused(
                f"The include mode of {saved.server}.{saved.tool or '*'} {CHANGED_AGAIN}"
            )
        return _with_setting(agent, saved.server, saved.tool, restored)

    await _rewrite(live, change, "mcp_servers")
    undone = ToolSettingSaved(
        server=saved.server,
        tool=saved.tool,
        value=saved.before,
        before=saved.value,
        by=BY_A_PERSON,
        undoes=seq,
    )
    await live.chat.record(undone)


async def _rewrite(live: LiveSession, change: Callable[[Agent], Agent], part: str) -> AgentDocument:
    """Change the agent's files as `change` says and give the open chat the changed `part`;
    the agent as it was before."""
    try:
        before, document = await asyncio.to_thread(_save_changed, live.document.path, change)
    except (AgentError, OSError) as error:
        raise UndoRefused(f"The agent's file was not changed: {error}") from None
    adopt(live, document, part)
    return before


# -- the servers --------------------------------------------------------------------------------


def handlers_of(kind: InternalKind) -> dict[str, Handler]:
    if kind == "rules":
        return item_handlers("rule")
    if kind == "references":
        return item_handlers("reference")
    if kind == "tools":
        return TOOL_HANDLERS
    return {}


async def answer(kind: InternalKind, place: Any, name: str, arguments: dict[str, Any]) -> Answer:
    """What the tool `name` of the server of `kind` answers; an error is an answer too."""
    if kind == "supervision":
        return Answer(f"Error: {NO_SUPERVISED_SESSION}", is_error=True)
    handler = handlers_of(kind).get(name)
    if handler is None:
        return Answer(f"Error: Unknown tool: {name}", is_error=True)
    try:
        result = await handler(place, arguments)
    except ToolError as error:
        return Answer(f"Error: {error}", is_error=True)
    return Answer(result if isinstance(result, str) else compact(result))


def internal_server(kind: InternalKind, place: Any) -> Server[Any]:
    """The MCP server of one internal `kind`, acting on `place` (an InternalPlace)."""
    listed = mcp_types.ListToolsResult(tools=list(tools_of(kind)))

    async def list_tools(ctx: Any, params: Any) -> mcp_types.ListToolsResult:
        return listed

    async def call_tool(
        ctx: Any, params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult:
        given = await answer(kind, place, params.name, dict(params.arguments or {}))
        content = [mcp_types.TextContent(text=given.text)]
        return mcp_types.CallToolResult(content=content, is_error=given.is_error)

    return Server(
        SERVER_NAMES[kind], version="1.0.0", on_list_tools=list_tools, on_call_tool=call_tool
    )


@asynccontextmanager
async def served_in_process(server: Server[Any]) -> AsyncIterator[tuple[Any, Any]]:
    """A client's (read, write) streams to `server`, which runs until the block ends."""
    streams = create_client_server_memory_streams()
    async with streams as (client, served), anyio.create_task_group() as group:
        options = server.create_initialization_options()
        group.start_soon(partial(server.run, served[0], served[1], options))
        try:
            yield client
        finally:
            group.cancel_scope.cancel()


class InternalServers:
    """How a session's tool host reaches its internal servers (ToolHost's `internal`)."""

    def __init__(self, document: AgentDocument, live: Callable[[], LiveSession | None]) -> None:
        self.place = InternalPlace(document, live)

    def offering(self, tools: Callable[[], Sequence[ToolInfo]]) -> None:
        """The session's tools, as the `tools` server lists them (its host's)."""
        self.place.tools_of_host = tools

    def __call__(self, name: str, config: InternalServer) -> Any:
        if config.tool not in INTERNAL_KINDS:
            known = ", ".join(INTERNAL_KINDS)
            raise ServerStartError(
                f"MCP server {name!r} asks for the internal server {config.tool!r}, which "
                f"Foundry does not have; tool: takes one of {known}"
            )
        kind = cast(InternalKind, config.tool)
        return served_in_process(internal_server(kind, self.place))
