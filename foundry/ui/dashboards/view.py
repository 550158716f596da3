"""The dashboards tab: filters on top, the charts in a grid below (view only)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import TypeVar

from PySide6.QtCore import QDateTime, QRect, QSize, Signal
from PySide6.QtGui import QKeySequence, QShowEvent
from PySide6.QtWidgets import (
    QComboBox,
    QDateTimeEdit,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from foundry.metrics import DashboardFigures, MetricsFilter, TaskChoice
from foundry.ui.dashboards.call_charts import HumanWaitChart, LatencyChart, TokensChart
from foundry.ui.dashboards.chart import Chart
from foundry.ui.dashboards.decision_charts import (
    ConfidenceHistogramChart,
    ConfidenceTimeChart,
    DecisionsChart,
)
from foundry.ui.dashboards.supervision_charts import (
    AgreementChart,
    DecisionsOverTimeChart,
    EscalationRateChart,
    NeedlessQuestionsChart,
)
from foundry.ui.dashboards.task_charts import IterationsChart, PhaseSharesChart
from foundry.ui.theme import quiet

CUSTOM = "custom"
TIME_RANGES: dict[str, timedelta | None] = {
    "All time": None,
    "Last 15 minutes": timedelta(minutes=15),
    "Last hour": timedelta(hours=1),
    "Last 24 hours": timedelta(days=1),
    "Last 7 days": timedelta(days=7),
    "Custom range": None,
}
EDIT_FORMAT = "yyyy-MM-dd HH:mm"
# the charts by section, in the order they are laid out (two a row)
SECTIONS: dict[str, tuple[type[Chart], ...]] = {
    "Supervision": (
        ConfidenceTimeChart,
        ConfidenceHistogramChart,
        DecisionsOverTimeChart,
        EscalationRateChart,
        NeedlessQuestionsChart,
        AgreementChart,
        DecisionsChart,
        HumanWaitChart,
    ),
    "Tasks and model calls": (IterationsChart, PhaseSharesChart, TokensChart, LatencyChart),
}
CHART_KINDS: tuple[type[Chart], ...] = tuple(kind for kinds in SECTIONS.values() for kind in kinds)
C = TypeVar("C", bound=Chart)


def _combo(tip: str, width: int) -> QComboBox:
    combo = QComboBox()
    combo.setToolTip(tip)
    combo.setMinimumWidth(width)
    combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
    return combo


def _time_edit(tip: str) -> QDateTimeEdit:
    edit = QDateTimeEdit()
    edit.setDisplayFormat(EDIT_FORMAT)
    edit.setCalendarPopup(True)
    edit.setToolTip(tip)
    edit.setVisible(False)  # shown for a custom range only
    return edit


class DashboardView(QWidget):
    filters_changed = Signal()
    refresh_requested = Signal()
    export_all_requested = Signal()
    shown = Signal()

    def __init__(self, charts: Sequence[Chart] = ()) -> None:
        """`charts`: one of each of CHART_KINDS, built beforehand (see `build_view`); made here
        when not given."""
        super().__init__()
        made = {type(chart): chart for chart in charts or [kind() for kind in CHART_KINDS]}
        self.agent = _combo("Only the chats and tasks of this agent", 150)
        self.task = _combo("Only this task and the chats it consulted", 190)
        self.time_range = _combo("Only what happened in this time range", 130)
        self.time_range.addItems(list(TIME_RANGES))
        self.since = _time_edit("From (local time)")
        self.until = _time_edit("Up to (local time)")
        self.to_label = QLabel("to")
        self.to_label.setVisible(False)
        self.refresh = QPushButton("Refresh")
        self.refresh.setShortcut(QKeySequence("F5"))
        self.refresh.setToolTip("Read new events now (F5); the charts also follow events live")
        self.export_all = QPushButton("Export All…")
        self.export_all.setShortcut(QKeySequence("Ctrl+Shift+E"))
        self.export_all.setToolTip("Save every chart as PNG and every series as CSV (Ctrl+Shift+E)")
        self.status = QLabel("Loading…")
        quiet(self.status)
        self.confidence_time = _chart(made, ConfidenceTimeChart)
        self.confidence_histogram = _chart(made, ConfidenceHistogramChart)
        self.iterations = _chart(made, IterationsChart)
        self.phase_shares = _chart(made, PhaseSharesChart)
        self.tokens = _chart(made, TokensChart)
        self.latency = _chart(made, LatencyChart)
        self.resolutions = _chart(made, DecisionsChart)
        self.human_waits = _chart(made, HumanWaitChart)
        self.decisions_over_time = _chart(made, DecisionsOverTimeChart)
        self.escalations = _chart(made, EscalationRateChart)
        self.questions = _chart(made, NeedlessQuestionsChart)
        self.agreements = _chart(made, AgreementChart)
        self._made = made
        self.data_span: tuple[datetime, datetime] | None = None  # of the last series shown
        self._custom_range_set = False
        self._choices: tuple[tuple[str, ...], tuple[TaskChoice, ...]] = ((), ())
        self.agent.addItem("All agents", "")
        self.task.addItem("All tasks", "")
        self._layout()
        self.agent.currentIndexChanged.connect(self.filters_changed)
        self.task.currentIndexChanged.connect(self.filters_changed)
        self.time_range.currentTextChanged.connect(self._time_range_chosen)
        self.since.editingFinished.connect(self.filters_changed)
        self.until.editingFinished.connect(self.filters_changed)
        self.refresh.clicked.connect(self.refresh_requested)
        self.export_all.clicked.connect(self.export_all_requested)

    def _layout(self) -> None:
        filters = QHBoxLayout()
        for label, widget in (
            ("Agent", self.agent),
            ("Task", self.task),
            ("Time", self.time_range),
        ):
            filters.addWidget(QLabel(label))
            filters.addWidget(widget)
            filters.addSpacing(6)
        filters.addWidget(self.since)
        filters.addWidget(self.to_label)
        filters.addWidget(self.until)
        filters.addStretch(1)
        filters.addWidget(self.status)
        filters.addSpacing(8)
        filters.addWidget(self.refresh)
        filters.addWidget(self.export_all)
        grid = QGridLayout()
        grid.setSpacing(10)
        row = 0
        for title, kinds in SECTIONS.items():
            grid.addWidget(_heading(title, first=row == 0), row, 0, 1, 2)
            for index, kind in enumerate(kinds):
                grid.addWidget(self._made[kind], row + 1 + index // 2, index % 2)
            row += 1 + (len(kinds) + 1) // 2
        content = QWidget()
        content.setLayout(grid)
        self.scroller = QScrollArea()
        self.scroller.setWidgetResizable(True)
        self.scroller.setWidget(content)
        layout = QVBoxLayout(self)
        layout.addLayout(filters)
        layout.addWidget(self.scroller, 1)

    def charts(self) -> list[Chart]:
        """Every chart, in the order of the sections."""
        return [self._made[kind] for kind in CHART_KINDS]

    # -- filters --------------------------------------------------------------------------------

    def current_filter(self, now: datetime | None = None) -> MetricsFilter:
        agent, task = self.agent.currentData(), self.task.currentData()
        since, until = self._time_bounds(now or datetime.now(UTC))
        return MetricsFilter(
            agents=frozenset({agent} if agent else ()),
            task_ids=frozenset({task} if task else ()),
            since=since,
            until=until,
        )

    def _time_bounds(self, now: datetime) -> tuple[datetime | None, datetime | None]:
        choice = self.time_range.currentText()
        if choice == "Custom range":  # the fields show minutes: "to" takes in its whole minute
            return _moment(self.since), _moment(self.until) + timedelta(minutes=1, microseconds=-1)
        span = TIME_RANGES[choice]
        return (now - span, None) if span is not None else (None, None)

    def _time_range_chosen(self, choice: str) -> None:
        custom = choice == "Custom range"
        for widget in (self.since, self.to_label, self.until):
            widget.setVisible(custom)
        if custom and not self._custom_range_set:
            since, until = self.data_span or (
                datetime.now(UTC) - timedelta(days=1),
                datetime.now(UTC),
            )
            self.set_custom_range(since, until)
            return
        self.filters_changed.emit()

    def set_custom_range(self, since: datetime, until: datetime) -> None:
        """Choose "Custom range" from `since` to `until` (whole minutes, as the fields show)."""
        self._custom_range_set = True
        for edit, moment in ((self.since, since), (self.until, until)):
            edit.blockSignals(True)
            edit.setDateTime(QDateTime.fromSecsSinceEpoch(int(moment.timestamp())))
            edit.blockSignals(False)
        if self.time_range.currentText() != "Custom range":
            self.time_range.setCurrentText("Custom range")
        else:
            self.filters_changed.emit()

    def set_choices(self, agents: tuple[str, ...], tasks: tuple[TaskChoice, ...]) -> None:
        """Fill the agent and task lists, keeping what is chosen."""
        if (agents, tasks) == self._choices:
            return  # (the same tuples again, as a rule: compared at once)
        self._choices = (agents, tasks)
        _refill(self.agent, "All agents", [(agent, agent) for agent in agents])
        _refill(
            self.task,
            "All tasks",
            [
                (f"{task.name}  ·  {task.started_at.astimezone():%m-%d %H:%M}", task.task_id)
                for task in tasks
            ],
        )

    # -- data -----------------------------------------------------------------------------------

    def show_figures(self, figures: DashboardFigures, status: str) -> None:
        self.show_overview(figures, status)
        for chart in self.charts():
            chart.show_figures(figures)

    def show_overview(self, figures: DashboardFigures, status: str) -> None:
        """What the filters can choose from, and the status line; not the charts."""
        self.set_choices(figures.agents, figures.tasks)
        self.data_span = figures.span() or self.data_span
        self.status.setText(status)
        self.status.setStyleSheet("")  # quiet again after a problem

    def show_problem(self, text: str) -> None:
        self.status.setText(text)
        self.status.setStyleSheet("color: #C62828;")

    async def lay_out_hidden(self, size: QSize) -> None:
        """Lay out and paint the hidden view at `size`, a chart at a time (the GUI thread
        handles its events between two), so that showing it at that size paints once, from
        what the plots keep: its first paint would otherwise lay out the eight plots, measure
        their axes' labels, fit the axes to them and paint again."""
        self.resize(size)
        self.grab(QRect(0, 0, 1, 1))  # laid out down to each plot (and a pixel painted)
        for _ in range(2):  # the first paint fits the axes to their labels, the second keeps
            for chart in self.charts():
                await asyncio.sleep(0)
                chart.grab()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.shown.emit()


async def build_view() -> DashboardView:
    """The view, a chart at a time: a chart takes tens of milliseconds to build on the GUI
    thread, which handles its events between two."""
    charts = []
    for kind in CHART_KINDS:
        charts.append(kind())
        await asyncio.sleep(0)
    return DashboardView(charts)


def _heading(title: str, first: bool) -> QLabel:
    """A section's title over its charts (a little space above it, but for the first)."""
    label = QLabel(title)
    font = label.font()
    font.setPointSizeF(font.pointSizeF() + 2)
    font.setBold(True)
    label.setFont(font)
    label.setContentsMargins(2, 0 if first else 12, 0, 0)
    return label


def _chart(made: Mapping[type[Chart], Chart], kind: type[C]) -> C:
    chart = made[kind]
    assert isinstance(chart, kind)
    return chart


def _moment(edit: QDateTimeEdit) -> datetime:
    return datetime.fromtimestamp(edit.dateTime().toSecsSinceEpoch(), UTC)


def _refill(combo: QComboBox, everything: str, entries: list[tuple[str, str]]) -> None:
    shown = [(combo.itemText(i), combo.itemData(i)) for i in range(1, combo.count())]
    if shown == entries:
        return  # unchanged: refilling thousands of tasks every second would cost the GUI thread
    chosen = combo.currentData()
    combo.blockSignals(True)
    combo.clear()
    combo.addItem(everything, "")
    for text, data in entries:
        combo.addItem(text, data)
    combo.setCurrentIndex(max(combo.findData(chosen), 0))
    combo.blockSignals(False)
