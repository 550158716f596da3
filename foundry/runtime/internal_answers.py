"""What tsagent's internal tools answer, acting on a Foundry session and its agent.

Each tool answers as tsagent 1.3.6 does: the same texts (`Rule "x" created successfully`), the
same JSON (two-space indented for the rules and references servers, compact for the tools
server) and the same `Error: ...` texts, marked as errors here. The differences are Foundry's
and on purpose: searches rank by the session's lexical ranker (BM25, best match 1.0) instead of
embeddings; no answer carries an item's embeddings; a tool that does not exist is said not to
exist (tsagent says it "was already in context"); `serverDefault` is the server's own default.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from foundry.agent.models import Agent, ContextItem, IncludeMode, Reference, Rule
from foundry.session.context import ItemKind, bm25_scores
from foundry.tools.catalog import ToolInfo

SavedKind = Literal["rule", "reference"]
ITEM_NAME = re.compile(r"^[a-zA-Z0-9_-]+$")
INCLUDE_MODES = ("always", "manual", "agent")
SEARCH_DEFAULTS = {"topK": 20, "topN": 5, "includeScore": 0.7}
NO_SESSION = "Chat session not found"


class ToolError(Exception):
    """What a tool answers as `Error: ...`, as tsagent words it."""


@dataclass(frozen=True)
class Answer:
    text: str
    is_error: bool = False


class Place(Protocol):
    """What the internal tools of one session act on."""

    def agent(self) -> Agent:
        """The agent as the session runs it (its rules and references as the session has them)."""
        ...

    def has_session(self) -> bool:
        """Whether there is a chat whose context the tools change (not a gateway's session)."""
        ...

    def in_context(self, item: ItemKind, name: str, include: IncludeMode) -> bool: ...

    async def set_included(self, item: ItemKind, name: str, included: bool) -> None: ...

    async def save_item(self, kind: SavedKind, name: str, value: ContextItem | None) -> None:
        """Write the item to the agent's files (None: remove it) and to the session."""
        ...

    async def set_include_mode(self, server: str, tool: str | None, mode: str) -> None:
        """Write a tool's include mode (a server's default when `tool` is None) to the agent."""
        ...

    def tools(self) -> Sequence[ToolInfo]:
        """The tools the session is offered, every server's."""
        ...


Handler = Callable[[Place, dict[str, Any]], Awaitable[Any]]


def indented(value: Any) -> str:
    """As JavaScript's `JSON.stringify(value, null, 2)` writes it."""
    return json.dumps(value, indent=2, ensure_ascii=False)


def compact(value: Any) -> str:
    """As JavaScript's `JSON.stringify(value)` writes it."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


# -- rules and references -----------------------------------------------------------------------


@dataclass(frozen=True)
class Items:
    """The rules or the references, as their tools speak of them."""

    kind: SavedKind

    @property
    def title(self) -> str:
        return self.kind.capitalize()

    def all(self, place: Place) -> list[ContextItem]:
        agent = place.agent()
        return list(agent.rules if self.kind == "rule" else agent.references)

    def sorted(self, place: Place) -> list[ContextItem]:
        """In tsagent's order: by priority, then by name."""
        return sorted(self.all(place), key=lambda item: (item.priority_level, item.name.lower()))

    def find(self, place: Place, name: str) -> ContextItem | None:
        return next((item for item in self.all(place) if item.name == name), None)

    def found(self, place: Place, name: str) -> ContextItem:
        item = self.find(place, name)
        if item is None:
            raise ToolError(f'{self.title} "{name}" not found')
        return item

    def new(self, fields: dict[str, Any]) -> ContextItem:
        model: type[ContextItem] = Rule if self.kind == "rule" else Reference
        return model.model_validate(fields)


def view(item: ContextItem, with_text: bool = True) -> dict[str, Any]:
    """An item as tsagent's answers show it (its embeddings left out; `enabled` only when it
    is off, which tsagent has no word for)."""
    shown: dict[str, Any] = {
        "name": item.name,
        "description": item.description,
        "priorityLevel": item.priority_level,
    }
    if with_text:
        shown["text"] = item.text
    shown["include"] = item.include.value
    if not item.enabled:
        shown["enabled"] = False
    return shown


def item_arguments(
    items: Items, arguments: dict[str, Any], required: Sequence[str]
) -> dict[str, Any]:
    """The arguments as tsagent's item schema takes them (types and bounds checked, in its
    words), with the missing required ones said."""
    checked: dict[str, Any] = {}
    for key, value in arguments.items():
        if key in ("name", "text"):
            if not isinstance(value, str):
                raise ToolError(f"{key}: expected string")
            if not value:
                raise ToolError(f"{key}: {key.capitalize()} is required")
        elif key == "description" and not isinstance(value, str):
            raise ToolError("description: expected string")
        elif key == "priorityLevel":
            value = _priority(value)
        elif key == "include" and value not in INCLUDE_MODES:
            raise ToolError('include: expected one of "always"|"manual"|"agent"')
        elif key not in ("description", "include"):
            continue  # tsagent's schema strips what it does not declare
        checked[key] = value
    missing = [key for key in required if key not in checked]
    if missing:
        raise ToolError(f"Missing required arguments: {', '.join(missing)}")
    return checked


def _priority(value: Any) -> int:
    whole = isinstance(value, int | float) and not isinstance(value, bool) and value == int(value)
    if not whole:
        raise ToolError("priorityLevel: expected an integer")
    if not 0 <= value <= 999:
        raise ToolError("priorityLevel: Priority level must be between 0 and 999")
    return int(value)


def _checked_name(items: Items, name: str) -> str:
    if not ITEM_NAME.match(name):
        raise ToolError(
            f"{items.title} name can only contain letters, numbers, underscores, and dashes"
        )
    return name


async def create_item(items: Items, place: Place, arguments: dict[str, Any]) -> str:
    """tsagent's create is a save: a name already taken is replaced, in its place."""
    given = item_arguments(items, arguments, ("name", "text"))
    name = _checked_name(items, given["name"])
    fields = {
        "name": name,
        "description": given.get("description") or "",
        "priorityLevel": given.get("priorityLevel", 500),
        "text": given["text"],
        "include": given.get("include") or "manual",
    }
    await place.save_item(items.kind, name, items.new(fields))
    return f'{items.title} "{name}" created successfully'


async def get_item(items: Items, place: Place, arguments: dict[str, Any]) -> str:
    name = item_arguments(items, arguments, ("name",))["name"]
    return indented(view(items.found(place, name)))


async def update_item(items: Items, place: Place, arguments: dict[str, Any]) -> str:
    given = item_arguments(items, arguments, ("name",))
    current = items.found(place, given["name"])
    fields = {
        "name": current.name,
        "description": given.get("description", current.description),
        "priorityLevel": given.get("priorityLevel", current.priority_level),
        "text": given.get("text", current.text),
        "include": given.get("include", current.include.value),
        "enabled": current.enabled,
    }
    await place.save_item(items.kind, current.name, items.new(fields))
    return f'{items.title} "{current.name}" updated successfully'


async def delete_item(items: Items, place: Place, arguments: dict[str, Any]) -> str:
    name = item_arguments(items, arguments, ("name",))["name"]
    items.found(place, name)
    await place.save_item(items.kind, name, None)
    return f'{items.title} "{name}" deleted successfully'


async def list_items(items: Items, place: Place, arguments: dict[str, Any]) -> str:
    return indented([view(item, with_text=False) for item in items.sorted(place)])


def _in_context(items: Items, place: Place, item: ContextItem) -> bool:
    return item.enabled and place.in_context(items.kind, item.name, item.include)


async def list_context_items(items: Items, place: Place, arguments: dict[str, Any]) -> str:
    need_session(place)
    return indented([item.name for item in items.all(place) if _in_context(items, place, item)])


async def include_item(items: Items, place: Place, arguments: dict[str, Any]) -> str:
    name = item_arguments(items, arguments, ("name",))["name"]
    need_session(place)
    item = items.find(place, name)
    if item is None or not item.enabled or _in_context(items, place, item):
        raise ToolError(f'{items.title} "{name}" could not be added to session context')
    await place.set_included(items.kind, name, True)
    return f'{items.title} "{name}" successfully included in chat session'


async def exclude_item(items: Items, place: Place, arguments: dict[str, Any]) -> str:
    name = item_arguments(items, arguments, ("name",))["name"]
    need_session(place)
    item = items.find(place, name)
    if item is None or not _in_context(items, place, item):
        raise ToolError(f'{items.title} "{name}" could not be removed from session context')
    await place.set_included(items.kind, name, False)
    return f'{items.title} "{name}" successfully excluded from chat session'


async def search_items(items: Items, place: Place, arguments: dict[str, Any]) -> str:
    query, options = search_arguments(arguments)
    found = items.all(place)
    texts = [f"{item.name} {item.description} {item.text}" for item in found]
    results = []
    for item, score in ranked(found, texts, query, options):
        shown: dict[str, Any] = {"name": item.name}
        if item.description:
            shown["description"] = item.description
        shown.update(priorityLevel=item.priority_level, include=item.include.value)
        shown["similarityScore"] = score
        if item.text:
            shown["text"] = item.text
        results.append(shown)
    return indented(results)


def search_arguments(arguments: dict[str, Any]) -> tuple[str, dict[str, float]]:
    query = arguments.get("query")
    if not isinstance(query, str) or not query.strip():
        raise ToolError("Search query must be a non-empty string")
    options = dict(SEARCH_DEFAULTS)
    for key in SEARCH_DEFAULTS:
        value = arguments.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ToolError(f"{key} must be a number")
        options[key] = value
    return query.strip(), options


def ranked(
    found: Sequence[Any], texts: Sequence[str], query: str, options: dict[str, float]
) -> list[tuple[Any, float]]:
    """The best `topN` of the `topK` best matches, and any of those scoring `includeScore` or
    more; scores are BM25 relative to the best match (1), and nothing that shares no word."""
    scores = bm25_scores(query, list(texts))
    best = max(scores, default=0.0)
    if best <= 0:
        return []
    order = sorted(
        ((thing, score / best) for thing, score in zip(found, scores, strict=True) if score > 0),
        key=lambda pair: -pair[1],
    )[: int(options["topK"])]
    kept = [
        (thing, _score(score))
        for index, (thing, score) in enumerate(order)
        if index < options["topN"] or score >= options["includeScore"]
    ]
    return kept


def _score(score: float) -> float | int:
    rounded = round(score, 4)
    return int(rounded) if rounded == int(rounded) else rounded


def need_session(place: Place) -> None:
    if not place.has_session():
        raise ToolError(NO_SESSION)


def item_handlers(kind: SavedKind) -> dict[str, Handler]:
    """The tools of the rules or references server, by tsagent's names."""
    items = Items(kind)
    title, plural = items.title, f"{items.title}s"

    def bound(run: Callable[[Items, Place, dict[str, Any]], Awaitable[str]]) -> Handler:
        async def handle(place: Place, arguments: dict[str, Any]) -> str:
            return await run(items, place, arguments)

        return handle

    return {
        f"create{title}": bound(create_item),
        f"get{title}": bound(get_item),
        f"update{title}": bound(update_item),
        f"delete{title}": bound(delete_item),
        f"include{title}": bound(include_item),
        f"exclude{title}": bound(exclude_item),
        f"list{plural}": bound(list_items),
        f"listContext{plural}": bound(list_context_items),
        f"search{plural}": bound(search_items),
    }
