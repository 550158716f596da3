"""The concerns about an agent's tools as their servers list them: a definition changed since a
person trusted the server, a new tool, a flagged description, a tool shadowing another's.

`ToolDefinitions` is a source of concerns (concerns.py) for one session. It reads the tools on
offer whenever their listing changed (a server started, relisted after `tools/list_changed`,
stopped) or the pins did: a trusted server's first listing is pinned (tool_pins.py); after that
a tool whose definition differs from its pin is held (`definition-changed`, with a diff of the
two and both descriptions) and a tool not pinned is `new-tool`. While held, the model and a
gateway client are offered the pinned definition (`offered`): what the person trusted, never a
description the person has not seen; a new tool is offered as listed, its calls held. A person's
unedited approval of a held call pins the definition the approval showed. A tool whose
definition reads like instructions to the model (tool_poisoning.py) has every call held
(`flagged-description`): its description keeps speaking to the model whatever was approved
before. A tool that shadows another server's (tool_shadowing.py) is held until a person approves
one of its calls having seen the shadowing. Each change, new, removed, flagged or shadowing tool
is told once as a ToolConcernRaised event.
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import functools
import hashlib
import inspect
import json
import logging
import weakref
from collections import defaultdict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from foundry.agent.document import AgentDocument
from foundry.agent.trust import agent_consents
from foundry.llm.base import ToolCall
from foundry.session.events import EventBody, ToolConcernRaised
from foundry.supervision.concerns import REMOVED_TOOL, Concern
from foundry.supervision.paths import server_folders
from foundry.supervision.tool_pins import (
    Definition,
    PinnedServer,
    PinStore,
    ServerKey,
    definition_digest,
)
from foundry.supervision.tool_poisoning import DescriptionFlag, judge_definition
from foundry.supervision.tool_shadowing import LOOK_ALIKE, SAME_NAME, Shadowing, find_shadowing
from foundry.tools.catalog import ToolInfo

log = logging.getLogger(__name__)
T = TypeVar("T")

Notify = Callable[[EventBody], Any]  # records an event of the session (may return an awaitable)
_DEFINITION_KEYS = ("name", "title", "description", "inputSchema", "outputSchema", "annotations")


@dataclass
class _Judged:
    """What one listing of the tools gave: each tool's concerns, the definitions to offer for
    the held ones, and the events it calls for."""

    concerns: dict[str, list[Concern]] = field(default_factory=lambda: defaultdict(list))
    offered: dict[str, ToolInfo] = field(default_factory=dict)
    events: list[tuple[str, ToolConcernRaised]] = field(default_factory=list)

    def hold(self, tool: str, concern: Concern, announce: str) -> None:
        self.concerns[tool].append(concern)
        event = ToolConcernRaised(
            tool=tool, concern=concern.kind, reason=concern.reason, detail=concern.detail
        )
        self.events.append((announce, event))


class ToolDefinitions:
    """Holds the calls of tools whose definitions changed, are new, flagged or shadowing."""

    def __init__(
        self,
        tools: Any,
        agent: str,
        consents: Callable[[], Mapping[str, str]],
        pins: PinStore,
        notify: Notify | None = None,
        kinds: Mapping[str, str | None] | None = None,
    ) -> None:
        """`tools` is what lists the tools on offer (`tools()`, and `statuses()` for a
        ToolHost); `agent` the agent's trust key; `consents` gives each server's consent
        fingerprint (blocking: it reads the agent's files; called once)."""
        self._tools = tools
        self._agent = agent
        self._consents_of = consents
        self._consents: Mapping[str, str] | None = None
        self._pins = pins
        self._notify = notify
        self._kinds = kinds or {}  # each server's kind, as Foundry identified it
        self._seen: tuple[tuple[ToolInfo, ...], int] | None = None
        self._raised: set[str] = set()  # the concerns this source raised, by digest
        self._reading: asyncio.Future[Mapping[str, str]] | None = None
        with contextlib.suppress(RuntimeError):  # no loop: read when first needed
            self._reading = asyncio.get_running_loop().run_in_executor(None, consents)
            # the tools listed at the session's start are judged (and told) once it is read
            self._reading.add_done_callback(lambda _: self._observe_safely())
        self._judged = _Judged()
        self._announced: set[str] = set()
        self._sent: set[asyncio.Future[Any]] = set()
        _watching(tools).add(self)

    # -- the ConcernSource protocol -------------------------------------------------------------

    def concerns(self, call: ToolCall) -> Sequence[Concern]:
        self.observe()
        return tuple(self._judged.concerns.get(call.name, ()))

    def accepted(self, call: ToolCall, concerns: Sequence[Concern]) -> None:
        """Pin what the person approved having seen it: the changed or new definition the
        approval showed (not the one listed now, if it changed again), or the shadowing."""
        for concern in concerns:
            detail = concern.detail
            if detail.get("tool") != call.name or _concern_digest(concern) not in self._raised:
                continue  # another source's, or about another tool
            key = self._key(detail["server"])
            if key is None:
                continue
            if concern.kind in ("definition-changed", "new-tool") and "definition" in detail:
                definition = detail["definition"]
                self._pins.pin(key, {definition["name"]: definition})
            elif concern.kind == "shadowing" and "digest" in detail:
                self._pins.accept(key, detail["tool_name"], detail["digest"])

    # -- what is offered ------------------------------------------------------------------------

    def offered(self, tool: ToolInfo) -> ToolInfo:
        """The tool as the model and a gateway client are offered it: its pinned definition
        while a change to it waits for a person, else as listed."""
        self.observe()
        return self._judged.offered.get(tool.name, tool)

    def offered_tools(self, tools: Sequence[ToolInfo]) -> list[ToolInfo]:
        return [self.offered(tool) for tool in tools]

    def observe(self) -> None:
        """Judge the tools again if their listing or the pins changed since last time (cheap
        when neither did: each call and each offer asks)."""
        self._pins.refresh()
        listing = tuple(self._tools.tools())
        seen = (listing, self._pins.version)
        if self._seen is not None and _same(self._seen, seen):
            return
        self._judged = self._judge(listing)
        self._raised.update(
            _concern_digest(concern) for held in self._judged.concerns.values() for concern in held
        )
        self._seen = (listing, self._pins.version)
        self._announce(self._judged.events)

    def _observe_safely(self) -> None:
        try:
            self.observe()
        except Exception:
            log.exception("The tools' definitions could not be judged")

    async def told(self) -> None:
        """Wait until the events told so far are recorded."""
        while self._sent:
            await asyncio.gather(*list(self._sent))

    # -- judging a listing ----------------------------------------------------------------------

    def _judge(self, listing: tuple[ToolInfo, ...]) -> _Judged:
        judged = _Judged()
        served = [tool for tool in listing if tool.listed]  # Foundry's own tools are not judged
        by_server: dict[str, list[ToolInfo]] = defaultdict(list)
        for tool in served:
            by_server[tool.server].append(tool)
        running = self._running_servers(by_server)
        for server, tools in by_server.items():
            self._judge_pins(server, tools, server in running, judged)
        for tool in served:
            flag = self._flag(tool)
            if flag is not None:
                judged.hold(tool.name, flag, f"flagged:{tool.name}:{_digest(tool)}")
        by_name = {tool.name: tool for tool in served}
        for shadowing in find_shadowing(served):
            if not self._owns_its_name(shadowing, by_name):
                self._judge_shadowing(shadowing, by_name, judged)
        return judged

    def _judge_pins(
        self, server: str, tools: list[ToolInfo], running: bool, judged: _Judged
    ) -> None:
        key = self._key(server)
        if key is None:
            return  # not a server a person trusted (Foundry's own)
        pinned = self._pins.pinned(key)
        if pinned is None:
            self._pins.pin(key, {tool.tool: tool.definition() for tool in tools})
            return
        for tool in tools:
            before = pinned.tools.get(tool.tool)
            if before is None:
                judged.hold(tool.name, _new_tool(tool), f"new:{tool.name}:{_digest(tool)}")
            elif definition_digest(before) != _digest(tool):
                changed = _changed(tool, before)
                judged.hold(tool.name, changed, f"changed:{tool.name}:{_digest(tool)}")
                judged.offered[tool.name] = _as_pinned(tool, before)
        if running:
            self._judge_removed(server, tools, pinned, judged)

    def _judge_removed(
        self, server: str, tools: list[ToolInfo], pinned: PinnedServer, judged: _Judged
    ) -> None:
        listed = {tool.tool for tool in tools}
        removed = set(pinned.tools) - listed
        key = self._key(server)
        if key is not None:
            self._pins.set_removed(key, removed)
        for name in sorted(removed - set(pinned.removed)):
            definition = pinned.tools[name]
            qualified = f"{server}.{name}"
            event = ToolConcernRaised(
                tool=qualified,
                concern=REMOVED_TOOL,
                reason=f"{qualified} is no longer offered by server {server!r} (it was when "
                "you trusted the server)",
                detail={"tool": qualified, "server": server, "definition": definition},
            )
            judged.events.append((f"removed:{qualified}:{definition_digest(definition)}", event))

    def _owns_its_name(self, shadowing: Shadowing, tools: Mapping[str, ToolInfo]) -> bool:
        """A tool of a server Foundry identified (the reference filesystem server's read_file)
        does not shadow by its name: the name is its own; the other server's tool does."""
        named = shadowing.how in (SAME_NAME, LOOK_ALIKE)
        return named and self._kinds.get(tools[shadowing.tool].server) is not None

    def _judge_shadowing(
        self, shadowing: Shadowing, tools: Mapping[str, ToolInfo], judged: _Judged
    ) -> None:
        tool = tools[shadowing.tool]
        other = tools.get(shadowing.other)
        digest = _shadowing_digest(shadowing, tool, other)
        key = self._key(tool.server)
        pinned = self._pins.pinned(key) if key is not None else None
        if pinned is not None and digest in pinned.accepted.get(tool.tool, ()):
            return
        concern = Concern(
            kind="shadowing",
            reason=shadowing.describe(),
            detail={
                "tool": tool.name,
                "server": tool.server,
                "tool_name": tool.tool,
                "other": shadowing.other,
                "how": shadowing.how,
                "excerpt": shadowing.excerpt,
                "description": tool.description,
                "other_description": other.description if other is not None else "",
                "digest": digest,
            },
        )
        judged.hold(tool.name, concern, f"shadowing:{tool.name}:{digest}")

    def _flag(self, tool: ToolInfo) -> Concern | None:
        """The tool's flagged-description concern (each definition is judged once in this
        process: a gateway's sessions and a relisting share the judgement)."""
        definition = tool.definition()
        flag = _judged_definition(json.dumps(definition, sort_keys=True, ensure_ascii=False))
        return None if flag is None else _flagged(tool, flag.describe(), flag)

    def _running_servers(self, by_server: Mapping[str, list[ToolInfo]]) -> set[str]:
        """The servers whose listing is whole: running ones by the host's statuses, else
        those with tools listed."""
        statuses = getattr(self._tools, "statuses", None)
        if statuses is None:
            return set(by_server)
        return {status.name for status in statuses() if status.state == "running"}

    def _key(self, server: str) -> ServerKey | None:
        if self._consents is None:
            reading = self._reading
            done = reading is not None and reading.done() and reading.exception() is None
            self._consents = reading.result() if done and reading else self._consents_of()
        consent = self._consents.get(server)
        return None if consent is None else ServerKey(self._agent, server, consent)

    # -- telling ---------------------------------------------------------------------------------

    def _announce(self, events: list[tuple[str, ToolConcernRaised]]) -> None:
        for announce, event in events:
            if announce in self._announced:
                continue
            self._announced.add(announce)
            if self._notify is None:
                continue
            try:
                sent = self._notify(event)
            except Exception:
                log.exception("A tool concern could not be recorded: %s", event.reason)
                continue
            if inspect.isawaitable(sent):
                self._keep(sent)

    def _keep(self, sent: Awaitable[Any]) -> None:
        """Keep the recording of an event until it is done (`told` waits for it)."""
        try:
            future = asyncio.ensure_future(sent)
        except RuntimeError:  # no loop runs: nothing can record it
            if inspect.iscoroutine(sent):
                sent.close()
            log.warning("A tool concern could not be recorded: no event loop runs")
            return
        self._sent.add(future)
        future.add_done_callback(self._sent.discard)


def _same(before: tuple[tuple[ToolInfo, ...], int], now: tuple[tuple[ToolInfo, ...], int]) -> bool:
    """The same listing (the same tool objects: a listing replaces them) and pins."""
    (old, old_version), (new, new_version) = before, now
    return (
        old_version == new_version
        and len(old) == len(new)
        and all(a is b for a, b in zip(old, new, strict=True))
    )


def _concern_digest(concern: Concern) -> str:
    return definition_digest(concern.record())


def offered_tools(sources: Sequence[object], tools: Sequence[ToolInfo]) -> list[ToolInfo]:
    """The tools as the model and a gateway client are offered them by a gate with these
    sources of concerns: a tool whose change waits for a person with its pinned definition."""
    offered = list(tools)
    for source in sources:
        if isinstance(source, ToolDefinitions):
            offered = source.offered_tools(offered)
    return offered


# The sources watching each set of tools (a ToolHost, a chat's tools), so that whoever offers
# those tools offers them as the sources say (`offered_on`) without holding the sources. The
# sessions of one gateway share a host: their sources share the pins, and agree.
_WATCHING: weakref.WeakKeyDictionary[Any, weakref.WeakSet[ToolDefinitions]] = (
    weakref.WeakKeyDictionary()
)


def _watching(tools: Any) -> weakref.WeakSet[ToolDefinitions]:
    try:
        return _WATCHING.setdefault(tools, weakref.WeakSet())
    except TypeError:  # tools that cannot be watched (no weak reference): none is
        return weakref.WeakSet()


def observe_on(tools: Any) -> None:
    """Have the sources watching `tools` judge them now (a server listed its tools again), so
    that a change is told when it is listed, not at the next call or offer."""
    for source in list(_WATCHING.get(tools, ())):
        source._observe_safely()


def offered_on(tools: Any, listed: Sequence[T]) -> list[T]:
    """`listed`, tools of `tools`, as the model and a gateway client are offered them: each
    tool whose change waits for a person with its pinned definition (what the person trusted),
    the others as listed. Tools that are not an MCP server's pass as they are."""
    sources = list(_WATCHING.get(tools, ()))
    if not sources:
        return list(listed)
    offered: list[T] = []
    for tool in listed:
        if not isinstance(tool, ToolInfo):
            offered.append(tool)
            continue
        shown: ToolInfo = tool
        for source in sources:
            shown = source.offered(shown)
        offered.append(cast(T, shown))
    return offered


@functools.lru_cache(maxsize=2048)
def _judged_definition(canonical: str) -> DescriptionFlag | None:
    """A definition judged, by its canonical JSON (some 0.1-2 ms each: once is enough)."""
    return judge_definition(json.loads(canonical))


def _digest(tool: ToolInfo) -> str:
    return definition_digest(tool.definition())


def _shadowing_digest(shadowing: Shadowing, tool: ToolInfo, other: ToolInfo | None) -> str:
    """The shadowing as a person saw it: a change to either tool or to how asks again."""
    parts = [shadowing.how, shadowing.other, _digest(tool), _digest(other) if other else ""]
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()


def _new_tool(tool: ToolInfo) -> Concern:
    return Concern(
        kind="new-tool",
        reason=f"{tool.name} is new: server {tool.server!r} did not offer it when you trusted "
        "the server",
        detail={
            "tool": tool.name,
            "server": tool.server,
            "description": tool.description,
            "definition": tool.definition(),
        },
    )


def _changed(tool: ToolInfo, pinned: Definition) -> Concern:
    current = tool.definition()
    parts = [key for key in _DEFINITION_KEYS if pinned.get(key) != current.get(key)]
    return Concern(
        kind="definition-changed",
        reason=f"{tool.name}'s definition changed since you trusted server {tool.server!r} "
        f"({', '.join(parts)})",
        detail={
            "tool": tool.name,
            "server": tool.server,
            "changed": parts,
            "diff": definition_diff(pinned, current),
            "pinned_description": pinned.get("description", ""),
            "description": tool.description,
            "definition": current,
        },
    )


def _flagged(tool: ToolInfo, why: str, flag: DescriptionFlag) -> Concern:
    return Concern(
        kind="flagged-description",
        reason=f"{tool.name}'s definition reads like instructions to the model ({why})",
        detail={
            "tool": tool.name,
            "server": tool.server,
            "description": tool.description,
            "signal": flag.signal,
            "where": flag.where,
            "flagged": flag.excerpt,
        },
    )


def definition_diff(pinned: Definition, current: Definition) -> str:
    """The change from the pinned definition to the current one, as a unified diff of the two
    as indented JSON."""
    before = json.dumps(pinned, indent=2, sort_keys=True, ensure_ascii=False).splitlines()
    after = json.dumps(current, indent=2, sort_keys=True, ensure_ascii=False).splitlines()
    return "\n".join(difflib.unified_diff(before, after, "pinned", "listed now", lineterm=""))


def _as_pinned(tool: ToolInfo, pinned: Definition) -> ToolInfo:
    """The tool as it was pinned: its pinned description and schemas, the rest as listed."""
    listed = {key: value for key, value in tool.listed.items() if key not in _DEFINITION_KEYS}
    listed.update(pinned)
    return tool.model_copy(
        update={
            "description": pinned.get("description", ""),
            "parameters": pinned.get("inputSchema", {}),
            "listed": listed,
        }
    )


def session_tool_definitions(
    tools: Any, document: AgentDocument, identity: str, notify: Notify | None
) -> ToolDefinitions | None:
    """The source for a session's tools of the agent `document` (trust key `identity`), with
    the pins every process shares; None when the session has no tools."""
    if tools is None:
        return None

    def consents() -> dict[str, str]:
        return {
            consent.server: consent.fingerprint
            for consent in agent_consents(document)
            if consent.server is not None
        }

    agent = document.agent
    servers = agent.mcp_servers if agent is not None else {}
    sites = server_folders(servers, document.base_dir)
    kinds = {name: getattr(site, "kind", None) for name, site in sites.items()}
    return ToolDefinitions(tools, identity, consents, PinStore.shared(), notify, kinds)
