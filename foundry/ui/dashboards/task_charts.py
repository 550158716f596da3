"""The charts of task runs: iterations and where their time goes (their criteria's scores are
drawn with the supervisors' confidence, decision_charts.py).

Every chart draws time bins of the metric aggregates (foundry.metrics.figures), so that it costs
the same over a hundred events or a million."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg

from foundry.metrics import PHASE_COLUMNS, PHASE_TITLES, DashboardFigures
from foundry.metrics import aggregates as agg
from foundry.ui.dashboards.chart import Chart
from foundry.ui.dashboards.palette import PHASE_COLORS, STATUS_COLORS

BAR_WIDTH = 0.7
BAR_SHARE = 0.8  # of a time bin a bar covers
ITERATIONS = STATUS_COLORS["running"]
PERCENT = (0.0, 100.0)
NO_TASKS = "No tasks yet:\nthey appear when `foundry task run FILE` runs one"


def _statuses(statuses: dict[str, int]) -> str:
    return " · ".join(f"{count:,} {status}" for status, count in sorted(statuses.items()))


class IterationsChart(Chart):
    title = "Iterations per task"
    columns = ("bin_start", "bin_seconds", "tasks", "iterations", "mean_iterations", "statuses")
    x_label = "Tasks by start time (mean per bin)"
    y_label = "Iterations"
    time_axis = True
    y_counts = True
    series = (agg.TASK_ITERATIONS,)
    nothing_yet = NO_TASKS

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
    series = (agg.PHASE_SECONDS,)
    nothing_yet = NO_TASKS

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
        self.fit_percent()

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
