"""The `supervised_*` tools a supervisor agent uses on the session it supervises, as permitted."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import ValidationError

from foundry.agent.models import (
    AgentSupervisorConfig,
    ContextItem,
    Reference,
    Rule,
    SupervisionPermission,
)
from foundry.agent.problems import problems_from_validation
from foundry.llm.base import ChatMessage, ToolSpec
from foundry.session.context import MENTION, ItemKind, select_context
from foundry.session.events import ContextEntry
from foundry.session.supervisors import Action, Direction, Reach

if TYPE_CHECKING:
    from foundry.session.chat import ChatSession, ToolDescription

# read: everyone; decision: allowing, everyone; verdict: blocking or holding for a person;
# context and message: changes, which count against maxModifications.
Need = Literal["read", "context", "message", "decision", "verdict"]
SavedKind = Literal["rule", "reference"]
Run = Callable[["SupervisedTools", dict[str, Any]], Awaitable[str]]

NEEDED: dict[Need, SupervisionPermission] = {
    "context": SupervisionPermission.MODIFY_CONTEXT,
    "message": SupervisionPermission.MODIFY_MESSAGES,
    "verdict": SupervisionPermission.MODIFY_MESSAGES,
}
MODIFYING: tuple[Need, ...] = ("context", "message")
ITEM_FIELDS = ("text", "description", "priority_level", "enabled", "include")
HISTORY_LIMIT = 20
# How long a message waits for an agent supervisor by default, by what it can do to it: a
# rewrite or a block is worth a wait; a request's context is worth a short one (after that it
# keeps the lexical selection); nothing waits for an observer.
DEFAULT_BUDGETS_S: dict[Reach, float] = {"message": 30.0, "context": 0.5, "observe": 0.0}


def reach_of(config: AgentSupervisorConfig) -> Reach:
    """What an agent supervisor can do to the message it reviews, from its allowedActions: block
    or rewrite it (MODIFY_MESSAGES, FULL_CONTROL, or a fallback that blocks), change the context
    of later requests (MODIFY_CONTEXT), or only read."""
    permissions = config.permissions
    changes_messages = {SupervisionPermission.MODIFY_MESSAGES, SupervisionPermission.FULL_CONTROL}
    if permissions & changes_messages or config.fallback_behavior == "block":
        return "message"
    if SupervisionPermission.MODIFY_CONTEXT in permissions:
        return "context"
    return "observe"


def budget_of(config: AgentSupervisorConfig, in_process: bool = False) -> float:
    """Its own time budget (timeoutSeconds), or the default for what it can do. A context
    supervisor whose model runs in-process (the embedded one) is never waited for by default:
    its model is far slower than a request's budget and shares the CPU with the agent's own
    model, which stopping it at the budget would not give back at once."""
    if config.timeout_seconds is not None:
        return float(config.timeout_seconds)
    reach = reach_of(config)
    return 0.0 if reach == "context" and in_process else DEFAULT_BUDGETS_S[reach]


@dataclass(frozen=True)
class Decision:
    """What the supervisor decided about the message; `content` is the new text for modify."""

    action: Action
    reason: str
    content: str | None = None


@dataclass(frozen=True)
class SupervisedTool:
    """One tool: what it offers the model, the permission it needs and what it does."""

    spec: ToolSpec
    need: Need
    purpose: str  # in plain words, for refusals: "include a rule"
    run: Run


class BadArguments(Exception):
    """The model called a tool with arguments it cannot use; the message says what is wrong."""


class SupervisedTools:
    """The tools of one review, bound to one supervised session and one message.

    Each call checks the supervisor's permissions and its maxModifications itself; the changes it
    makes and the first decision are kept in `changes` and `decision`.
    """

    def __init__(
        self,
        session: ChatSession,
        permissions: set[SupervisionPermission],
        max_modifications: int,
        direction: Direction,
        message: ChatMessage,
        supervisor_id: str = "supervisor",
    ) -> None:
        self._session = session
        self._permissions = set(permissions)
        self._max_modifications = max_modifications
        self._direction = direction
        self._message = message
        self._by = f"supervisor:{supervisor_id}"
        self.modifications = 0
        self.changes: list[str] = []
        self.decision: Decision | None = None

    def permits(self, tool: SupervisedTool) -> bool:
        """Every supervisor may read and allow; changes, blocks and human reviews need their
        permission or FULL_CONTROL (a block or a review holds the message, which only a
        supervisor that may change messages does)."""
        if tool.need in ("read", "decision"):
            return True
        return bool({NEEDED[tool.need], SupervisionPermission.FULL_CONTROL} & self._permissions)

    def specs(self) -> tuple[ToolSpec, ...]:
        """The tools this supervisor's permissions allow, and only those."""
        return tuple(tool.spec for tool in TOOLS.values() if self.permits(tool))

    async def call(self, name: str, arguments: dict[str, Any]) -> str:
        """Run one tool; every problem comes back as text for the model, never as an error."""
        tool = TOOLS.get(name)
        if tool is None:
            known = ", ".join(spec.name for spec in self.specs())
            return f"unknown tool {name!r}; the tools you can use are: {known}"
        if not self.permits(tool):
            return f"not permitted: {NEEDED[tool.need].value} is needed to {tool.purpose}"
        if tool.need in MODIFYING and self.modifications >= self._max_modifications:
            return f"refused: maxModifications ({self._max_modifications}) reached"
        try:
            return await tool.run(self, arguments)
        except BadArguments as error:
            return f"{name}: {error}"
        except ValidationError as error:
            problems = problems_from_validation(error, Path("."))
            return f"{name}: " + "; ".join(f"{p.field}: {p.message}" for p in problems)

    # -- reading --------------------------------------------------------------------------------

    async def conversation_history(self, arguments: dict[str, Any]) -> str:
        limit = _number(arguments, "limit", HISTORY_LIMIT)
        messages = self._session.messages[-limit:] if limit > 0 else []
        return _json([_message_view(message) for message in messages])

    async def session_state(self, arguments: dict[str, Any]) -> str:
        context = self._session.context
        return _json(
            {
                "session": self._session.id,
                "agent": self._session.agent.metadata.name,
                "model": str(self._session.model),
                "reviewing": {"direction": self._direction, "content": self._message.content},
                "included": sorted(f"{kind}:{name}" for kind, name in context.included),
                "excluded": sorted(f"{kind}:{name}" for kind, name in context.excluded),
                "in_context": [entry.model_dump(exclude_none=True) for entry in self._selected()],
            }
        )

    async def current_items(self, arguments: dict[str, Any], kind: ItemKind) -> str:
        """The items of a kind the next model request will have in context, and why."""
        chosen = [entry for entry in self._selected() if entry.item == kind]
        return _json([{"name": entry.name, "reason": entry.reason} for entry in chosen])

    async def available_tools(self, arguments: dict[str, Any]) -> str:
        tools = self._tools()
        return _json([{"name": tool.name, "description": tool.description} for tool in tools])

    async def session_stats(self, arguments: dict[str, Any]) -> str:
        messages = self._session.messages
        return _json(
            {
                "messages": len(messages),
                "by_role": dict(Counter(message.role for message in messages)),
                "tool_calls": sum(len(message.tool_calls) for message in messages),
                "rules": len(self._session.agent.rules),
                "references": len(self._session.agent.references),
                "tools": len(self._tools()),
                "context_changes": len(self._session.context.included)
                + len(self._session.context.excluded),
            }
        )

    async def list_items(self, arguments: dict[str, Any], kind: SavedKind) -> str:
        in_context = {entry.name for entry in self._selected() if entry.item == kind}
        return _json([_item_view(item, item.name in in_context) for item in self._items(kind)])

    async def get_item(self, arguments: dict[str, Any], kind: SavedKind) -> str:
        name = _text(arguments, "name")
        item = self._find(kind, name)
        if item is None:
            return _no_such(kind, name)
        in_context = any(e.item == kind and e.name == name for e in self._selected())
        return _json({**_item_view(item, in_context), "text": item.text})

    async def list_tools(self, arguments: dict[str, Any]) -> str:
        in_context = {entry.name for entry in self._selected() if entry.item == "tool"}
        return _json([_tool_view(tool, tool.name in in_context) for tool in self._tools()])

    async def list_tool_servers(self, arguments: dict[str, Any]) -> str:
        offered = Counter(tool.name.partition(".")[0] for tool in self._tools())
        servers = self._session.agent.mcp_servers
        return _json(
            [
                {"name": name, "type": config.type, "tools": offered.get(name, 0)}
                for name, config in servers.items()
            ]
        )

    # -- changing the context -------------------------------------------------------------------

    async def set_included(self, arguments: dict[str, Any], kind: ItemKind, included: bool) -> str:
        name = _text(arguments, "name")
        problem = self._cannot_include(kind, name) if included else self._unknown(kind, name)
        if problem:
            return problem
        verb = "included" if included else "excluded"
        context = self._session.context
        if (kind, name) in (context.included if included else context.excluded):
            return f"{kind} {name} is already {verb}; nothing changed"
        await self._session.set_included(kind, name, included, by=self._by)
        return self._changed(f"{verb} {kind} {name}")

    async def create_item(self, arguments: dict[str, Any], kind: SavedKind) -> str:
        name = _text(arguments, "name")
        if self._find(kind, name) is not None:
            return f"a {kind} named {name!r} already exists; use supervised_update_{kind} instead"
        fields = _item_fields(arguments)
        if "text" not in fields:
            raise BadArguments(f"a new {kind} needs its text")
        item = _model(kind).model_validate({"name": name, **fields})
        await self._session.save_item(kind, name, item, by=self._by)
        return self._changed(f"created {kind} {name}")

    async def update_item(self, arguments: dict[str, Any], kind: SavedKind) -> str:
        name = _text(arguments, "name")
        current = self._find(kind, name)
        if current is None:
            return _no_such(kind, name)
        fields = _item_fields(arguments)
        if not fields:
            raise BadArguments(
                "nothing to update: give text, description, priority_level, enabled or include"
            )
        item = _model(kind).model_validate({**current.model_dump(), **fields})
        await self._session.save_item(kind, name, item, by=self._by)
        return self._changed(f"updated {kind} {name}")

    async def delete_item(self, arguments: dict[str, Any], kind: SavedKind) -> str:
        name = _text(arguments, "name")
        if self._find(kind, name) is None:
            return _no_such(kind, name)
        await self._session.save_item(kind, name, None, by=self._by)
        return self._changed(f"deleted {kind} {name}")

    # -- deciding -------------------------------------------------------------------------------

    async def decide(self, arguments: dict[str, Any], action: Action) -> str:
        """Record the decision; the first one wins and later ones are ignored."""
        reason = _text(arguments, "reason", required=False) or "no reason given"
        content = _text(arguments, "content") if action == "modify" else None
        priority = _text(arguments, "priority", required=False)
        if priority and action == "human_review":
            reason = f"{reason} (priority: {priority})"
        if self.decision is not None:
            first = self.decision
            return f"ignored: the decision was already made ({first.action}: {first.reason})"
        self.decision = Decision(action, reason, content)
        if action == "modify":
            self.modifications += 1
        return f"decision recorded: {action} ({reason})"

    # -- the session ----------------------------------------------------------------------------

    def _changed(self, change: str) -> str:
        self.modifications += 1
        self.changes.append(change)
        return change

    def _query(self) -> str:
        """The request the next model call answers: what context relevance is judged on."""
        if self._direction == "request":
            text = self._message.content
        else:
            users = (m.content for m in reversed(self._session.messages) if m.role == "user")
            text = next(users, "")
        return MENTION.sub(" ", text)

    def _selected(self) -> list[ContextEntry]:
        session = self._session
        return select_context(
            session.candidates(), session.context, self._query(), session.settings
        )

    def _tools(self) -> list[ToolDescription]:
        return list(self._session._available_tools())

    def _items(self, kind: SavedKind) -> list[ContextItem]:
        agent = self._session.agent
        return list(agent.rules if kind == "rule" else agent.references)

    def _find(self, kind: SavedKind, name: str) -> ContextItem | None:
        return next((item for item in self._items(kind) if item.name == name), None)

    def _unknown(self, kind: ItemKind, name: str) -> str | None:
        if kind == "tool":
            known = any(tool.name == name for tool in self._tools())
            return None if known else f"no tool named {name!r}; supervised_list_tools lists them"
        return None if self._find(kind, name) is not None else _no_such(kind, name)

    def _cannot_include(self, kind: ItemKind, name: str) -> str | None:
        problem = self._unknown(kind, name)
        if problem or kind == "tool":
            return problem
        item = self._find(kind, name)
        if item is not None and not item.enabled:
            return f"the {kind} {name!r} is disabled; enable it with supervised_update_{kind} first"
        return None


def _text(arguments: dict[str, Any], key: str, required: bool = True) -> str:
    value = arguments.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise BadArguments(f"`{key}` must be given as text")
    return value.strip() if key == "name" else value


def _number(arguments: dict[str, Any], key: str, default: int) -> int:
    value = arguments.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadArguments(f"`{key}` must be a whole number")
    return value


def _item_fields(arguments: dict[str, Any]) -> dict[str, Any]:
    return {key: arguments[key] for key in ITEM_FIELDS if arguments.get(key) is not None}


def _model(kind: SavedKind) -> type[ContextItem]:
    return Rule if kind == "rule" else Reference


def _no_such(kind: ItemKind, name: str) -> str:
    listing = "supervised_list_references" if kind == "reference" else f"supervised_list_{kind}s"
    return f"no {kind} named {name!r}; {listing} lists them"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _message_view(message: ChatMessage) -> dict[str, Any]:
    view: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        view["tool_calls"] = [
            {"name": call.name, "arguments": call.arguments} for call in message.tool_calls
        ]
    if message.role == "tool" and message.name:
        view["tool"] = message.name
    return view


def _item_view(item: ContextItem, in_context: bool) -> dict[str, Any]:
    return {
        "name": item.name,
        "description": item.description,
        "include": item.include.value,
        "enabled": item.enabled,
        "priority_level": item.priority_level,
        "in_context": in_context,
    }


def _tool_view(tool: ToolDescription, in_context: bool) -> dict[str, Any]:
    return {
        "name": tool.name,
        "server": tool.name.partition(".")[0],
        "description": tool.description,
        "include": str(getattr(tool.include, "value", tool.include)),
        "permission_required": tool.permission_required,
        "in_context": in_context,
    }


# -- the tool table ---------------------------------------------------------------------------

_NAME = {"type": "string", "description": "the item's name"}
_REASON = {"type": "string", "description": "one sentence saying why"}
_ITEM_PROPERTIES: dict[str, Any] = {
    "name": _NAME,
    "text": {"type": "string", "description": "the markdown text put in the agent's context"},
    "description": {"type": "string"},
    "priority_level": {"type": "integer", "minimum": 0, "maximum": 999},
    "enabled": {"type": "boolean"},
    "include": {"type": "string", "enum": ["always", "manual", "agent"]},
}
_BY_NAME = {"type": "object", "properties": {"name": _NAME}, "required": ["name"]}
_NOTHING: dict[str, Any] = {"type": "object", "properties": {}}


def _tool(
    name: str,
    description: str,
    run: Run,
    parameters: dict[str, Any] = _NOTHING,
    need: Need = "read",
    purpose: str = "",
) -> SupervisedTool:
    spec = ToolSpec(name=f"supervised_{name}", description=description, parameters=parameters)
    return SupervisedTool(spec=spec, need=need, purpose=purpose, run=run)


def _reading_tools() -> list[SupervisedTool]:
    limit = {"type": "object", "properties": {"limit": {"type": "integer", "minimum": 0}}}
    return [
        _tool(
            "get_conversation_history",
            "The supervised conversation's latest messages (20 unless `limit` says otherwise).",
            SupervisedTools.conversation_history,
            limit,
        ),
        _tool(
            "get_session_state",
            "The session, the message under review and what is in context.",
            SupervisedTools.session_state,
        ),
        _tool(
            "get_current_rules",
            "The rules the next request will have in context, and why.",
            partial(SupervisedTools.current_items, kind="rule"),
        ),
        _tool(
            "get_current_references",
            "The references the next request will have in context, and why.",
            partial(SupervisedTools.current_items, kind="reference"),
        ),
        _tool(
            "get_available_tools",
            "Every tool the supervised agent can be given.",
            SupervisedTools.available_tools,
        ),
        _tool(
            "get_session_stats",
            "Counts of messages, tool calls, rules, references and context changes.",
            SupervisedTools.session_stats,
        ),
        _tool(
            "list_rules",
            "All the agent's rules, with include mode and whether each is in context.",
            partial(SupervisedTools.list_items, kind="rule"),
        ),
        _tool(
            "get_rule",
            "One rule with its text.",
            partial(SupervisedTools.get_item, kind="rule"),
            _BY_NAME,
        ),
        _tool(
            "list_references",
            "All the agent's references, with include mode and whether each is in context.",
            partial(SupervisedTools.list_items, kind="reference"),
        ),
        _tool(
            "get_reference",
            "One reference with its text.",
            partial(SupervisedTools.get_item, kind="reference"),
            _BY_NAME,
        ),
        _tool(
            "list_tools",
            "All the agent's tools (server.tool), with include mode and whether in context.",
            SupervisedTools.list_tools,
        ),
        _tool(
            "list_tool_servers",
            "The agent's MCP servers and how many tools each offers.",
            SupervisedTools.list_tool_servers,
        ),
    ]


def _inclusion_tools() -> list[SupervisedTool]:
    kinds: tuple[ItemKind, ...] = ("rule", "reference", "tool")
    tools = []
    for kind in kinds:
        for verb, included, where in (("include", True, "into"), ("exclude", False, "out of")):
            tools.append(
                _tool(
                    f"{verb}_{kind}",
                    f"Put a {kind} {where} the supervised session's context.",
                    partial(SupervisedTools.set_included, kind=kind, included=included),
                    _BY_NAME,
                    "context",
                    f"{verb} a {kind}",
                )
            )
    return tools


def _editing_tools() -> list[SupervisedTool]:
    kinds: tuple[SavedKind, ...] = ("rule", "reference")
    every = {"type": "object", "properties": _ITEM_PROPERTIES, "required": ["name"]}
    new = {**every, "required": ["name", "text"]}
    tools = []
    for kind in kinds:
        tools += [
            _tool(
                f"create_{kind}",
                f"Add a {kind} to the supervised session's agent (for this session only).",
                partial(SupervisedTools.create_item, kind=kind),
                new,
                "context",
                f"create a {kind}",
            ),
            _tool(
                f"update_{kind}",
                f"Change fields of a {kind} (for this session only).",
                partial(SupervisedTools.update_item, kind=kind),
                every,
                "context",
                f"update a {kind}",
            ),
            _tool(
                f"delete_{kind}",
                f"Remove a {kind} (for this session only).",
                partial(SupervisedTools.delete_item, kind=kind),
                _BY_NAME,
                "context",
                f"delete a {kind}",
            ),
        ]
    return tools


def _decision_tools() -> list[SupervisedTool]:
    reason = {"type": "object", "properties": {"reason": _REASON}, "required": ["reason"]}
    priority = {"type": "string", "enum": ["low", "medium", "high"]}
    review = {**reason, "properties": {"reason": _REASON, "priority": priority}}
    content = {"type": "string", "description": "the full new text of the message"}
    modify = {
        "type": "object",
        "properties": {"content": content, "reason": _REASON},
        "required": ["content", "reason"],
    }
    return [
        _tool(
            "allow_message",
            "Decide: let the message through.",
            partial(SupervisedTools.decide, action="allow"),
            reason,
            "decision",
        ),
        _tool(
            "block_message",
            "Decide: stop the message.",
            partial(SupervisedTools.decide, action="block"),
            reason,
            "verdict",
            "block the message",
        ),
        _tool(
            "request_human_review",
            "Decide: hold the message until a person has looked at it.",
            partial(SupervisedTools.decide, action="human_review"),
            review,
            "verdict",
            "hold the message for a human review",
        ),
        _tool(
            "modify_message",
            "Decide: replace the message's text with a new one and let it through.",
            partial(SupervisedTools.decide, action="modify"),
            modify,
            "message",
            "modify the message",
        ),
    ]


TOOLS: dict[str, SupervisedTool] = {
    tool.spec.name: tool
    for tool in (*_reading_tools(), *_inclusion_tools(), *_editing_tools(), *_decision_tools())
}
