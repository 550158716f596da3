"""The charts of supervisor decisions: confidence over time, its distribution, decisions by level.

A supervisor is any decider that states a confidence: a chat's message supervisors (guardian,
architect, curator, ...), the L1 tool supervisor, a task's checks of its criteria. Decisions
by level count every decision, with a confidence or without (the policy, grants, people)."""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QFontMetrics

from foundry.metrics import DECISION_LEVELS, OUTCOMES, DashboardFigures
from foundry.metrics import aggregates as agg
from foundry.ui.dashboards.chart import Chart
from foundry.ui.dashboards.palette import OUTCOME_COLORS, supervisor_colors
from foundry.ui.dashboards.task_charts import BAR_WIDTH
from foundry.words import counted

BIN_WIDTH = 100 / agg.HISTOGRAM_BINS  # percent
PERCENT = (0.0, 100.0)
NO_DECISIONS = "No supervisor decisions yet:\nthey appear when a supervised chat or task runs"
LEVEL_TITLES = {
    "policy": "policy (L0)",
    "grant": "grant",
    "supervisor": "supervisor (L1)",
    "human": "human (L2)",
    "timeout": "timed out",
    "message": "messages",
    "task": "task checks",
}
OUTCOME_WORDS = {  # what an outcome is called at a level, where it has a word of its own
    ("task", "allowed"): "passed",
    ("task", "escalated"): "uncertain",
    ("task", "denied"): "failed",
    ("message", "denied"): "blocked",
}


def _sample(color: str) -> pg.BarGraphItem:
    """A bar of a colour for the legend, not on the plot."""
    return pg.BarGraphItem(x=[0], height=[0], width=1, brush=color)


class ConfidenceTimeChart(Chart):
    title = "Supervisor confidence over time"
    columns = ("bin_start", "bin_seconds", "supervisor", "decisions", "mean", "lowest", "highest")
    x_label = "Time decided (mean per bin)"
    y_label = "Confidence (%)"
    time_axis = True
    empty_y = PERCENT
    series = (agg.CONFIDENCE, agg.DECIDER_CONFIDENCE)
    nothing_yet = NO_DECISIONS

    def rows_of(self, figures: DashboardFigures) -> list[tuple[Any, ...]]:
        return [
            (b.start, figures.bin_seconds, supervisor, f.count, f.mean, f.low, f.high)
            for b in figures.confidence
            for supervisor, f in b.by_label.items()
        ]

    def draw(self) -> None:
        for supervisor, color in supervisor_colors(row[2] for row in self.rows).items():
            chosen = [row for row in self.rows if row[2] == supervisor]
            times = [self.bin_center(row[0]) for row in chosen]
            self.add_dots(times, [row[4] for row in chosen], color, supervisor)
        self.plot.setYRange(0, 100, padding=0.04)
        self.fit_times()

    def supervisor_data(self, supervisor: str) -> tuple[np.ndarray, np.ndarray]:
        """The plotted (time, mean confidence) of one supervisor."""
        if supervisor not in self.dots:
            return np.array([]), np.array([])
        x, y = self.dots[supervisor].getData()
        return x, y

    def summarize(self) -> str:
        decisions = sum(row[3] for row in self.rows)
        total = sum(row[3] * row[4] for row in self.rows)
        supervisors = len({row[2] for row in self.rows})
        return (
            f"{counted(decisions, 'decision')} · mean {total / decisions:.0f} % · "
            f"{counted(supervisors, 'supervisor')}"
        )

    def describe(self, x: float, y: float) -> str | None:
        index = self.nearest(
            [self.bin_center(r[0]) for r in self.rows], [r[4] for r in self.rows], x, y
        )
        if index is None:
            return None
        start, _, supervisor, count, mean, low, high = self.rows[index]
        return (
            f"{supervisor}: {counted(count, 'decision')} · mean {mean:.1f} %\n"
            f"from {low:g} to {high:g} %\n{self.bin_span(start)}"
        )


class ConfidenceHistogramChart(Chart):
    title = "Distribution of supervisor confidence"
    columns = ("from_percent", "to_percent", "supervisor", "decisions")
    x_label = "Confidence (%)"
    y_label = "Decisions"
    empty_x = PERCENT
    y_counts = True
    series = (agg.CONFIDENCE, agg.DECIDER_CONFIDENCE)
    nothing_yet = NO_DECISIONS

    def __init__(self) -> None:
        self.counts: dict[str, np.ndarray] = {}  # by supervisor, stacked in the order of names
        super().__init__()

    def rows_of(self, figures: DashboardFigures) -> list[tuple[Any, ...]]:
        return [
            (index * BIN_WIDTH, (index + 1) * BIN_WIDTH, supervisor, count)
            for supervisor, counts in figures.histograms.items()
            for index, count in enumerate(counts)
            if any(counts)
        ]

    def draw(self) -> None:
        colors = supervisor_colors(row[2] for row in self.rows)
        self.counts = {name: np.zeros(agg.HISTOGRAM_BINS, dtype=int) for name in colors}
        for start, _, supervisor, count in self.rows:
            self.counts[supervisor][round(start / BIN_WIDTH)] = count
        starts = np.arange(0.0, 100.0, BIN_WIDTH)
        base = np.zeros(agg.HISTOGRAM_BINS, dtype=int)
        for supervisor, color in colors.items():
            self.draw_bars(
                f"bars {supervisor}",
                x0=starts + 0.6,
                y0=base.copy(),
                width=BIN_WIDTH - 1.2,
                height=self.counts[supervisor],
                brush=color,
                pen=None,
            )
            base += self.counts[supervisor]
            sample = self.kept(f"legend {supervisor}", partial(_sample, color), False)
            sample.setOpts(brush=color)  # a supervisor's colour changes as others appear
            self.add_legend(sample, supervisor)
        self.plot.setXRange(0, 100, padding=0.02)
        self.fit_counts(int(base.max()))

    def totals(self) -> np.ndarray:
        """The decisions in each bin, of every supervisor."""
        return sum(self.counts.values(), np.zeros(agg.HISTOGRAM_BINS, dtype=int))

    def summarize(self) -> str:
        return f"{counted(int(self.totals().sum()), 'decision')} in bins of {BIN_WIDTH:g} %"

    def describe(self, x: float, y: float) -> str | None:
        if not 0 <= x <= 100:
            return None
        index = min(int(x // BIN_WIDTH), agg.HISTOGRAM_BINS - 1)
        start = index * BIN_WIDTH
        count = int(self.totals()[index])
        who = " · ".join(
            f"{supervisor} {int(counts[index])}"
            for supervisor, counts in self.counts.items()
            if counts[index]
        )
        head = f"{start:g} to {start + BIN_WIDTH:g} %: {counted(count, 'decision')}"
        return f"{head}\n{who}" if who else head


class DecisionsChart(Chart):
    title = "Supervisor decisions by level"
    columns = ("level", *OUTCOMES)
    x_label = "Level that decided"
    y_label = "Decisions"
    y_counts = True
    series = (agg.RESOLUTION,)
    nothing_yet = NO_DECISIONS

    def __init__(self) -> None:
        self.counts = np.zeros((len(DECISION_LEVELS), len(OUTCOMES)), dtype=int)
        super().__init__()

    def rows_of(self, figures: DashboardFigures) -> list[tuple[Any, ...]]:
        counts = figures.resolutions
        if not any(counts.values()):
            return []
        return [
            (level, *(counts.get(f"{level}/{outcome}", 0) for outcome in OUTCOMES))
            for level in DECISION_LEVELS
        ]

    def draw(self) -> None:
        self.counts = np.array([row[1:] for row in self.rows], dtype=int)
        x = np.arange(len(DECISION_LEVELS))
        base = np.zeros(len(DECISION_LEVELS), dtype=int)
        for column, outcome in enumerate(OUTCOMES):
            height = self.counts[:, column]
            bars = self.draw_bars(
                outcome,
                x=x,
                y0=base.copy(),
                height=height,
                width=BAR_WIDTH,
                brush=OUTCOME_COLORS[outcome],
                pen=None,
            )
            self.add_legend(bars, outcome)
            base += height
        # two lines each ("supervisor" over "(L1)"): seven sit side by side under a half-width chart
        ticks = [
            (float(index), LEVEL_TITLES[level].replace(" (", "\n("))
            for index, level in enumerate(DECISION_LEVELS)
        ]
        axis = self.plot.getAxis("bottom")
        axis.setTicks([ticks])
        line = QFontMetrics(axis.font()).lineSpacing()
        axis.setStyle(tickTextHeight=2 * line + line // 2)  # both lines, apart from the title
        self.plot.setXRange(-0.6, len(DECISION_LEVELS) - 0.4, padding=0)
        self.fit_counts(int(base.max()), headroom=1.15)

    def show_empty(self) -> None:
        super().show_empty()
        self.plot.getAxis("bottom").setTicks([])  # no level's name left where a bar was

    def summarize(self) -> str:
        total = int(self.counts.sum())
        human = int(self.counts[DECISION_LEVELS.index("human")].sum())
        return f"{counted(total, 'decision')} · {human * 100 / total:.1f} % by a human"

    def describe(self, x: float, y: float) -> str | None:
        index = round(x)
        if not (0 <= index < len(DECISION_LEVELS) and abs(x - index) <= BAR_WIDTH / 2):
            return None
        level = DECISION_LEVELS[index]
        counts = self.counts[index]
        told = " · ".join(
            f"{int(counts[column]):,} {OUTCOME_WORDS.get((level, outcome), outcome)}"
            for column, outcome in enumerate(OUTCOMES)
            if counts[column] or outcome in ("allowed", "denied")
        )
        return f"{LEVEL_TITLES[level]}: {told}"
