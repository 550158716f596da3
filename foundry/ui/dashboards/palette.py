"""The colours and text styles of the dashboards, one palette for every chart."""

from __future__ import annotations

from collections.abc import Iterable

from foundry.metrics import PHASE_COLUMNS

TEXT = "#37474F"
MUTED = "#78909C"
GRID_ALPHA = 0.15
BACKGROUND = "#FFFFFF"

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


def supervisor_colors(supervisors: Iterable[str]) -> dict[str, str]:
    """A colour for each supervisor, the same in every chart that draws these supervisors."""
    named = sorted(set(supervisors))
    return {name: SUPERVISOR_COLORS[i % len(SUPERVISOR_COLORS)] for i, name in enumerate(named)}
