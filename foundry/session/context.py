"""What a request puts in the model's context: always, manual and mentioned items, and the most
relevant `agent` items by a lexical ranker (BM25)."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from foundry.agent.models import AgentSettings, IncludeMode
from foundry.session.events import ContextChanged, ContextEntry

ItemKind = Literal["rule", "reference", "tool"]
MENTION = re.compile(r"@(rule|ref):([A-Za-z0-9_-]+)")
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Candidate:
    """Something that can be in context: a rule, a reference or a tool."""

    item: ItemKind
    name: str
    include: IncludeMode
    text: str  # what relevance is judged on: name, description and body
    priority: int = 500


@dataclass
class ContextState:
    """The changes made to a session's context by mentions, the user and supervisors."""

    included: set[tuple[str, str]] = field(default_factory=set)
    excluded: set[tuple[str, str]] = field(default_factory=set)
    mentioned: set[tuple[str, str]] = field(default_factory=set)

    def apply(self, change: ContextChanged) -> None:
        key = (change.item, change.name)
        if change.included:
            self.excluded.discard(key)
            self.included.add(key)
            if change.by == "mention":
                self.mentioned.add(key)
        else:
            self.included.discard(key)
            self.mentioned.discard(key)
            self.excluded.add(key)


def mentions(text: str) -> list[tuple[ItemKind, str]]:
    """`@rule:name` and `@ref:name` in a user's message, in order."""
    return [
        ("rule" if kind == "rule" else "reference", name) for kind, name in MENTION.findall(text)
    ]


def words(text: str) -> list[str]:
    return [word.lower() for word in _WORD.findall(text)]


def bm25_scores(
    query: str, documents: Sequence[str], k1: float = 1.5, b: float = 0.75
) -> list[float]:
    """Okapi BM25 score of each document for the query."""
    tokenised = [words(document) for document in documents]
    if not tokenised:
        return []
    average = sum(map(len, tokenised)) / len(tokenised) or 1.0
    frequency = Counter(term for document in tokenised for term in set(document))
    scores = []
    for document in tokenised:
        counts = Counter(document)
        score = 0.0
        for term in set(words(query)):
            if term not in counts:
                continue
            idf = math.log(1 + (len(tokenised) - frequency[term] + 0.5) / (frequency[term] + 0.5))
            tf = counts[term]
            score += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(document) / average))
        scores.append(score)
    return scores


def select_context(
    candidates: Iterable[Candidate], state: ContextState, query: str, settings: AgentSettings
) -> list[ContextEntry]:
    """The items in play for one request, each with the reason and, for ranked ones, the score."""
    chosen: list[ContextEntry] = []
    ranked: list[Candidate] = []
    for candidate in candidates:
        key = (candidate.item, candidate.name)
        if key in state.excluded:
            continue
        if key in state.included:
            reason = "mention" if key in state.mentioned else "manual"
            chosen.append(ContextEntry(item=candidate.item, name=candidate.name, reason=reason))
        elif candidate.include == IncludeMode.ALWAYS:
            chosen.append(ContextEntry(item=candidate.item, name=candidate.name, reason="always"))
        elif candidate.include == IncludeMode.AGENT:
            ranked.append(candidate)
    return chosen + _most_relevant(ranked, query, settings)


def _most_relevant(
    candidates: list[Candidate], query: str, settings: AgentSettings
) -> list[ContextEntry]:
    """The top N of the K best-scoring items, plus any beyond N scoring at least includeScore.

    Scores are BM25 relative to the best match of this request (so the best scores 1.0); items
    that share no word with the request are never chosen.
    """
    scores = bm25_scores(query, [candidate.text for candidate in candidates])
    best = max(scores, default=0.0)
    if best <= 0:
        return []
    order = sorted(zip(candidates, scores, strict=True), key=lambda pair: -pair[1])
    order = [(candidate, score / best) for candidate, score in order if score > 0]
    considered = order[: settings.context_top_k]
    kept = [
        pair
        for index, pair in enumerate(considered)
        if index < settings.context_top_n or pair[1] >= settings.context_include_score
    ]
    return [
        ContextEntry(item=c.item, name=c.name, reason="agent", score=round(score, 4))
        for c, score in kept
    ]
