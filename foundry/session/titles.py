"""A session's title for lists and tabs: its first message, cut to a line of about 60 characters."""

from __future__ import annotations

import re

from foundry.session.readable import readable

TITLE_LENGTH = 60
_SPACES = re.compile(r"\s+")
_MARKUP = re.compile(r"^(?:#{1,6}\s+|>\s*|[-*+]\s+)")  # a heading, quote or bullet opening it


def session_title(
    first_message: str | None, agent_name: str = "", limit: int = TITLE_LENGTH
) -> str:
    """ "What time is it in Tokyo?" from that first message; a longer one cut at a word with
    "…" (at most `limit` characters). With no message yet: "New chat with <agent>"."""
    text = _SPACES.sub(" ", readable(first_message or "")).strip()
    text = _MARKUP.sub("", text).strip()
    if not text:
        return f"New chat with {agent_name}" if agent_name else "New chat"
    if len(text) <= limit:
        return text
    words = text[: limit - 1] if text[limit - 1] == " " else text[: limit - 1].rsplit(" ", 1)[0]
    at_word = words if len(words) >= limit // 2 else text[: limit - 1]  # not one word alone
    return at_word.rstrip(" ,.;:-") + "…"
