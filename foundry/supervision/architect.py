"""The architect supervisor (a tsagent type): notes a conversation's patterns, never blocks."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel

from foundry.agent.models import ArchitectSupervisorEntry
from foundry.llm.base import ChatMessage
from foundry.session.supervisors import Direction, Reach, SupervisionResult

if TYPE_CHECKING:
    from foundry.session.chat import ChatSession


@dataclass(frozen=True)
class Pattern:
    """A kind of message worth a rule (and maybe a reference) when an agent sees it often.

    `cue` matches the text of a user's request; without one, a reply that calls tools matches.
    """

    name: str
    direction: Direction
    rule: str
    reference: str | None = None
    cue: re.Pattern[str] | None = None

    def matches(self, direction: Direction, message: ChatMessage) -> bool:
        if direction != self.direction:
            return False
        if self.cue is None:
            return bool(message.tool_calls)
        return self.cue.search(message.content) is not None


PATTERNS = (
    Pattern(
        name="question",
        direction="request",
        cue=re.compile(r"\?|^\s*(what|how|why|when|where|who|which)\b", re.IGNORECASE),
        rule="Answer questions directly and say how sure the answer is",
        reference="the facts users keep asking about",
    ),
    Pattern(
        name="task request",
        direction="request",
        cue=re.compile(r"\b(please|can you|could you|would you)\b", re.IGNORECASE),
        rule="Say what you are about to do before doing it",
    ),
    Pattern(
        name="tool use",
        direction="response",
        rule="Prefer a tool's result to a guess when a tool can answer",
    ),
)


class ArchitectAnalysis(BaseModel):
    """What the architect has seen in one session, and the context it would add for it."""

    session_id: str
    patterns: dict[str, int] = {}  # pattern name -> messages that showed it
    suggested_rules: list[str] = []
    suggested_references: list[str] = []


class ArchitectSupervisor:
    """Always allows; each decision records the patterns seen so far and, the first time a
    pattern shows, the rule or reference it suggests."""

    def __init__(self, entry: ArchitectSupervisorEntry) -> None:
        self.id = entry.id
        self.name = entry.name or "Architect"
        self.fallback_behavior: Literal["allow", "block"] = "allow"
        self.directions: frozenset[Direction] = frozenset(("request", "response"))
        self.reach: Reach = "observe"
        self.budget_s = 0.0  # nothing waits for it
        self.analyses: dict[str, ArchitectAnalysis] = {}

    async def review(
        self, session: ChatSession, direction: Direction, message: ChatMessage
    ) -> SupervisionResult:
        analysis = self.analyses.setdefault(session.id, ArchitectAnalysis(session_id=session.id))
        suggestions: list[str] = []
        for pattern in PATTERNS:
            if pattern.matches(direction, message):
                suggestions += _note(analysis, pattern)
        seen = ", ".join(f"{name} {count}" for name, count in analysis.patterns.items())
        summary = f"patterns so far: {seen or 'none'}"
        return SupervisionResult(action="allow", reasons=(summary, *suggestions), confidence=1.0)

    async def aclose(self) -> None:
        return None


def _note(analysis: ArchitectAnalysis, pattern: Pattern) -> list[str]:
    """Count the pattern; the first time, add and return what it suggests."""
    first = pattern.name not in analysis.patterns
    analysis.patterns[pattern.name] = analysis.patterns.get(pattern.name, 0) + 1
    if not first:
        return []
    analysis.suggested_rules.append(pattern.rule)
    suggestions = [f"suggested rule: {pattern.rule}"]
    if pattern.reference:
        analysis.suggested_references.append(pattern.reference)
        suggestions.append(f"suggested reference: {pattern.reference}")
    return suggestions
