"""The charts of task runs: confidence over time and its distribution, iterations, phase shares.

Every chart draws time bins of the metric aggregates (foundry.metrics.figures), so that it costs
the same over a hundred events or a million."""

from __future__ import annotations

from datetime import datetime
from functools import partial
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt

from foundry.metrics import PHASE_COLUMNS, PHASE_TITLES, DashboardFigures
from foundry.ui.dashboards.chart import Chart
from foundry.ui.dashboards.palette import LEVEL_COLORS, PHASE_COLORS, STATUS_COLORS

PASS_THRESHOLD = 70.0
UNCERTAIN_THRESHOLD = 50.0
BIN_WIDTH = 10.0
BAR_WIDTH = 0.7
BAR_SHARE = 0.8  # of a time bin a bar covers
ITERATIONS = STATUS_COLORS["running"]
PASS_LINE = Qt.PenStyle.DashLine
UNCERTAIN_LINE = Qt.PenStyle.DotLine
PERCENT = (0.0, 100.0)


def at_least(level: str, threshold: float) -> str:
    """A threshold's name in a legend: "pass ≥ 70 %"."""
    return f"{level} ≥ {threshold:g} %"


def clock(moment: datetime) -> str:
    return moment.astimezone().strftime("%Y-%m-%d %H:%M:%S")


class ConfidenceTimeChart(Chart):
    title = "Supervisor confidence over time"
    columns = ("bin_start", "bin_seconds", "level", "scores", "mean", "lowest", "highest")
    x_label = "Time scored (mean per bin)"
    y_label = "Confidence (%)"
    time_axis = True
    empty_y = PERCENT

    def __init__(
        self, pass_threshold: float = PASS_THRESHOLD, uncertain: float = UNCERTAIN_THRESHOLD
    ) -> None:
        self.pass_threshold = pass_threshold
        self.uncertain_threshold = uncertain
        super().__init__()

    def rows_of(self, figures: DashboardFigures) -> list[tuple[Any, ...]]:
        return [
            (b.start, figures.bin_seconds, level, f.count, f.mean, f.low, f.high)
            for b in figures.confidence
            for level, f in b.by_label.items()
        ]

    def draw(self) -> None:
        for level, color in LEVEL_COLORS.items():
            chosen = [row for row in self.rows if row[2] == level]
            if chosen:
                times = [self.bin_center(row[0]) for row in chosen]
                self.add_dots(times, [row[4] for row in chosen], color, level)
        pass_name = at_least("pass", self.pass_threshold)
        self.add_threshold(self.pass_threshold, pass_name, 0, PASS_LINE)
        uncertain_name = at_least("uncertain", self.uncertain_threshold)
        self.add_threshold(self.uncertain_threshold, uncertain_name, 0, UNCERTAIN_LINE)
        self.plot.setYRange(0, 100, padding=0.04)
        self.fit_times()

    def level_data(self, level: str) -> tuple[np.ndarray, np.ndarray]:
        """The plotted (time, mean score) of one level."""
        if level not in self.dots:
            return np.array([]), np.array([])
        x, y = self.dots[level].getData()
        return x, y

    def summarize(self) -> str:
        counts = self.figures.histogram
        scores = sum(counts)
        total = sum(row[3] * row[4] for row in self.rows)
        passed = sum(counts[int(self.pass_threshold // BIN_WIDTH) :])
        if not scores:
            return "no scores"
        return (
            f"{scores:,} scores · mean {total / scores:.0f} % · "
            f"{passed * 100 / scores:.0f} % at or above {self.pass_threshold:g} %"
        )

    def describe(self, x: float, y: float) -> str | None:
        index = self.nearest(
            [self.bin_center(r[0]) for r in self.rows], [r[4] for r in self.rows], x, y
        )
        if index is None:
            return None
        start, _, level, count, mean, low, high = self.rows[index]
        return (
            f"{count:,} {level} score{'' if count == 1 else 's'} · mean {mean:.1f} %\n"
            f"from {low:g} to {high:g} %\n{self.bin_span(start)}"
        )


class ConfidenceHistogramChart(Chart):
    title = "Distribution of confidence scores"
    columns = ("from_percent", "to_percent", "scores")
    x_label = "Confidence (%)"
    y_label = "Scores"
    empty_x = PERCENT
    y_counts = True

    def __init__(
        self, pass_threshold: float = PASS_THRESHOLD, uncertain: float = UNCERTAIN_THRESHOLD
    ) -> None:
        self.pass_threshold = pass_threshold
        self.uncertain_threshold = uncertain
        self.counts = np.zeros(int(100 / BIN_WIDTH), dtype=int)
        super().__init__()

    def rows_of(self, figures: DashboardFigures) -> list[tuple[Any, ...]]:
        if not any(figures.histogram):
            return []
        return [
            (index * BIN_WIDTH, (index + 1) * BIN_WIDTH, count)
            for index, count in enumerate(figures.histogram)
        ]

    def draw(self) -> None:
        edges = np.arange(0.0, 100.0 + BIN_WIDTH, BIN_WIDTH)
        self.counts = np.array([row[2] for row in self.rows], dtype=int)
        brushes = [self._color(start) for start in edges[:-1]]
        self.draw_bars(
            "scores",
            x0=edges[:-1] + 0.6,
            width=BIN_WIDTH - 1.2,
            height=self.counts,
            brushes=brushes,
            pen=None,
        )
        for level in ("fail", "uncertain", "pass"):
            self.add_legend(self.kept(level, partial(_sample, LEVEL_COLORS[level]), False), level)
        pass_name = at_least("pass", self.pass_threshold)
        self.add_threshold(self.pass_threshold, pass_name, 90, PASS_LINE)
        uncertain_name = at_least("uncertain", self.uncertain_threshold)
        self.add_threshold(self.uncertain_threshold, uncertain_name, 90, UNCERTAIN_LINE)
        self.plot.setXRange(0, 100, padding=0.02)
        self.fit_counts(int(self.counts.max()))

    def _color(self, bin_start: float) -> str:
        if bin_start >= self.pass_threshold:
            return LEVEL_COLORS["pass"]
        if bin_start >= self.uncertain_threshold:
            return LEVEL_COLORS["uncertain"]
        return LEVEL_COLORS["fail"]

    def summarize(self) -> str:
        return f"{int(self.counts.sum()):,} scores in bins of {BIN_WIDTH:g} %"

    def describe(self, x: float, y: float) -> str | None:
        if not 0 <= x <= 100:
            return None
        index = min(int(x // BIN_WIDTH), len(self.counts) - 1)
        start = index * BIN_WIDTH
        count = int(self.counts[index])
        return f"{start:g} to {start + BIN_WIDTH:g} %: {count} score{'' if count == 1 else 's'}"


def _sample(color: str) -> pg.BarGraphItem:
    """A bar of a colour for the legend, not on the plot."""
    return pg.BarGraphItem(x=[0], height=[0], width=1, brush=color)


def _statuses(statuses: dict[str, int]) -> str:
    return " · ".join(f"{count:,} {status}" for status, count in sorted(statuses.items()))


class IterationsChart(Chart):
    title = "Iterations per task"
    columns = ("bin_start", "bin_seconds", "tasks", "iterations", "mean_iterations", "statuses")
    x_label = "Tasks by start time (mean per bin)"
    y_label = "Iterations"
    time_axis = True
    y_counts = True

    def rows_of(self, figures: DashboardFigures) -> list[tuple[Any, ...]]:
        return [
            (
                b.start,
                figures.bin_seconds,
                b.tasks,
                b.iterations,
                b.iterations / b.tasks,
                _statuses(b.statuses),
            )
            for b in figures.task_bins
        ]

    def draw(self) -> None:
        means = [row[4] for row in self.rows]
        bars = self.draw_bars(
            "iterations",
            x=[self.bin_center(row[0]) for row in self.rows],
            height=means,
            width=self.figures.bin_seconds * BAR_SHARE,
            brush=ITERATIONS,
            pen=None,
        )
        self.add_legend(bars, "mean iterations of the tasks started")
        self.fit_times()
        self.fit_counts(max(means), headroom=1.15)

    def summarize(self) -> str:
        tasks = sum(row[2] for row in self.rows)
        iterations = sum(row[3] for row in self.rows)
        return f"{tasks:,} tasks · mean {iterations / tasks:.1f} iterations"

    def describe(self, x: float, y: float) -> str | None:
        index = self.bin_at([row[0] for row in self.rows], x)
        if index is None:
            return None
        start, _, tasks, _, mean, statuses = self.rows[index]
        return (
            f"{tasks:,} task{'' if tasks == 1 else 's'} started · mean {mean:.1f} iterations\n"
            f"{statuses}\n{self.bin_span(start)}"
        )


class PhaseSharesChart(Chart):
    title = "Where the tasks' time goes"
    columns = ("bin_start", "bin_seconds", "tasks", "phase", "seconds", "share")
    x_label = "Tasks by start time"
    y_label = "Active time (%)"
    time_axis = True
    empty_y = PERCENT

    def __init__(self) -> None:
        self.shares: dict[str, np.ndarray] = {}
        self.bars: dict[str, pg.BarGraphItem] = {}  # per phase, stacked in PHASE_COLUMNS order
        super().__init__()

    def rows_of(self, figures: DashboardFigures) -> list[tuple[Any, ...]]:
        rows = []
        for b in figures.task_bins:
            total = sum(b.phase_seconds.values())
            for phase in PHASE_COLUMNS:
                seconds = b.phase_seconds.get(phase, 0.0)
                share = seconds * 100 / total if total else 0.0
                rows.append((b.start, figures.bin_seconds, b.tasks, phase, seconds, share))
        return rows

    def draw(self) -> None:
        starts = list(dict.fromkeys(row[0] for row in self.rows))
        position = {start: index for index, start in enumerate(starts)}
        self.shares = {phase: np.zeros(len(starts)) for phase in PHASE_COLUMNS}
        for start, _, _, phase, _, share in self.rows:
            self.shares[phase][position[start]] = share
        x = np.array([self.bin_center(start) for start in starts])
        base = np.zeros(len(starts))
        for phase in PHASE_COLUMNS:
            bars = self.draw_bars(
                phase,
                x=x,
                y0=base.copy(),
                height=self.shares[phase],
                width=self.figures.bin_seconds * BAR_SHARE,
                brush=PHASE_COLORS[phase],
                pen=None,
            )
            self.add_legend(bars, PHASE_TITLES[phase])
            self.bars[phase] = bars
            base += self.shares[phase]
        self.fit_times()
        self.plot.setYRange(0, 100, padding=0.02)
        self.plot.getAxis("left").setTicks([[(value, str(value)) for value in range(0, 101, 20)]])

    def summarize(self) -> str:
        seconds: dict[str, float] = dict.fromkeys(PHASE_COLUMNS, 0.0)
        for row in self.rows:
            seconds[row[3]] += row[4]
        named = {phase: value for phase, value in seconds.items() if phase != "other"}
        worst = max(named, key=lambda phase: named[phase])
        total = sum(seconds.values()) or 1.0
        tasks = sum(row[2] for row in self.rows) // len(PHASE_COLUMNS)
        return (
            f"{tasks:,} tasks · bottleneck overall: {PHASE_TITLES[worst]} "
            f"({seconds[worst] * 100 / total:.0f} % of all active time)"
        )

    def describe(self, x: float, y: float) -> str | None:
        starts = list(dict.fromkeys(row[0] for row in self.rows))
        index = self.bin_at(starts, x)
        if index is None:
            return None
        top = 0.0
        for phase in PHASE_COLUMNS:
            share = self.shares[phase][index]
            top += share
            if y <= top and share > 0:
                row = next(r for r in self.rows if r[0] == starts[index] and r[3] == phase)
                return (
                    f"{PHASE_TITLES[phase]} · {row[2]:,} task{'' if row[2] == 1 else 's'}\n"
                    f"{row[5]:.1f} % · {row[4]:,.1f} s\n{self.bin_span(starts[index])}"
                )
        return None
