"""The sources of concerns a session's gate holds calls for (supervision/concerns.py): each
looks at the calls of one session of one agent."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from foundry.agent.document import AgentDocument
from foundry.session.events import EventBody
from foundry.store import Store
from foundry.supervision.concerns import ConcernSource
from foundry.supervision.tool_definitions import session_tool_definitions


@dataclass(frozen=True)
class SessionPlace:
    """What a session's sources of concerns look at: its store, agent and tools."""

    store: Store
    session_id: str
    document: AgentDocument
    identity: str  # the agent's file, as trust keys it
    tools: Any  # the ToolHost (or a task's tools) whose tools the calls are of; None: unknown
    record: Callable[[EventBody], Awaitable[Any]]  # an event of the session (ToolConcernRaised)


def session_concerns(place: SessionPlace) -> list[ConcernSource]:
    """The sources of concerns for one session's calls."""
    definitions = session_tool_definitions(
        place.tools, place.document, place.identity, place.record
    )
    return [source for source in (definitions,) if source is not None]
