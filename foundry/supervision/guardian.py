"""The guardian supervisor: masks personal data and blocks messages with forbidden keywords."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

from foundry.agent.models import GuardianSupervisorEntry
from foundry.llm.base import ChatMessage
from foundry.session.supervisors import Direction, SupervisionResult

if TYPE_CHECKING:
    from foundry.session.chat import ChatSession


def _luhn_valid(digits: str) -> bool:
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char)
        if position % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def _card(match: re.Match[str]) -> bool:
    digits = re.sub(r"\D", "", match.group())
    return 13 <= len(digits) <= 19 and _luhn_valid(digits)


def _always(match: re.Match[str]) -> bool:
    return True


def _phone(match: re.Match[str]) -> bool:
    """E.164 numbers have at most 15 digits; longer runs are account or order numbers."""
    return 8 <= len(re.sub(r"\D", "", match.group())) <= 15


# kind -> (pattern, what replaces it, extra check on a match)
PII_PATTERNS: dict[str, tuple[re.Pattern[str], str, Callable[[re.Match[str]], bool]]] = {
    "email": (re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"), "[email]", _always),
    "card": (re.compile(r"\b(?:\d[ -]?){12,18}\d\b"), "[card number]", _card),
    "national_id": (
        re.compile(r"\b\d{3}-\d{2}-\d{4}\b|\b[A-CEGHJ-PR-TW-Z]{2}\d{6}[A-D]\b"),
        "[national id]",
        _always,
    ),
    "phone": (re.compile(r"(?<![\w-])\+?\d[\d ().-]{7,}\d\b"), "[phone]", _phone),
}
MASK_ORDER = ("email", "card", "national_id", "phone")  # cards before phones: both are digits


def mask_pii(text: str, kinds: tuple[str, ...]) -> tuple[str, dict[str, int]]:
    """The text with each kind of personal data replaced by a placeholder, and how many of each."""
    counts: dict[str, int] = {}
    for kind in MASK_ORDER:
        if kind not in kinds:
            continue
        pattern, placeholder, check = PII_PATTERNS[kind]

        def replace(
            match: re.Match[str],
            kind: str = kind,
            placeholder: str = placeholder,
            check: Callable[[re.Match[str]], bool] = check,
        ) -> str:
            if not check(match):
                return match.group()
            counts[kind] = counts.get(kind, 0) + 1
            return placeholder

        text = pattern.sub(replace, text)
    return text, counts


class GuardianSupervisor:
    """Runs no model: regular expressions and keyword lists, so it is fast and predictable."""

    def __init__(self, entry: GuardianSupervisorEntry) -> None:
        self.id = entry.id
        self.name = entry.name or "Guardian"
        self.fallback_behavior: Literal["allow", "block"] = "block"
        self._kinds = tuple(entry.config.mask_pii)
        self._keywords = [word.lower() for word in entry.config.block_keywords if word.strip()]
        self.directions: frozenset[Direction] = frozenset(entry.config.apply_to)

    async def review(
        self, session: ChatSession, direction: Direction, message: ChatMessage
    ) -> SupervisionResult:
        lowered = message.content.lower()
        found = [word for word in self._keywords if word in lowered]
        if found:
            listed = ", ".join(repr(word) for word in found)
            return SupervisionResult(
                action="block", reasons=(f"contains blocked text {listed}",), confidence=1.0
            )
        masked, counts = mask_pii(message.content, self._kinds)
        if not counts:
            return SupervisionResult(action="allow", confidence=1.0)
        what = ", ".join(f"{count} {kind.replace('_', ' ')}" for kind, count in counts.items())
        return SupervisionResult(
            action="modify",
            content=masked,
            confidence=1.0,
            reasons=(f"masked personal data: {what}",),
        )

    async def aclose(self) -> None:
        return None
