"""The figures the dashboards draw, read from the metric aggregates: time bins, tasks, counts."""

from __future__ import annotations

import math
from collections import defaultdict
from datetime import UTC, datetime
from typing import Protocol

from pydantic import BaseModel, ConfigDict

from foundry.metrics import aggregates as agg
from foundry.metrics.aggregates import RESOLUTIONS, MemoryAggregates, Tally
from foundry.metrics.loader import task_and_chat_events
from foundry.metrics.series import TaskChoice
from foundry.metrics.stored import StoredAggregates
from foundry.metrics.terms import TASK_CHECKS, MetricsFilter
from foundry.store import Store

Bins = dict[int, dict[str, Tally]]  # figures by bucket, then label
MAX_BUCKETS = 2000  # stored bins read per series and label at most: the finest resolution that fits
DISPLAY_BINS = 240  # bins drawn along a time axis at most


class Figure(BaseModel):
    """Count, sum, least and greatest of the values of one bin."""

    model_config = ConfigDict(frozen=True)

    count: int
    total: float
    low: float
    high: float

    @property
    def mean(self) -> float:
        return self.total / self.count if self.count else 0.0


class TimeBin(BaseModel):
    """The figures of one time bin, by label (level, model, status)."""

    model_config = ConfigDict(frozen=True)

    start: datetime
    by_label: dict[str, Figure]

    def merged(self) -> Figure:
        figures = self.by_label.values()
        return Figure.model_construct(
            count=sum(figure.count for figure in figures),
            total=sum(figure.total for figure in figures),
            low=min((figure.low for figure in figures), default=math.inf),
            high=max((figure.high for figure in figures), default=-math.inf),
        )


class CountBin(BaseModel):
    """How many figures one time bin holds, by label (no sums: cheaper to make by the
    thousand)."""

    model_config = ConfigDict(frozen=True)

    start: datetime
    counts: dict[str, int]


class TaskBin(BaseModel):
    """The tasks started in one time bin: how many, how they ended, iterations, time per phase."""

    model_config = ConfigDict(frozen=True)

    start: datetime
    tasks: int
    statuses: dict[str, int]
    iterations: int  # of all these tasks
    phase_seconds: dict[str, float]


class DashboardFigures(BaseModel):
    """Everything the dashboards draw, filtered, and what the filters can choose from."""

    model_config = ConfigDict(frozen=True)

    bin_seconds: int = RESOLUTIONS[0]
    # every supervisor's confidence in percent, by supervisor: a chat's message supervisors by
    # name, the L1 tool supervisor, a task's checks of its criteria (terms.TASK_CHECKS)
    confidence: tuple[TimeBin, ...] = ()
    histogram: tuple[int, ...] = (0,) * agg.HISTOGRAM_BINS  # of them all
    histograms: dict[str, tuple[int, ...]] = {}  # by supervisor
    task_bins: tuple[TaskBin, ...] = ()
    input_tokens: tuple[TimeBin, ...] = ()  # by model, as the three below
    output_tokens: tuple[TimeBin, ...] = ()
    call_seconds: tuple[TimeBin, ...] = ()
    first_token_seconds: tuple[TimeBin, ...] = ()
    # every supervisor decision by "level/outcome" (terms.DECISION_LEVELS, OUTCOMES)
    resolutions: dict[str, int] = {}
    resolution_bins: tuple[CountBin, ...] = ()  # the same in time bins
    human_waits: tuple[TimeBin, ...] = ()  # by status
    questions: tuple[TimeBin, ...] = ()  # put to a person, by outcome (QUESTION_OUTCOMES)
    agreements: tuple[TimeBin, ...] = ()  # shadow verdicts against people's, by AGREEMENTS
    agents: tuple[str, ...] = ()  # every agent, unfiltered
    tasks: tuple[TaskChoice, ...] = ()  # the tasks started last (500), newest first, unfiltered
    events: int = 0  # metric events behind the figures
    recorded: frozenset[str] = frozenset()  # the series with figures in the store, unfiltered

    def span(self) -> tuple[datetime, datetime] | None:
        """The first and last time a figure covers."""
        starts = [
            b.start
            for bins in (
                self.confidence,
                self.call_seconds,
                self.human_waits,
                self.task_bins,
                self.resolution_bins,
            )
            for b in bins
        ]
        if not starts:
            return None
        return min(starts), datetime.fromtimestamp(max(starts).timestamp() + self.bin_seconds, UTC)


class AggregateSource(Protocol):
    def event_count(self) -> int: ...

    def buckets(
        self, resolution: int, agent: str, first: int | None = None, last: int | None = None
    ) -> tuple[int, int] | None: ...

    def bins(
        self, resolution: int, agent: str, first: int | None, last: int | None, width: int
    ) -> list[tuple[str, int, str, Tally]]: ...

    def agents(self) -> set[str]: ...

    def recorded(self) -> frozenset[str]: ...


def read_figures(
    store: Store, where: MetricsFilter | None = None, with_tasks: bool = True
) -> DashboardFigures:
    """The dashboards' figures: from the store's aggregates, or for chosen tasks from their logs
    (a task's log is short); the list of tasks unless `with_tasks` is false (it grows with
    them: read it when the count of tasks changed). Blocking: call it off the GUI thread."""
    where = where or MetricsFilter()
    stored = StoredAggregates(store)
    source: AggregateSource = stored
    if where.task_ids:
        source = _task_aggregates(store, where.task_ids)
    figures = dashboard_figures(source, where)
    choices = stored.task_choices() if with_tasks else []
    return figures.model_copy(
        update={
            "agents": tuple(sorted(stored.agents())),
            "recorded": stored.recorded(),
            "tasks": tuple(
                TaskChoice.model_construct(task_id=task_id, name=name, started_at=started)
                for task_id, name, started in choices
            ),
        }
    )


def _task_aggregates(store: Store, task_ids: frozenset[str]) -> MemoryAggregates:
    memory = MemoryAggregates()
    for task_id in sorted(task_ids):
        memory.fold(task_and_chat_events(store, task_id))
    return memory


def dashboard_figures(source: AggregateSource, where: MetricsFilter) -> DashboardFigures:
    """The figures of `source` that `where` admits (its task filter is the source's business)."""
    agent = _one_agent(where)
    resolution = _resolution(source, agent, where)
    if resolution is None:
        return DashboardFigures(events=source.event_count())
    first = _bucket(where.since, resolution)
    last = _bucket(where.until, resolution)
    width = _display_width(resolution, source.buckets(resolution, agent, first, last))
    by_series: dict[str, dict[int, dict[str, Tally]]] = defaultdict(lambda: defaultdict(dict))
    for series, bucket, label, tally in source.bins(resolution, agent, first, last, width):
        if tally.count:  # (a task's figures taken out leave a bin of none)
            by_series[series][bucket][label] = tally
    return DashboardFigures(
        bin_seconds=width,
        confidence=_time_bins(_by_supervisor(by_series)),
        histogram=_histogram(by_series[agg.SCORE_BIN], by_series[agg.DECIDER_SCORE_BIN]),
        histograms=_histograms(by_series[agg.SCORE_BIN], by_series[agg.DECIDER_SCORE_BIN]),
        task_bins=_task_bins(by_series[agg.TASK_ITERATIONS], by_series[agg.PHASE_SECONDS]),
        input_tokens=_time_bins(by_series[agg.INPUT_TOKENS]),
        output_tokens=_time_bins(by_series[agg.OUTPUT_TOKENS]),
        call_seconds=_time_bins(by_series[agg.CALL_SECONDS]),
        first_token_seconds=_time_bins(by_series[agg.FIRST_TOKEN_SECONDS]),
        resolutions=_counts(by_series[agg.RESOLUTION]),
        resolution_bins=_count_bins(by_series[agg.RESOLUTION]),
        human_waits=_time_bins(by_series[agg.HUMAN_WAIT]),
        questions=_time_bins(by_series[agg.QUESTIONS]),
        agreements=_time_bins(by_series[agg.AGREEMENT]),
        events=source.event_count(),
    )


def _one_agent(where: MetricsFilter) -> str:
    if len(where.agents) > 1:
        raise ValueError("the dashboards show one agent or all of them")
    return next(iter(where.agents), agg.EVERY_AGENT)


def _bucket(moment: datetime | None, resolution: int) -> int | None:
    if moment is None:
        return None
    return int(moment.timestamp() // resolution) * resolution


def _resolution(source: AggregateSource, agent: str, where: MetricsFilter) -> int | None:
    """The finest resolution at which the span of the figures asked for fits MAX_BUCKETS."""
    days = source.buckets(RESOLUTIONS[-1], agent)
    if days is None:
        return None
    start, end = float(days[0]), float(days[1] + RESOLUTIONS[-1])
    if where.since is not None:
        start = max(start, where.since.timestamp())
    if where.until is not None:
        end = min(end, where.until.timestamp())
    span = max(end - start, 1.0)
    return next((r for r in RESOLUTIONS if span / r <= MAX_BUCKETS), RESOLUTIONS[-1])


def _display_width(resolution: int, buckets: tuple[int, int] | None) -> int:
    """A multiple of the resolution that draws at most DISPLAY_BINS bins over the figures."""
    if buckets is None:
        return resolution
    count = (buckets[1] - buckets[0]) // resolution + 1
    return resolution * max(1, math.ceil(count / DISPLAY_BINS))


def _figure(tally: Tally) -> Figure:
    return Figure.model_construct(
        count=tally.count, total=tally.total, low=tally.low, high=tally.high
    )


def _time_bins(bins: dict[int, dict[str, Tally]]) -> tuple[TimeBin, ...]:
    return tuple(
        TimeBin.model_construct(
            start=datetime.fromtimestamp(bucket, UTC),
            by_label={label: _figure(tally) for label, tally in sorted(labels.items())},
        )
        for bucket, labels in sorted(bins.items())
    )


def _count_bins(bins: dict[int, dict[str, Tally]]) -> tuple[CountBin, ...]:
    return tuple(
        CountBin.model_construct(
            start=datetime.fromtimestamp(bucket, UTC),
            counts={label: tally.count for label, tally in sorted(labels.items())},
        )
        for bucket, labels in sorted(bins.items())
    )


def _by_supervisor(by_series: dict[str, Bins]) -> Bins:
    """The confidence bins of every supervisor: the chats' by name, a task's criteria (by level
    in the aggregates) as TASK_CHECKS."""
    merged: dict[int, dict[str, Tally]] = defaultdict(dict)
    for bucket, labels in by_series[agg.DECIDER_CONFIDENCE].items():
        for supervisor, tally in labels.items():
            merged[bucket].setdefault(supervisor, Tally()).merge(tally)
    for bucket, labels in by_series[agg.CONFIDENCE].items():
        for tally in labels.values():
            merged[bucket].setdefault(TASK_CHECKS, Tally()).merge(tally)
    return merged


def _histograms(
    criteria: dict[int, dict[str, Tally]], supervisors: dict[int, dict[str, Tally]]
) -> dict[str, tuple[int, ...]]:
    """The counts of confidence in each bin of 10 %, by supervisor (see _by_supervisor)."""
    counts: dict[str, list[int]] = {}
    for labels in criteria.values():
        for label, tally in labels.items():
            counts.setdefault(TASK_CHECKS, [0] * agg.HISTOGRAM_BINS)[int(label)] += tally.count
    for labels in supervisors.values():
        for label, tally in labels.items():
            index, _, supervisor = label.partition("|")
            counts.setdefault(supervisor, [0] * agg.HISTOGRAM_BINS)[int(index)] += tally.count
    return {supervisor: tuple(values) for supervisor, values in sorted(counts.items())}


def _histogram(*series: dict[int, dict[str, Tally]]) -> tuple[int, ...]:
    counts = [0] * agg.HISTOGRAM_BINS
    for bins in series:
        for labels in bins.values():
            for label, tally in labels.items():
                counts[int(label.partition("|")[0])] += tally.count
    return tuple(counts)


def _counts(bins: dict[int, dict[str, Tally]]) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for labels in bins.values():
        for label, tally in labels.items():
            counts[label] += tally.count
    return dict(counts)


def _task_bins(
    iterations: dict[int, dict[str, Tally]], phases: dict[int, dict[str, Tally]]
) -> tuple[TaskBin, ...]:
    """The tasks started in each bin: their count by status (the labels of `iterations`),
    their iterations and their seconds per phase."""
    return tuple(
        TaskBin(
            start=datetime.fromtimestamp(bucket, UTC),
            tasks=sum(tally.count for tally in statuses.values()),
            statuses={status: tally.count for status, tally in sorted(statuses.items())},
            iterations=round(sum(tally.total for tally in statuses.values())),
            phase_seconds={phase: tally.total for phase, tally in phases[bucket].items()},
        )
        for bucket, statuses in sorted(iterations.items())
    )
