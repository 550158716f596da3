"""The colours and text styles of the dashboards, one palette for every chart."""

from __future__ import annotations

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
LEVEL_COLORS = {"pass": "#2E7D32", "uncertain": "#F9A825", "fail": "#C62828"}
STATUS_COLORS = {
    "succeeded": "#55A868",
    "failed": "#C44E52",
    "cancelled": "#90A4AE",
    "running": "#4C72B0",
}
ALLOWED = "#55A868"
DENIED = "#C44E52"
INPUT_TOKENS = "#4C72B0"
OUTPUT_TOKENS = "#64B5CD"
TOTAL_TIME = "#4C72B0"
FIRST_TOKEN = "#DD8452"
APPROVAL_COLORS = {"approved": "#55A868", "denied": "#C44E52", "timed_out": "#90A4AE"}
THRESHOLD = "#546E7A"
