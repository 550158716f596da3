"""A guard against runaway repetition: a reply whose end is one piece of text over and over.

Small models fall into loops ("Bjelke Sørensen" a hundred times, the same timestamp until the
token limit); each lap costs the user seconds of a CPU-bound model. The guard reads the reply
as it streams and says when its tail is one unit repeated well past any real use: a unit of
`min_unit_for_laps` characters or more `LONG_LAPS` times, a shorter one `SHORT_LAPS` times, and
at least `MIN_SPAN` characters in all (a table's `---` or a laughing "ha ha" stay well below).
"""

from __future__ import annotations

REPETITION = "repetition"  # the stop reason of a reply the guard stopped
LONG_UNIT = 20  # characters: a unit this long or longer is a phrase or a sentence
LONG_LAPS = 4
SHORT_LAPS = 8
MIN_SPAN = 120  # characters of repetition before the guard speaks
MAX_UNIT = 200  # longer repeated units are left alone (a repeated paragraph is rare and slow)
WINDOW = MAX_UNIT * LONG_LAPS + MAX_UNIT  # how much of the tail is kept to look at


class RepetitionGuard:
    """Feed it a reply's text as it streams; `feed` returns True once the reply runs away."""

    def __init__(self) -> None:
        self._tail = ""
        self.unit: str | None = None  # the repeated piece, once found

    def feed(self, text: str) -> bool:
        if self.unit is not None:
            return True
        self._tail = (self._tail + text)[-WINDOW:]
        self.unit = repeated_unit(self._tail)
        return self.unit is not None


def repeated_unit(text: str) -> str | None:
    """The shortest piece that `text` ends with, repeated past the guard's limits; None if none."""
    for size in range(1, min(MAX_UNIT, len(text)) + 1):
        laps = max(LONG_LAPS if size >= LONG_UNIT else SHORT_LAPS, -(-MIN_SPAN // size))
        span = size * laps
        if span > len(text):
            continue
        unit = text[-size:]
        if unit.strip() and text.endswith(unit * laps):
            return unit
    return None
