"""The charts of supervision over time: tool-call decisions by level, escalations to a person,
needless questions, and the L1 supervisor's agreement with people (shadow mode).

Each is drawn from the time bins of the aggregates (foundry.metrics.figures), as every chart."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QPalette

from foundry.metrics import AGREEMENTS, LEVELS, QUESTION_OUTCOMES, TO_A_PERSON, DashboardFigures
from foundry.metrics import aggregates as agg
from foundry.metrics.figures import TimeBin
from foundry.ui.dashboards.call_charts import MEAN_LINE as OVERALL_LINE
from foundry.ui.dashboards.chart import Chart
from foundry.ui.dashboards.decision_charts import LEVEL_TITLES, NO_DECISIONS, PERCENT
from foundry.ui.dashboards.palette import (
    AGREED,
    ESCALATION,
    L1_ESCALATION,
    LET_THROUGH,
    LEVEL_COLORS,
    QUESTION_COLORS,
)
from foundry.ui.dashboards.task_charts import BAR_SHARE
from foundry.ui.theme import quiet
from foundry.words import counted

NO_QUESTIONS = (
    "No questions to people yet:\nthey appear when a call waits for a person in the inbox"
)
NO_VERDICTS = (
    "No shadow verdicts yet. Shadow mode is off by default:\n"
    "turn it on in the agent editor, in the policy supervisor's settings"
)
QUESTION_NAMES = {  # in the legend: short, so that its entries sit side by side
    "unchanged": "needless",
    "edited": "edited",
    "denied": "denied",
    "flagged": "flagged",
    "timed_out": "timed out",
}
LEVEL_NAMES = {
    "policy": "policy",
    "grant": "grant",
    "supervisor": "L1",
    "human": "person",
    "timeout": "timed out",
}
QUESTION_WORDS = {
    "unchanged": "needless (approved as asked)",
    "edited": "approved edited",
    "denied": "denied",
    "flagged": "flagged",
    "timed_out": "timed out",
}
AGREEMENT_WORDS = {
    "agreed": "agreed",
    "let_through": "let through what a person denied or changed",
    "denied_approved": "denied what a person approved",
    "escalated_approved": "asked for a person, who approved",
    "escalated_denied": "asked for a person, who denied",
}
TOOL_CALL_OUTCOMES = ("allowed", "denied")  # of a tool call's decision (not of a sending-on)


def label_counts(b: TimeBin) -> dict[str, int]:
    return {label: figure.count for label, figure in b.by_label.items()}


def share(part: int, whole: int) -> float:
    return part * 100 / whole if whole else 0.0


def draw_stack(
    chart: Chart,
    names: Sequence[str],
    heights: np.ndarray,
    colors: Mapping[str, str],
    titles: Mapping[str, str],
) -> None:
    """Bars stacked per time bin (the chart's rows' bin starts), a name each (rows of `heights`
    in the order of `names`), bottom first."""
    x = np.array([chart.bin_center(row[0]) for row in chart.rows])
    base = np.zeros(len(x))
    for name, height in zip(names, heights, strict=True):
        bars = chart.draw_bars(
            name,
            x=x,
            y0=base.copy(),
            height=height,
            width=chart.figures.bin_seconds * BAR_SHARE,
            brush=colors[name],
            pen=None,
        )
        chart.add_legend(bars, titles[name])
        base = base + height
    chart.fit_times()


class DecisionsOverTimeChart(Chart):
    title = "Tool-call decisions by level over time"
    columns = ("bin_start", "bin_seconds", *LEVELS)
    x_label = "Time decided"
    y_label = "Decisions per bin"
    time_axis = True
    y_counts = True
    series = (agg.RESOLUTION,)
    nothing_yet = NO_DECISIONS

    def rows_of(self, figures: DashboardFigures) -> list[tuple[Any, ...]]:
        rows = []
        for b in figures.resolution_bins:
            by_level = dict.fromkeys(LEVELS, 0)
            for label, count in b.counts.items():
                level = label.partition("/")[0]
                if level in by_level:
                    by_level[level] += count
            if any(by_level.values()):
                rows.append((b.start, figures.bin_seconds, *by_level.values()))
        return rows

    def counts(self) -> np.ndarray:
        """The decisions of each level (a row each, in LEVELS order) in each bin."""
        return np.array([row[2:] for row in self.rows], dtype=int).T

    def draw(self) -> None:
        counts = self.counts()
        draw_stack(self, LEVELS, counts, LEVEL_COLORS, LEVEL_NAMES)
        self.fit_counts(int(counts.sum(axis=0).max()))

    def summarize(self) -> str:
        counts = self.counts()
        total = int(counts.sum())
        people = sum(int(counts[LEVELS.index(level)].sum()) for level in TO_A_PERSON)
        return f"{counted(total, 'decision')} · {people:,} waited for a person"

    def describe(self, x: float, y: float) -> str | None:
        index = self.bin_at([row[0] for row in self.rows], x)
        if index is None:
            return None
        row = self.rows[index]
        told = " · ".join(
            f"{LEVEL_TITLES[level]} {count:,}"
            for level, count in zip(LEVELS, row[2:], strict=True)
            if count
        )
        return f"{counted(sum(row[2:]), 'decision')}: {told}\n{self.bin_span(row[0])}"


class EscalationRateChart(Chart):
    title = "Tool calls sent to a person"
    columns = (
        "bin_start",
        "bin_seconds",
        "tool_calls",
        "to_a_person",
        "sent_on_by_l1",
        "to_a_person_percent",
        "sent_on_by_l1_percent",
    )
    x_label = "Time decided"
    y_label = "Tool calls (%)"
    time_axis = True
    empty_y = PERCENT
    series = (agg.RESOLUTION,)
    nothing_yet = NO_DECISIONS

    def rows_of(self, figures: DashboardFigures) -> list[tuple[Any, ...]]:
        rows = []
        for b in figures.resolution_bins:
            counts = b.counts
            calls = sum(counts.get(f"{lv}/{o}", 0) for lv in LEVELS for o in TOOL_CALL_OUTCOMES)
            if not calls:
                continue
            people = sum(
                counts.get(f"{lv}/{o}", 0) for lv in TO_A_PERSON for o in TOOL_CALL_OUTCOMES
            )
            sent_on = counts.get("supervisor/escalated", 0)
            rows.append(
                (
                    b.start,
                    figures.bin_seconds,
                    calls,
                    people,
                    sent_on,
                    share(people, calls),
                    share(sent_on, calls),
                )
            )
        return rows

    def draw(self) -> None:
        x = [self.bin_center(row[0]) for row in self.rows]
        self.add_dots(x, [row[5] for row in self.rows], ESCALATION, "to a person")
        self.add_dots(x, [row[6] for row in self.rows], L1_ESCALATION, "sent on by L1")
        overall = self.overall()[0]
        self.add_threshold(overall, f"overall {overall:.1f} %", 0, OVERALL_LINE)
        self.fit_times()
        self.fit_percent()

    def overall(self) -> tuple[float, float, int]:
        """The shares (%) of all the calls shown that went to a person, that L1 sent on, and
        how many calls."""
        calls = sum(row[2] for row in self.rows)
        people = sum(row[3] for row in self.rows)
        sent_on = sum(row[4] for row in self.rows)
        return share(people, calls), share(sent_on, calls), calls

    def summarize(self) -> str:
        people, sent_on, calls = self.overall()
        return (
            f"{people:.1f} % of {counted(calls, 'tool call')} went to a person · "
            f"{sent_on:.1f} % sent on by L1"
        )

    def describe(self, x: float, y: float) -> str | None:
        index = self.bin_at([row[0] for row in self.rows], x)
        if index is None:
            return None
        start, _, calls, people, sent_on, person_share, l1_share = self.rows[index]
        return (
            f"{people:,} of {counted(calls, 'tool call')} to a person ({person_share:.1f} %)\n"
            f"{sent_on:,} sent on by L1 ({l1_share:.1f} %)\n{self.bin_span(start)}"
        )


class NeedlessQuestionsChart(Chart):
    title = "Needless questions to people"
    columns = ("bin_start", "bin_seconds", "questions", *QUESTION_OUTCOMES, "needless_percent")
    x_label = "Time answered"
    y_label = "Questions (%)"
    time_axis = True
    empty_y = PERCENT
    series = (agg.QUESTIONS,)
    nothing_yet = NO_QUESTIONS

    def rows_of(self, figures: DashboardFigures) -> list[tuple[Any, ...]]:
        rows = []
        for b in figures.questions:
            counts = label_counts(b)
            outcomes = [counts.get(outcome, 0) for outcome in QUESTION_OUTCOMES]
            total = sum(outcomes)
            rows.append((b.start, figures.bin_seconds, total, *outcomes, share(outcomes[0], total)))
        return rows

    def shares(self) -> np.ndarray:
        """The share (%) of each outcome (a row each, in QUESTION_OUTCOMES order) in each bin."""
        counts = np.array([row[3:-1] for row in self.rows], dtype=float).T
        return counts * 100 / counts.sum(axis=0)

    def draw(self) -> None:
        draw_stack(self, QUESTION_OUTCOMES, self.shares(), QUESTION_COLORS, QUESTION_NAMES)
        self.fit_percent()

    def summarize(self) -> str:
        questions = sum(row[2] for row in self.rows)
        needless = sum(row[3] for row in self.rows)
        return f"{counted(questions, 'question')} · {share(needless, questions):.1f} % needless"

    def describe(self, x: float, y: float) -> str | None:
        index = self.bin_at([row[0] for row in self.rows], x)
        if index is None:
            return None
        row = self.rows[index]
        told = " · ".join(
            f"{count:,} {QUESTION_WORDS[outcome]}"
            for outcome, count in zip(QUESTION_OUTCOMES, row[3:-1], strict=True)
            if count
        )
        return (
            f"{counted(row[2], 'question')} · {row[-1]:.1f} % needless\n{told}\n"
            f"{self.bin_span(row[0])}"
        )


class AgreementChart(Chart):
    title = "Supervisor (L1) agreement with people"
    columns = (
        "bin_start",
        "bin_seconds",
        "verdicts",
        *AGREEMENTS,
        "agreed_percent",
        "let_through_percent",
    )
    x_label = "Time decided by a person"
    y_label = "Verdicts (%)"
    time_axis = True
    empty_y = PERCENT
    series = (agg.AGREEMENT,)
    nothing_yet = NO_VERDICTS

    def rows_of(self, figures: DashboardFigures) -> list[tuple[Any, ...]]:
        rows = []
        for b in figures.agreements:
            counts = label_counts(b)
            kinds = [counts.get(agreement, 0) for agreement in AGREEMENTS]
            total = sum(kinds)
            agreed, let_through = kinds[0], kinds[1]
            rows.append(
                (
                    b.start,
                    figures.bin_seconds,
                    total,
                    *kinds,
                    share(agreed, total),
                    share(let_through, total),
                )
            )
        return rows

    def let_through(self) -> int:
        return sum(row[4] for row in self.rows)

    def marks(self) -> list[float]:
        """The times of the bins marked for their unsafe verdicts."""
        item = self._kept.get("let through marks")
        if not isinstance(item, pg.ScatterPlotItem) or not item.isVisible():
            return []
        return [float(value) for value in item.getData()[0]]

    def draw(self) -> None:
        x = np.array([self.bin_center(row[0]) for row in self.rows])
        shares = np.array([row[-1] for row in self.rows])
        # the unsafe verdicts as red bars from the axis up, under the dots of agreement, and a
        # red mark on each bin that has one: a share of 1 % would be a bar too thin to see
        unsafe = self.draw_bars(
            "let through",
            x=x,
            height=shares,
            width=self.figures.bin_seconds * BAR_SHARE,
            brush=LET_THROUGH,
            pen=None,
        )
        marks = self.kept("let through marks", lambda: pg.ScatterPlotItem(antialias=True))
        marked = shares > 0
        marks.setData(
            x=x[marked],
            y=shares[marked],
            symbol="t1",  # a triangle pointing up
            size=11,
            brush=pg.mkBrush(LET_THROUGH),
            pen=pg.mkPen(self.ink.outline, width=0.8),
        )
        self.add_dots(list(x), [row[-2] for row in self.rows], AGREED, "agreed")
        self.add_legend(unsafe, "let through what a person denied")
        overall = self.agreed()
        self.add_threshold(overall, f"overall {overall:.1f} %", 0, OVERALL_LINE)
        self.fit_times()
        self.fit_percent()

    def agreed(self) -> float:
        """The share (%) of all the verdicts shown that agreed with the person."""
        return share(sum(row[3] for row in self.rows), sum(row[2] for row in self.rows))

    def summarize(self) -> str:
        verdicts = sum(row[2] for row in self.rows)
        head = f"{counted(verdicts, 'verdict')} · {self.agreed():.1f} % agreed"
        let_through = self.let_through()
        return f"{head} · {let_through:,} let through" if let_through else head

    def show_figures(self, figures: DashboardFigures) -> None:
        super().show_figures(figures)
        # the unsafe verdicts said in red where they are (the summary), whatever the theme: in
        # full red, not the half-transparent one a quiet label's colour is made of
        unsafe = bool(self.rows) and self.let_through() > 0
        self.summary.setStyleSheet("color: #C62828; font-weight: bold;" if unsafe else "")
        if unsafe:
            self.summary.setForegroundRole(QPalette.ColorRole.WindowText)
        else:
            quiet(self.summary)

    def describe(self, x: float, y: float) -> str | None:
        index = self.bin_at([row[0] for row in self.rows], x)
        if index is None:
            return None
        row = self.rows[index]
        told = "\n".join(
            f"{count:,} {AGREEMENT_WORDS[agreement]}"
            for agreement, count in zip(AGREEMENTS, row[3:-2], strict=True)
            if count
        )
        head = f"{counted(row[2], 'verdict')} · {row[-2]:.1f} % agreed"
        return f"{head}\n{told}\n{self.bin_span(row[0])}"
