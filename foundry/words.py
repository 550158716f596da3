"""Counts in words, for messages and labels: "1 tool call", "3 tool calls"."""

from __future__ import annotations


def counted(count: int, word: str, plural: str | None = None) -> str:
    """`count` and `word`, in the plural (`word` + "s", or `plural`) unless it is one."""
    return f"{count:,} {word if count == 1 else plural or word + 's'}"
