"""The charts of model calls and approvals: tokens, latency, human waits."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt

from foundry.metrics import DashboardFigures
from foundry.metrics import aggregates as agg
from foundry.ui.dashboards.chart import Chart
from foundry.ui.dashboards.palette import (
    APPROVAL_COLORS,
    FIRST_TOKEN,
    INPUT_TOKENS,
    OUTPUT_TOKENS,
    TOTAL_TIME,
)
from foundry.ui.dashboards.task_charts import BAR_SHARE
from foundry.words import counted

FEW_POINTS = 200
MEAN_LINE = Qt.PenStyle.DashLine
NO_CALLS = "No model calls yet:\nthey appear when a chat or task calls a model"


class TokensChart(Chart):
    title = "Tokens of model calls"
    columns = ("bin_start", "bin_seconds", "calls", "input_tokens", "output_tokens")
    x_label = "Time of the call"
    y_label = "Tokens per bin"
    time_axis = True
    y_counts = True
    series = (agg.INPUT_TOKENS,)
    nothing_yet = NO_CALLS

    def rows_of(self, figures: DashboardFigures) -> list[tuple[Any, ...]]:
        output = {b.start: b.merged().total for b in figures.output_tokens}
        rows = []
        for b in figures.input_tokens:
            tokens_in = b.merged()
            rows.append(
                (
                    b.start,
                    figures.bin_seconds,
                    tokens_in.count,
                    int(tokens_in.total),
                    int(output[b.start]),
                )
            )
        return rows

    def draw(self) -> None:
        x = np.array([self.bin_center(row[0]) for row in self.rows])
        tokens_in = np.array([row[3] for row in self.rows])
        tokens_out = np.array([row[4] for row in self.rows])
        width = self.figures.bin_seconds * BAR_SHARE
        below = self.draw_bars(
            "input", x=x, height=tokens_in, width=width, brush=INPUT_TOKENS, pen=None
        )
        above = self.draw_bars(
            "output",
            x=x,
            y0=tokens_in,
            height=tokens_out,
            width=width,
            brush=OUTPUT_TOKENS,
            pen=None,
        )
        self.add_legend(below, "input")
        self.add_legend(above, "output")
        self.fit_times()
        self.fit_counts(float((tokens_in + tokens_out).max()))

    def summarize(self) -> str:
        calls = sum(row[2] for row in self.rows)
        tokens_in = sum(row[3] for row in self.rows)
        tokens_out = sum(row[4] for row in self.rows)
        return f"{calls:,} calls · {tokens_in:,} in · {tokens_out:,} out"

    def describe(self, x: float, y: float) -> str | None:
        index = self.bin_at([row[0] for row in self.rows], x)
        if index is None:
            return None
        start, _, calls, tokens_in, tokens_out = self.rows[index]
        return (
            f"{counted(calls, 'call')} · {tokens_in:,} in · {tokens_out:,} out\n"
            f"{self.bin_span(start)}"
        )


def _line(chart: Chart, key: str, x: np.ndarray, y: list[float], color: str) -> pg.PlotDataItem:
    """A line with a dot per bin while there are few; thin when there are many."""
    few = len(x) <= FEW_POINTS
    line = chart.kept(key, pg.PlotDataItem)
    line.setData(
        x,
        np.asarray(y, dtype=float),
        pen=pg.mkPen(color, width=1.6 if few else 1),
        symbol="o" if few else None,
        symbolSize=6,
        symbolBrush=color,
        symbolPen=None,
        antialias=few,
    )
    return line


class LatencyChart(Chart):
    title = "Latency of model calls"
    columns = (
        "bin_start",
        "bin_seconds",
        "calls",
        "mean_s",
        "longest_s",
        "first_token_calls",
        "mean_first_token_s",
    )
    x_label = "Time of the call (mean per bin)"
    y_label = "Seconds"
    time_axis = True
    series = (agg.CALL_SECONDS,)
    nothing_yet = NO_CALLS

    def rows_of(self, figures: DashboardFigures) -> list[tuple[Any, ...]]:
        first = {b.start: b.merged() for b in figures.first_token_seconds}
        rows = []
        for b in figures.call_seconds:
            whole, token = b.merged(), first.get(b.start)
            rows.append(
                (
                    b.start,
                    figures.bin_seconds,
                    whole.count,
                    whole.mean,
                    whole.high,
                    token.count if token else 0,
                    token.mean if token else None,
                )
            )
        return rows

    def draw(self) -> None:
        x = np.array([self.bin_center(row[0]) for row in self.rows])
        total = _line(self, "whole call", x, [row[3] for row in self.rows], TOTAL_TIME)
        timed = [(center, row[6]) for center, row in zip(x, self.rows, strict=True) if row[6]]
        means = [mean for _, mean in timed]
        times = np.array([center for center, _ in timed])
        first_token = _line(self, "first token", times, means, FIRST_TOKEN)
        self.add_legend(total, "whole call")
        self.add_legend(first_token, "first token")
        self.fit_times()
        self.fit_values(max(max(row[3] for row in self.rows), max(means, default=0.0)))
        self.plot.setLimits(yMin=0)

    def summarize(self) -> str:
        calls = sum(row[2] for row in self.rows)
        mean = sum(row[2] * row[3] for row in self.rows) / calls
        longest = max(row[4] for row in self.rows)
        return f"{calls:,} calls · mean {mean:.2f} s · longest {longest:.2f} s"

    def describe(self, x: float, y: float) -> str | None:
        index = self.bin_at([row[0] for row in self.rows], x)
        if index is None:
            return None
        start, _, calls, mean, longest, _, first = self.rows[index]
        first_text = "-" if first is None else f"{first:.2f} s"
        return (
            f"{counted(calls, 'call')} · whole call {mean:.2f} s (longest {longest:.2f} s)\n"
            f"first token {first_text}\n{self.bin_span(start)}"
        )


class HumanWaitChart(Chart):
    title = "Human wait per approval"
    columns = (
        "bin_start",
        "bin_seconds",
        "status",
        "approvals",
        "mean_s",
        "shortest_s",
        "longest_s",
    )
    x_label = "Time resolved (mean per bin)"
    y_label = "Wait (s)"
    time_axis = True
    series = (agg.HUMAN_WAIT,)
    nothing_yet = "No approvals yet:\nthey appear when a call waits for a person in the inbox"

    def rows_of(self, figures: DashboardFigures) -> list[tuple[Any, ...]]:
        return [
            (b.start, figures.bin_seconds, status, f.count, f.mean, f.low, f.high)
            for b in figures.human_waits
            for status, f in b.by_label.items()
        ]

    def draw(self) -> None:
        for status, color in APPROVAL_COLORS.items():
            chosen = [row for row in self.rows if row[2] == status]
            if chosen:
                times = [self.bin_center(row[0]) for row in chosen]
                self.add_dots(times, [row[4] for row in chosen], color, status.replace("_", " "))
        self.add_threshold(self._mean(), f"mean {self._mean():.1f} s", 0, MEAN_LINE)
        self.fit_times()
        self.fit_values(max(row[4] for row in self.rows))
        self.plot.setLimits(yMin=0)

    def _mean(self) -> float:
        return sum(row[3] * row[4] for row in self.rows) / sum(row[3] for row in self.rows)

    def summarize(self) -> str:
        approvals = sum(row[3] for row in self.rows)
        longest = max(row[6] for row in self.rows)
        mean = self._mean()
        return f"{counted(approvals, 'approval')} · mean {mean:.1f} s · longest {longest:.1f} s"

    def describe(self, x: float, y: float) -> str | None:
        xs = [self.bin_center(row[0]) for row in self.rows]
        index = self.nearest(xs, [row[4] for row in self.rows], x, y)
        if index is None:
            return None
        start, _, status, count, mean, low, high = self.rows[index]
        return (
            f"{counted(count, 'approval')} {status.replace('_', ' ')} · mean {mean:.1f} s\n"
            f"from {low:.1f} to {high:.1f} s\n{self.bin_span(start)}"
        )
