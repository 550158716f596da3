"""The charts of model and tool calls: tokens, latency, resolutions by level, human waits."""

from __future__ import annotations

import statistics

import numpy as np
import pyqtgraph as pg

from foundry.metrics import LEVELS, HumanWaitPoint, ModelCallPoint, ResolutionPoint
from foundry.ui.dashboards.chart import Chart
from foundry.ui.dashboards.palette import (
    ALLOWED,
    APPROVAL_COLORS,
    DENIED,
    FIRST_TOKEN,
    INPUT_TOKENS,
    OUTPUT_TOKENS,
    TOTAL_TIME,
)
from foundry.ui.dashboards.task_charts import BAR_WIDTH, clock, threshold_line

FEW_POINTS = 200
LEVEL_TITLES = {
    "policy": "policy (L0)",
    "grant": "grant",
    "supervisor": "supervisor (L1)",
    "human": "human (L2)",
    "timeout": "timed out",
}


def _call_title(point: ModelCallPoint, number: int) -> str:
    where = f"{point.agent or point.session_id[:8]}" + (f" · {point.task}" if point.task else "")
    return f"call {number:,} · {where} · {point.model}"


class TokensChart(Chart):
    title = "Tokens per model call"
    series_name = "model_calls"
    point_type = ModelCallPoint
    x_label = "Model call (in time order)"
    y_label = "Tokens"

    def draw(self) -> None:
        x = np.arange(1, len(self.points) + 1)
        tokens_in = np.array([point.input_tokens for point in self.points])
        tokens_out = np.array([point.output_tokens for point in self.points])
        width = BAR_WIDTH if len(self.points) < 400 else 1.0
        below = pg.BarGraphItem(x=x, height=tokens_in, width=width, brush=INPUT_TOKENS, pen=None)
        above = pg.BarGraphItem(
            x=x, y0=tokens_in, height=tokens_out, width=width, brush=OUTPUT_TOKENS, pen=None
        )
        for item, name in ((below, "input"), (above, "output")):
            self.plot.addItem(item)
            self.add_legend(item, name)
        self.plot.setXRange(0.4, len(self.points) + 0.6, padding=0)
        self.plot.setYRange(0, max(int((tokens_in + tokens_out).max()), 1) * 1.1, padding=0)

    def summarize(self) -> str:
        tokens_in = sum(point.input_tokens for point in self.points)
        tokens_out = sum(point.output_tokens for point in self.points)
        return f"{len(self.points):,} calls · {tokens_in:,} in · {tokens_out:,} out"

    def describe(self, x: float, y: float) -> str | None:
        number = round(x)
        if not 1 <= number <= len(self.points):
            return None
        point = self.points[number - 1]
        return (
            f"{_call_title(point, number)}\n"
            f"{point.input_tokens:,} in · {point.output_tokens:,} out\n{clock(point.time)}"
        )


def _line(x: np.ndarray, y: list[float], color: str) -> pg.PlotDataItem:
    """A line with a dot per call while there are few; thin and downsampled when there are many
    (a wide antialiased pen over thousands of points takes seconds to paint)."""
    few = len(x) <= FEW_POINTS
    return pg.PlotDataItem(
        x,
        np.asarray(y, dtype=float),
        pen=pg.mkPen(color, width=1.6 if few else 1),
        symbol="o" if few else None,
        symbolSize=6,
        symbolBrush=color,
        symbolPen=None,
        antialias=few,
        autoDownsample=True,
        downsampleMethod="peak",
    )


class LatencyChart(Chart):
    title = "Latency per model call"
    series_name = "model_calls"
    point_type = ModelCallPoint
    x_label = "Model call (in time order)"
    y_label = "Seconds"

    def draw(self) -> None:
        x = np.arange(1, len(self.points) + 1, dtype=float)
        total = _line(x, [point.total_s for point in self.points], TOTAL_TIME)
        first = [
            (n, p.first_token_s)
            for n, p in zip(x, self.points, strict=True)
            if p.first_token_s is not None
        ]
        first_token = _line(
            np.array([n for n, _ in first]), [seconds for _, seconds in first], FIRST_TOKEN
        )
        for item, name in ((total, "whole call"), (first_token, "first token")):
            self.plot.addItem(item)
            self.add_legend(item, name)
        self.plot.setXRange(0.5, len(self.points) + 0.5, padding=0.01)
        self.plot.enableAutoRange(axis="y")
        self.plot.setLimits(yMin=0)

    def summarize(self) -> str:
        totals = sorted(point.total_s for point in self.points)
        p95 = totals[min(len(totals) - 1, round(0.95 * (len(totals) - 1)))]
        return f"{len(totals):,} calls · median {statistics.median(totals):.2f} s · p95 {p95:.2f} s"

    def describe(self, x: float, y: float) -> str | None:
        number = round(x)
        if not 1 <= number <= len(self.points):
            return None
        point = self.points[number - 1]
        first = "-" if point.first_token_s is None else f"{point.first_token_s:.2f} s"
        return (
            f"{_call_title(point, number)}\n"
            f"whole call {point.total_s:.2f} s · first token {first}\n{clock(point.time)}"
        )


class ResolutionsChart(Chart):
    title = "Tool calls resolved by level"
    series_name = "resolutions"
    point_type = ResolutionPoint
    x_label = "Level that decided"
    y_label = "Tool calls"

    def __init__(self) -> None:
        self.allowed = np.zeros(len(LEVELS), dtype=int)
        self.denied = np.zeros(len(LEVELS), dtype=int)
        super().__init__()

    def draw(self) -> None:
        self.allowed = np.array([self._count(level, True) for level in LEVELS])
        self.denied = np.array([self._count(level, False) for level in LEVELS])
        x = np.arange(len(LEVELS))
        allowed = pg.BarGraphItem(
            x=x, height=self.allowed, width=BAR_WIDTH, brush=ALLOWED, pen=None
        )
        denied = pg.BarGraphItem(
            x=x, y0=self.allowed, height=self.denied, width=BAR_WIDTH, brush=DENIED, pen=None
        )
        for item, name in ((allowed, "allowed"), (denied, "denied")):
            self.plot.addItem(item)
            self.add_legend(item, name)
        ticks = [(float(index), LEVEL_TITLES[level]) for index, level in enumerate(LEVELS)]
        self.plot.getAxis("bottom").setTicks([ticks])
        self.plot.setXRange(-0.6, len(LEVELS) - 0.4, padding=0)
        largest = int((self.allowed + self.denied).max())
        self.plot.setYRange(0, max(largest, 1) * 1.15, padding=0)
        self.count_axis(largest)

    def _count(self, level: str, allowed: bool) -> int:
        return sum(1 for point in self.points if point.level == level and point.allowed == allowed)

    def summarize(self) -> str:
        total = len(self.points)
        human = sum(1 for point in self.points if point.level == "human")
        return f"{total:,} decisions · {human * 100 / total:.1f} % needed a human"

    def describe(self, x: float, y: float) -> str | None:
        index = round(x)
        if not (0 <= index < len(LEVELS) and abs(x - index) <= BAR_WIDTH / 2):
            return None
        allowed, denied = int(self.allowed[index]), int(self.denied[index])
        return f"{LEVEL_TITLES[LEVELS[index]]}: {allowed:,} allowed · {denied:,} denied"


class HumanWaitChart(Chart):
    title = "Human wait per approval"
    series_name = "human_waits"
    point_type = HumanWaitPoint
    x_label = "Time resolved"
    y_label = "Wait (s)"
    time_axis = True

    def draw(self) -> None:
        for status, color in APPROVAL_COLORS.items():
            chosen = [point for point in self.points if point.status == status]
            if not chosen:
                continue
            times = [point.time.timestamp() for point in chosen]
            waits = [point.waited_s for point in chosen]
            self.add_dots(times, waits, color, status.replace("_", " "))
        median = statistics.median(point.waited_s for point in self.points)
        line = threshold_line(median, f"median {median:.1f} s", 0)
        self.plot.addItem(line)
        self.plot.enableAutoRange()
        self.plot.setLimits(yMin=0)

    def summarize(self) -> str:
        waits = [point.waited_s for point in self.points]
        median = statistics.median(waits)
        return f"{len(waits):,} approvals · median {median:.1f} s · longest {max(waits):.1f} s"

    def describe(self, x: float, y: float) -> str | None:
        xs = [point.time.timestamp() for point in self.points]
        index = self.nearest(xs, [point.waited_s for point in self.points], x, y)
        if index is None:
            return None
        point = self.points[index]
        where = point.agent + (f" · {point.task}" if point.task else "")
        status = point.status.replace("_", " ")
        return (
            f"approval {point.approval_id} · {where}\n"
            f"{status} by {point.resolved_by} after {point.waited_s:.1f} s\n{clock(point.time)}"
        )
