"""What the commands print of agents, tools, models and files, with control characters escaped."""

from __future__ import annotations

_KEPT_IN_TEXT = frozenset("\n\t")


def escaped(text: object, lines: bool = False) -> str:
    """`text` with every character that would act on the terminal instead of showing (escape
    sequences, carriage returns, bidirectional overrides) written as its escape: `\\x1b`,
    `\\r`, `\\u202e`. A name stays on its line (`\\n` too is escaped); with `lines`, a message
    or a reply keeps its line breaks and tabs."""
    shown = str(text)
    if shown.isprintable():
        return shown
    return "".join(
        char
        if char.isprintable() or (lines and char in _KEPT_IN_TEXT)
        else char.encode("unicode_escape").decode("ascii")
        for char in shown
    )
