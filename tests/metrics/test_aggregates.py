"""The metric aggregates: the same figures as the series computed from the events, kept in the
append's transaction, equal to a rebuild, and shared by every process using the store."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import sqlalchemy as sa

from foundry.metrics import (
    MetricsFilter,
    dashboard_series,
    keep_aggregates,
    metrics_state,
    read_figures,
    rebuild_aggregates,
)
from foundry.metrics.aggregates import Folding
from foundry.metrics.figures import DashboardFigures
from foundry.metrics.terms import TASK_CHECKS, criterion_outcome
from foundry.orchestration.events import CriterionScored
from foundry.session.events import Event, event_payload
from foundry.store import Store
from foundry.store.tables import MetricBinRecord, MetricSessionRecord, MetricTaskRecord

from ..store.conftest import database_url  # noqa: F401  (the SQLite and PostgreSQL fixture)
from .fixture_log import (
    DOCS_TASK,
    GUARDED_CHAT,
    TASK,
    api_resolutions_log,
    at,
    full_log,
    late_verdict,
    question,
    supervision_log,
)
from .synthetic_log import synthetic_log
from .test_loader import write


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(f"sqlite:///{tmp_path / 'metrics.sqlite3'}") as opened:
        yield keep_aggregates(opened)


def summary_of_figures(figures: DashboardFigures) -> dict[str, Any]:
    def totals(bins: Any) -> tuple[int, float]:
        merged = [b.merged() for b in bins]
        return sum(f.count for f in merged), round(sum(f.total for f in merged), 6)

    supervisors: Counter[str] = Counter()
    for b in figures.confidence:
        for supervisor, figure in b.by_label.items():
            supervisors[supervisor] += figure.count
    phases: Counter[str] = Counter()
    for task_bin in figures.task_bins:
        for phase, seconds in task_bin.phase_seconds.items():
            phases[phase] += round(seconds, 6)
    return {
        "histogram": list(figures.histogram),
        "histograms": {name: list(counts) for name, counts in figures.histograms.items()},
        "supervisors": dict(supervisors),
        "scores": totals(figures.confidence),
        "tasks": sum(b.tasks for b in figures.task_bins),
        "iterations": sum(b.iterations for b in figures.task_bins),
        "phases": {phase: value for phase, value in phases.items() if value},
        "input": totals(figures.input_tokens),
        "output": totals(figures.output_tokens),
        "whole": totals(figures.call_seconds),
        "first": totals(figures.first_token_seconds),
        "resolutions": {key: value for key, value in figures.resolutions.items() if value},
        "waits": totals(figures.human_waits),
        "resolutions over time": dict(
            sum((Counter(b.counts) for b in figures.resolution_bins), Counter())
        ),
        "questions": _label_counts(figures.questions),
        "question waits": totals(figures.questions),
        "agreements": _label_counts(figures.agreements),
    }


def _label_counts(bins: Any) -> dict[str, int]:
    counts: Counter[str] = Counter()
    for b in bins:
        for label, figure in b.by_label.items():
            counts[label] += figure.count
    return dict(counts)


def summary_of_series(events: list[Event], where: MetricsFilter) -> dict[str, Any]:
    """The same figures, computed from every point of series.py (the oracle)."""
    series = dashboard_series(events, where)
    stated = [
        (point.supervisor, point.confidence)
        for point in series.decisions
        if point.confidence is not None
    ]
    confidences = [(TASK_CHECKS, point.score) for point in series.confidence] + stated
    scores = [score for _, score in confidences]
    phases: Counter[str] = Counter()
    for point in series.phase_shares:
        phases[point.phase] += round(point.seconds, 6)
    calls = series.model_calls
    first = [p.first_token_s for p in calls if p.first_token_s is not None]
    return {
        "histogram": histogram(scores),
        "histograms": {
            name: histogram([score for who, score in confidences if who == name])
            for name in sorted({who for who, _ in confidences})
        },
        "supervisors": dict(Counter(who for who, _ in confidences)),
        "scores": (len(scores), round(sum(scores), 6)),
        "tasks": len(series.iterations),
        "iterations": sum(point.iterations for point in series.iterations),
        "phases": {phase: value for phase, value in phases.items() if value},
        "input": (len(calls), round(sum(p.input_tokens for p in calls), 6)),
        "output": (len(calls), round(sum(p.output_tokens for p in calls), 6)),
        "whole": (len(calls), round(sum(p.total_s for p in calls), 6)),
        "first": (len(first), round(sum(first), 6)),
        "resolutions": dict(
            Counter(f"{p.level}/{p.outcome}" for p in series.decisions)
            + Counter(f"task/{criterion_outcome(p.level)}" for p in series.confidence)
        ),
        "waits": (len(series.human_waits), round(sum(p.waited_s for p in series.human_waits), 6)),
        "resolutions over time": dict(
            Counter(f"{p.level}/{p.outcome}" for p in series.decisions)
            + Counter(f"task/{criterion_outcome(p.level)}" for p in series.confidence)
        ),
        "questions": dict(Counter(p.outcome for p in series.questions)),
        "question waits": (
            len(series.questions),
            round(sum(p.waited_s for p in series.questions), 6),
        ),
        "agreements": dict(Counter(p.agreement for p in series.agreements)),
    }


def histogram(scores: list[float]) -> list[int]:
    return [int(count) for count in np.histogram(scores, bins=np.arange(0.0, 110.0, 10.0))[0]]


FILTERS = {
    "everything": MetricsFilter(),
    "the coder": MetricsFilter(agents=frozenset({"coder"})),
    "a helper consulted after the first scores": MetricsFilter(agents=frozenset({"reviewer"})),
    "the ordinary chat's agent": MetricsFilter(agents=frozenset({"assistant"})),
    "the guarded chat's agent": MetricsFilter(agents=frozenset({"guarded"})),
    "one task": MetricsFilter(task_ids=frozenset({TASK})),
    "the other task and its writer": MetricsFilter(
        task_ids=frozenset({DOCS_TASK}), agents=frozenset({"writer"})
    ),
    "whole minutes of time": MetricsFilter(since=at(120), until=at(599.999)),
    "a minute of questions": MetricsFilter(since=at(1260), until=at(1319.999)),
}


@pytest.mark.parametrize("name", FILTERS)
def test_the_aggregates_give_the_figures_of_the_series(store: Store, name: str) -> None:
    events = sorted(full_log() + supervision_log(), key=lambda event: event.time)
    write(store, events[:25])  # two appends: the second finds what the first folded
    write(store, events[25:])
    where = FILTERS[name]
    assert summary_of_figures(read_figures(store, where)) == summary_of_series(events, where)


def test_the_filters_list_every_agent_and_the_tasks_started_last(store: Store) -> None:
    write(store, full_log())
    figures = read_figures(store, MetricsFilter(agents=frozenset({"writer"})))
    expected = dashboard_series(full_log())
    assert figures.agents == expected.agents
    newest_first = sorted(expected.tasks, key=lambda task: task.started_at, reverse=True)
    assert figures.tasks == tuple(newest_first)
    assert figures.events == len([e for e in full_log() if e.kind != "token"])


def test_an_approval_a_supervisor_resolved_through_the_api_is_no_wait_for_a_person(
    store: Store,
) -> None:
    """agent7 (resolved_by supervisor:agent7) decided at L1: its approvals count among the
    supervisor's decisions, not among the waits of approvals for their human."""
    events = api_resolutions_log()
    write(store, events)

    figures = read_figures(store)

    assert summary_of_figures(figures)["waits"] == (1, 2.5)
    assert [p.resolved_by for p in dashboard_series(events).human_waits] == ["human:cli:ana"]
    assert figures.resolutions["supervisor/denied"] == figures.resolutions["human/denied"] == 1


def test_questions_to_people_and_shadow_verdicts_are_counted_as_they_were_answered(
    store: Store,
) -> None:
    write(store, supervision_log())

    figures = read_figures(store)

    def by_minute(bins: Any) -> list[dict[str, int]]:
        return [{label: f.count for label, f in b.by_label.items()} for b in bins]

    assert by_minute(figures.questions) == [
        {"unchanged": 1, "edited": 1, "denied": 1},
        {"flagged": 1, "timed_out": 1},  # agent7's approval (supervisor:agent7) is no question
        {"unchanged": 2},
    ]
    assert [b.merged().total for b in figures.questions] == [60.0, 130.0, 13.0]  # seconds waited
    # the edited approval the verdict would have let through as asked is "let through", not
    # agreed; the timed-out one has no person's decision; the verdict given before its decision
    # is counted once, with the resolution
    assert by_minute(figures.agreements) == [
        {"agreed": 2, "let_through": 1},
        {"escalated_approved": 1},
        {"denied_approved": 1},
    ]
    assert figures.resolution_bins[1].counts == {
        "policy/allowed": 1,
        "human/allowed": 1,
        "supervisor/allowed": 1,
        "timeout/denied": 1,
    }


def test_a_shadow_verdict_counts_only_beside_a_persons_decision(store: Store) -> None:
    """A verdict against what no person decided, or against a supervisor through the approvals
    API, is no agreement with a person; one given after the person's decision is."""
    log = [
        Event(session_id=GUARDED_CHAT, seq=seq, time=at(seq), body=body)
        for seq, body in enumerate(
            [
                question(1, status="timed_out", by="timeout", shadow="approve"),
                question(2, by="supervisor:agent7", shadow="approve"),
                late_verdict(3, "approve", None),
                late_verdict(4, "approve", "denied"),
                late_verdict(5, "deny", "approved"),
            ],
            1,
        )
    ]
    write(store, log)
    assert read_figures(store).agreements[0].by_label.keys() == {"let_through", "denied_approved"}
    assert [p.approval_id for p in dashboard_series(log).agreements] == ["q4", "q5"]


def test_an_upgrade_asks_for_a_rebuild_where_questions_went_uncounted(tmp_path: Path) -> None:
    from foundry.store.database import create_database_engine, migrate

    engine = create_database_engine(f"sqlite:///{tmp_path / 'questions.sqlite3'}")
    migrate(engine, "0011")
    with Store(engine) as old:
        write(keep_aggregates(old), api_resolutions_log())  # approvals folded without questions
        assert metrics_state(old).complete
    migrate(engine, "head")
    with Store(engine) as store:
        assert not metrics_state(store).complete
        rebuild_aggregates(store)
        assert read_figures(store).questions[0].by_label["denied"].count == 1
    engine.dispose()


def table_rows(store: Store) -> dict[str, list[tuple[Any, ...]]]:
    tables = {
        "bins": MetricBinRecord,
        "sessions": MetricSessionRecord,
        "tasks": MetricTaskRecord,
    }
    rows = {}
    with store.engine.connect() as connection:
        for name, model in tables.items():
            table = model.__table__  # type: ignore[attr-defined]
            query = sa.select(table).order_by(*table.primary_key.columns)
            rows[name] = [_rounded(tuple(row)) for row in connection.execute(query)]
    # a bin of tasks that moved on (from running to succeeded) keeps a count of 0: no figure
    rows["bins"] = [row for row in rows["bins"] if row[5] != 0]
    return rows


def _rounded(row: tuple[Any, ...]) -> tuple[Any, ...]:
    """Sums of floats added in another order differ in their last bits."""
    return tuple(round(value, 6) if isinstance(value, float) else value for value in row)


def test_incremental_aggregates_equal_a_rebuild(database_url: str) -> None:  # noqa: F811
    events = synthetic_log(12, gap_s=1500)
    with Store.open(database_url) as opened:
        store = keep_aggregates(opened)
        for start in range(0, len(events), 37):  # appends of every size, cutting through tasks
            write(store, events[start : start + 37])
        incremental = table_rows(store)
        before = metrics_state(store)
        folded = rebuild_aggregates(store, batch=101)
        assert table_rows(store) == incremental
        after = metrics_state(store)
    assert folded == before.events == after.events > 0
    assert after.version > before.version and after.complete
    assert len(incremental["tasks"]) == 12


def test_events_written_by_another_store_show_up_in_this_one(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'shared.sqlite3'}"
    with Store.open(url) as reader, Store.open(url) as writer:
        keep_aggregates(writer)
        events = full_log()
        write(writer, events[:40])
        seen = metrics_state(reader)
        first = read_figures(reader)
        write(writer, events[40:])
        assert metrics_state(reader).version > seen.version
        assert sum(read_figures(reader).histogram) > sum(first.histogram)
        assert summary_of_figures(read_figures(reader)) == summary_of_series(
            events, MetricsFilter()
        )


def test_a_store_upgraded_with_events_is_incomplete_until_rebuilt(tmp_path: Path) -> None:
    from foundry.store.database import create_database_engine, migrate

    url = f"sqlite:///{tmp_path / 'old.sqlite3'}"
    engine = create_database_engine(url)
    migrate(engine, "0005")
    with Store(engine) as old:
        write(old, full_log())  # an older Foundry: no aggregates kept
    migrate(engine, "head")
    with Store(engine) as store:
        assert not metrics_state(store).complete
        progress: list[tuple[int, int]] = []
        rebuild_aggregates(store, lambda done, total: progress.append((done, total)), batch=20)
        assert metrics_state(store).complete
        assert progress[-1][0] == progress[-1][1] == len(full_log()) - 1  # a token
        assert summary_of_figures(read_figures(store)) == summary_of_series(
            full_log(), MetricsFilter()
        )


def test_every_supervisor_decision_is_counted(store: Store) -> None:
    write(store, full_log())
    figures = read_figures(store)
    # the confidence each states, in bins of 10 %: the curator's fallback states none
    assert figures.histograms == {
        "architect": (0, 0, 0, 0, 0, 0, 1, 0, 0, 0),
        "guardian": (0, 0, 0, 0, 0, 0, 0, 0, 0, 1),
        TASK_CHECKS: (0, 0, 0, 0, 2, 1, 0, 0, 2, 1),
        "tool supervisor (L1)": (0, 0, 0, 0, 0, 0, 0, 0, 0, 1),
    }
    assert figures.resolutions == {
        "policy/allowed": 1,
        "grant/allowed": 1,
        "supervisor/denied": 1,  # with its confidence, 92 %
        "supervisor/escalated": 1,  # sent on to a person
        "human/allowed": 1,
        "timeout/denied": 1,
        "message/allowed": 2,  # the guardian, the curator's fallback
        "message/changed": 1,  # the architect
        "task/allowed": 3,
        "task/escalated": 1,  # uncertain
        "task/denied": 2,
    }
    assistant = read_figures(store, MetricsFilter(agents=frozenset({"assistant"})))
    assert set(assistant.histograms) == {"architect", "guardian"}


def test_an_upgrade_asks_for_a_rebuild_only_where_decisions_went_uncounted(
    tmp_path: Path,
) -> None:
    from foundry.store.database import create_database_engine, migrate

    for name, log, complete in (
        ("chats", full_log(), False),
        ("tasks", [e for e in full_log() if e.session_id == DOCS_TASK], True),
    ):
        engine = create_database_engine(f"sqlite:///{tmp_path / name}.sqlite3")
        migrate(engine, "0010")
        with Store(engine) as old:
            write(keep_aggregates(old), log)
            assert metrics_state(old).complete
        migrate(engine, "head")
        with Store(engine) as store:
            assert metrics_state(store).complete is complete, name
        engine.dispose()


def test_a_long_span_is_read_in_coarser_bins(store: Store) -> None:
    events = synthetic_log(40, gap_s=6 * 3600)  # about ten days
    write(store, events)
    figures = read_figures(store)
    assert figures.bin_seconds >= 3600
    assert len(figures.call_seconds) <= 240
    assert summary_of_figures(figures) == summary_of_series(events, MetricsFilter())
    last = events[-1].time  # (a span open at its end would reach the end of the last day)
    last_day = MetricsFilter(since=last - timedelta(days=1), until=last)
    assert read_figures(store, last_day).bin_seconds < 3600  # minutes read, a few drawn as one


def test_a_fold_that_fails_loses_no_event(
    database_url: str,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(self: Folding, events: object) -> None:
        raise RuntimeError("a bug in the metrics")

    score = CriterionScored(criterion="tests pass", iteration=1, score=80.0, level="pass")
    with Store.open(database_url) as opened:
        store = keep_aggregates(opened)
        monkeypatch.setattr(Folding, "fold", broken)
        store.events.append("task-9", score.kind, event_payload(score))
        assert [record.kind for record in store.events.list("task-9")] == ["criterion_scored"]
        assert not metrics_state(store).complete
        monkeypatch.undo()
        rebuild_aggregates(store)
        assert metrics_state(store).complete
        assert sum(read_figures(store).histogram) == 1


def test_the_list_of_tasks_stops_at_the_newest_500(store: Store) -> None:
    write(store, synthetic_log(520, gap_s=60))
    figures = read_figures(store)
    starts = [task.started_at for task in figures.tasks]
    assert len(starts) == 500 and starts == sorted(starts, reverse=True)
    assert figures.task_bins and sum(b.tasks for b in figures.task_bins) == 520
