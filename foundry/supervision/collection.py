"""The collection supervisor: statistics of each conversation it watches, exportable as JSON."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel

from foundry.agent.atomic import write_file_atomically
from foundry.agent.models import CollectionSupervisorEntry
from foundry.llm.base import ChatMessage
from foundry.session.supervisors import Direction, Reach, SupervisionResult
from foundry.words import counted

if TYPE_CHECKING:
    from foundry.session.chat import ChatSession


class ConversationStats(BaseModel):
    session_id: str
    requests: int = 0
    responses: int = 0
    request_words: int = 0
    response_words: int = 0
    tool_calls: int = 0
    tools_used: dict[str, int] = {}
    longest_response_words: int = 0


class CollectionSupervisor:
    """Always allows; counts requests, responses, words and tool calls per session."""

    def __init__(self, entry: CollectionSupervisorEntry, base_dir: Path) -> None:
        self.id = entry.id
        self.name = entry.name or "Statistics"
        self.fallback_behavior: Literal["allow", "block"] = "allow"
        self.directions: frozenset[Direction] = frozenset(("request", "response"))
        self.reach: Reach = "observe"
        self.budget_s = 0.0  # nothing waits for it
        path = entry.config.export_path
        self._export = (base_dir / path) if path else None
        self.stats: dict[str, ConversationStats] = {}

    async def review(
        self, session: ChatSession, direction: Direction, message: ChatMessage
    ) -> SupervisionResult:
        stats = self.stats.setdefault(session.id, ConversationStats(session_id=session.id))
        words = len(message.content.split())
        if direction == "request":
            stats.requests += 1
            stats.request_words += words
        else:
            stats.responses += 1
            stats.response_words += words
            stats.longest_response_words = max(stats.longest_response_words, words)
            for call in message.tool_calls:
                stats.tool_calls += 1
                stats.tools_used[call.name] = stats.tools_used.get(call.name, 0) + 1
        if self._export is not None:
            await asyncio.to_thread(self.export, self._export)
        summary = ", ".join(
            (
                counted(stats.requests, "request"),
                counted(stats.responses, "response"),
                counted(stats.tool_calls, "tool call"),
            )
        )
        return SupervisionResult(action="allow", reasons=(summary,), confidence=1.0)

    def export(self, path: Path) -> None:
        """Write the statistics of every session seen so far as one JSON document."""
        data = {session: stats.model_dump() for session, stats in self.stats.items()}
        write_file_atomically(path, json.dumps(data, indent=2) + "\n")

    async def aclose(self) -> None:
        return None
