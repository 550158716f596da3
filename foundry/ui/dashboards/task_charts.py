"""The charts of task runs: confidence over time and its distribution, iterations, phase shares."""

from __future__ import annotations

import statistics
from datetime import datetime

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt

from foundry.metrics import (
    PHASE_COLUMNS,
    PHASE_TITLES,
    ConfidencePoint,
    IterationsPoint,
    PhaseSharePoint,
)
from foundry.ui.dashboards.chart import Chart
from foundry.ui.dashboards.palette import LEVEL_COLORS, PHASE_COLORS, STATUS_COLORS, THRESHOLD

PASS_THRESHOLD = 70.0
UNCERTAIN_THRESHOLD = 50.0
BIN_WIDTH = 10.0
BAR_WIDTH = 0.7


def clock(moment: datetime) -> str:
    return moment.astimezone().strftime("%Y-%m-%d %H:%M:%S")


def threshold_line(value: float, label: str, angle: float) -> pg.InfiniteLine:
    line = pg.InfiniteLine(
        pos=value,
        angle=angle,
        pen=pg.mkPen(THRESHOLD, width=1.2, style=Qt.PenStyle.DashLine),
        label=label,
        labelOpts={
            "color": THRESHOLD,
            "fill": (255, 255, 255, 215),
            "position": 0.96 if angle == 0 else 0.9,
            "anchors": [(1, 1), (1, 1)],
        },
    )
    line.setZValue(10)  # above the points, so that its label can be read
    return line


class ConfidenceTimeChart(Chart):
    title = "Supervisor confidence over time"
    series_name = "confidence"
    point_type = ConfidencePoint
    x_label = "Time scored"
    y_label = "Confidence (%)"
    time_axis = True

    def __init__(
        self, pass_threshold: float = PASS_THRESHOLD, uncertain: float = UNCERTAIN_THRESHOLD
    ) -> None:
        self.pass_threshold = pass_threshold
        self.uncertain_threshold = uncertain
        super().__init__()

    def draw(self) -> None:
        for level, color in LEVEL_COLORS.items():
            chosen = [point for point in self.points if point.level == level]
            if not chosen:
                continue
            times = [point.time.timestamp() for point in chosen]
            self.add_dots(times, [point.score for point in chosen], color, level)
        self.plot.addItem(threshold_line(self.pass_threshold, f"pass {self.pass_threshold:g}", 0))
        self.plot.addItem(
            threshold_line(self.uncertain_threshold, f"uncertain {self.uncertain_threshold:g}", 0)
        )
        self.plot.setYRange(0, 100, padding=0.04)
        self.plot.enableAutoRange(axis="x")

    def level_data(self, level: str) -> tuple[np.ndarray, np.ndarray]:
        """The plotted (time, score) of one level."""
        if level not in self.dots:
            return np.array([]), np.array([])
        x, y = self.dots[level].getData()
        return x, y

    def summarize(self) -> str:
        scores = [point.score for point in self.points]
        passed = sum(1 for score in scores if score >= self.pass_threshold)
        return (
            f"{len(scores):,} scores · median {statistics.median(scores):.0f} · "
            f"{passed * 100 / len(scores):.0f} % at or above {self.pass_threshold:g}"
            if scores
            else "no scores"
        )

    def describe(self, x: float, y: float) -> str | None:
        xs = [point.time.timestamp() for point in self.points]
        index = self.nearest(xs, [point.score for point in self.points], x, y)
        if index is None:
            return None
        point = self.points[index]
        return (
            f"{point.task} · {point.criterion} (iteration {point.iteration})\n"
            f"{point.score:g} % · {point.level} · by {point.by}\n{clock(point.time)}"
        )


class ConfidenceHistogramChart(Chart):
    title = "Distribution of confidence scores"
    series_name = "confidence"
    point_type = ConfidencePoint
    x_label = "Confidence (%)"
    y_label = "Scores"

    def __init__(
        self, pass_threshold: float = PASS_THRESHOLD, uncertain: float = UNCERTAIN_THRESHOLD
    ) -> None:
        self.pass_threshold = pass_threshold
        self.uncertain_threshold = uncertain
        self.counts = np.zeros(int(100 / BIN_WIDTH), dtype=int)
        super().__init__()

    def draw(self) -> None:
        edges = np.arange(0.0, 100.0 + BIN_WIDTH, BIN_WIDTH)
        self.counts, _ = np.histogram([point.score for point in self.points], bins=edges)
        brushes = [self._color(start) for start in edges[:-1]]
        bars = pg.BarGraphItem(
            x0=edges[:-1] + 0.6,
            width=BIN_WIDTH - 1.2,
            height=self.counts,
            brushes=brushes,
            pen=None,
        )
        self.plot.addItem(bars)
        for level in ("fail", "uncertain", "pass"):
            self.add_legend(
                pg.BarGraphItem(x=[0], height=[0], width=1, brush=LEVEL_COLORS[level]), level
            )
        self.plot.addItem(threshold_line(self.pass_threshold, f"pass {self.pass_threshold:g}", 90))
        self.plot.addItem(
            threshold_line(self.uncertain_threshold, f"uncertain {self.uncertain_threshold:g}", 90)
        )
        self.plot.setXRange(0, 100, padding=0.02)
        self.plot.setYRange(0, max(int(self.counts.max()), 1) * 1.1, padding=0)
        self.count_axis(int(self.counts.max()))

    def _color(self, bin_start: float) -> str:
        if bin_start >= self.pass_threshold:
            return LEVEL_COLORS["pass"]
        if bin_start >= self.uncertain_threshold:
            return LEVEL_COLORS["uncertain"]
        return LEVEL_COLORS["fail"]

    def summarize(self) -> str:
        return f"{len(self.points):,} scores in bins of {BIN_WIDTH:g} %"

    def describe(self, x: float, y: float) -> str | None:
        if not 0 <= x <= 100:
            return None
        index = min(int(x // BIN_WIDTH), len(self.counts) - 1)
        start = index * BIN_WIDTH
        count = int(self.counts[index])
        return f"{start:g} to {start + BIN_WIDTH:g} %: {count} score{'' if count == 1 else 's'}"


class IterationsChart(Chart):
    title = "Iterations per task"
    series_name = "iterations"
    point_type = IterationsPoint
    x_label = "Task (by start time)"
    y_label = "Iterations"
    category_axis = True

    def draw(self) -> None:
        heights = [point.iterations for point in self.points]
        bars = pg.BarGraphItem(
            x=np.arange(len(self.points)),
            height=heights,
            width=BAR_WIDTH,
            brushes=[
                STATUS_COLORS.get(point.status, STATUS_COLORS["running"]) for point in self.points
            ],
            pen=None,
        )
        self.plot.addItem(bars)
        for status in dict.fromkeys(point.status for point in self.points):
            sample = pg.BarGraphItem(x=[0], height=[0], width=1, brush=STATUS_COLORS.get(status))
            self.add_legend(sample, status)
        self.categories.set_names([point.task for point in self.points])
        self.plot.setXRange(-0.6, len(self.points) - 0.4, padding=0)
        self.plot.setYRange(0, max(max(heights), 1) * 1.15, padding=0)
        self.count_axis(max(heights))

    def summarize(self) -> str:
        iterations = [point.iterations for point in self.points]
        return f"{len(iterations):,} tasks · mean {statistics.fmean(iterations):.1f} iterations"

    def describe(self, x: float, y: float) -> str | None:
        index = round(x)
        if not (0 <= index < len(self.points) and abs(x - index) <= BAR_WIDTH / 2):
            return None
        point = self.points[index]
        return (
            f"{point.task}: {point.iterations} iteration{'' if point.iterations == 1 else 's'} "
            f"({point.status})\nstarted {clock(point.time)}"
        )


class PhaseSharesChart(Chart):
    title = "Where each task's time goes"
    series_name = "phase_shares"
    point_type = PhaseSharePoint
    x_label = "Task (by start time)"
    y_label = "Share of active time (%)"
    category_axis = True

    def __init__(self) -> None:
        self.tasks: list[str] = []
        self.shares: dict[str, np.ndarray] = {}
        self.bars: dict[str, pg.BarGraphItem] = {}  # per phase, stacked in PHASE_COLUMNS order
        super().__init__()

    def draw(self) -> None:
        self.tasks = list(dict.fromkeys(point.task_id for point in self.points))
        position = {task_id: index for index, task_id in enumerate(self.tasks)}
        self.shares = {phase: np.zeros(len(self.tasks)) for phase in PHASE_COLUMNS}
        names = dict.fromkeys(self.tasks, "")
        for point in self.points:
            self.shares[point.phase][position[point.task_id]] = point.share
            names[point.task_id] = point.task
        base = np.zeros(len(self.tasks))
        x = np.arange(len(self.tasks))
        for phase in PHASE_COLUMNS:
            bars = pg.BarGraphItem(
                x=x,
                y0=base.copy(),
                height=self.shares[phase],
                width=BAR_WIDTH,
                brush=PHASE_COLORS[phase],
                pen=None,
            )
            self.plot.addItem(bars)
            self.add_legend(bars, PHASE_TITLES[phase])
            self.bars[phase] = bars
            base += self.shares[phase]
        self.categories.set_names(list(names.values()))
        self.plot.setXRange(-0.6, len(self.tasks) - 0.4, padding=0)
        self.plot.setYRange(0, 100, padding=0.02)
        self.plot.getAxis("left").setTicks([[(value, str(value)) for value in range(0, 101, 20)]])

    def summarize(self) -> str:
        seconds: dict[str, float] = dict.fromkeys(PHASE_COLUMNS, 0.0)
        for point in self.points:
            seconds[point.phase] += point.seconds
        named = {phase: value for phase, value in seconds.items() if phase != "other"}
        worst = max(named, key=lambda phase: named[phase])
        total = sum(seconds.values()) or 1.0
        return (
            f"{len(self.tasks):,} tasks · bottleneck overall: {PHASE_TITLES[worst]} "
            f"({seconds[worst] * 100 / total:.0f} % of all active time)"
        )

    def describe(self, x: float, y: float) -> str | None:
        index = round(x)
        if not (0 <= index < len(self.tasks) and abs(x - index) <= BAR_WIDTH / 2):
            return None
        top = 0.0
        for phase in PHASE_COLUMNS:
            top += self.shares[phase][index]
            if y <= top and self.shares[phase][index] > 0:
                point = next(
                    p for p in self.points if p.task_id == self.tasks[index] and p.phase == phase
                )
                title = PHASE_TITLES[phase]
                return f"{point.task} · {title}\n{point.share:.1f} % · {point.seconds:,.1f} s"
        return None
