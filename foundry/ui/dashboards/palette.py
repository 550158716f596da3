"""The colours and text styles of the dashboards, one palette for every chart."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication

from foundry.metrics import PHASE_COLUMNS
from foundry.ui.theme import is_dark

GRID_ALPHA = 0.15


@dataclass(frozen=True)
class Ink:
    """The colours of a chart's frame and words (not of its data), for one theme."""

    text: str
    muted: str  # axes, summaries, an empty chart's words
    background: str
    threshold: str  # a line across the plot
    outline: str  # around a dot: the background's colour, so dots that touch stay apart


LIGHT_INK = Ink("#37474F", "#78909C", "#FFFFFF", "#546E7A", "#FFFFFF")
DARK_INK = Ink("#E0E6EA", "#9AA8B0", "#1E1E1E", "#B0BEC5", "#1E1E1E")


def ink(palette: QPalette | None = None) -> Ink:
    """The ink of the app's theme (or of `palette`), on the background its lists have."""
    palette = palette or QApplication.palette()
    base = palette.color(QPalette.ColorRole.Base).name()
    return replace(DARK_INK if is_dark(palette) else LIGHT_INK, background=base, outline=base)


PHASE_COLORS = dict(
    zip(
        PHASE_COLUMNS,
        (
            "#4C72B0",  # planning
            "#55A868",  # agent execution
            "#8172B3",  # validation
            "#64B5CD",  # helper
            "#CCB974",  # interrogation
            "#C44E52",  # rescue
            "#DD8452",  # waiting for a human
            "#B0BEC5",  # other
        ),
        strict=True,
    )
)
# the supervisors with a confidence, in the order of their names (no red nor green: those say
# allowed and denied)
SUPERVISOR_COLORS = (
    "#4C72B0",
    "#DD8452",
    "#8172B3",
    "#64B5CD",
    "#937860",
    "#DA8BC3",
    "#8C8C8C",
    "#CCB974",
)
OUTCOME_COLORS = {
    "allowed": "#55A868",
    "changed": "#F2B134",
    "escalated": "#4C72B0",
    "denied": "#C44E52",
}
STATUS_COLORS = {
    "succeeded": "#55A868",
    "failed": "#C44E52",
    "cancelled": "#90A4AE",
    "running": "#4C72B0",
}
INPUT_TOKENS = "#4C72B0"
OUTPUT_TOKENS = "#64B5CD"
TOTAL_TIME = "#4C72B0"
FIRST_TOKEN = "#DD8452"
APPROVAL_COLORS = {"approved": "#55A868", "denied": "#C44E52", "timed_out": "#90A4AE"}
THRESHOLD = "#546E7A"
LEVEL_COLORS = {  # of the levels that decide a tool call: the people's warm, the rest cool
    "policy": "#4C72B0",
    "grant": "#64B5CD",
    "supervisor": "#8172B3",
    "human": "#DD8452",
    "timeout": "#B0BEC5",
}
QUESTION_COLORS = {  # a needless question in a colour of its own, at the bottom of its stack
    "unchanged": "#CCB974",
    "edited": "#8172B3",
    "denied": "#C44E52",
    "flagged": "#DD8452",
    "timed_out": "#B0BEC5",
}
ESCALATION = "#DD8452"  # calls that went to a person
L1_ESCALATION = "#8172B3"  # of them, those the L1 supervisor sent on
AGREED = "#4C72B0"
LET_THROUGH = "#E53935"  # the unsafe verdicts: a red no other series of the chart has


def supervisor_colors(supervisors: Iterable[str]) -> dict[str, str]:
    """A colour for each supervisor, the same in every chart that draws these supervisors."""
    named = sorted(set(supervisors))
    return {name: SUPERVISOR_COLORS[i % len(SUPERVISOR_COLORS)] for i, name in enumerate(named)}
