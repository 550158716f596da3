"""Counts in words."""

from __future__ import annotations

from foundry.words import counted


def test_one_is_singular_and_every_other_count_plural() -> None:
    assert counted(1, "tool call") == "1 tool call"
    assert [counted(n, "request") for n in (0, 2)] == ["0 requests", "2 requests"]
    assert counted(1500, "event") == "1,500 events"
    assert counted(2, "reply", "replies") == "2 replies"
