"""`foundry metrics export --csv`: the same files as the series computed from every event.

tests/metrics/export_expected/ holds what the export wrote for the fixture log before it read
rows without the event types (one folder per filter); the synthetic log's files are compared
with the series computed from its events, written as the export wrote them then.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path

import pytest
from sqlmodel import Session

from foundry.cli import main
from foundry.metrics import (
    ConfidencePoint,
    HumanWaitPoint,
    IterationsPoint,
    MetricsFilter,
    ModelCallPoint,
    PhaseSharePoint,
    ResolutionPoint,
    SeriesPoint,
    dashboard_series,
    keep_aggregates,
    load_metric_events,
)
from foundry.session.events import Event
from foundry.store import EventRecord, Store

from ..store.conftest import database_url  # noqa: F401  (the SQLite and PostgreSQL fixture)
from .fixture_log import DOCS_TASK, T0, full_log
from .synthetic_log import synthetic_log
from .test_loader import write

EXPECTED = Path(__file__).parent / "export_expected"
POINTS: dict[str, type[SeriesPoint]] = {
    "confidence": ConfidencePoint,
    "iterations": IterationsPoint,
    "phase_shares": PhaseSharePoint,
    "model_calls": ModelCallPoint,
    "resolutions": ResolutionPoint,
    "human_waits": HumanWaitPoint,
}
FILES = tuple(POINTS)
FILTERS = {
    "everything": [],
    "agent-coder": ["--agent", "coder"],
    "task-2-and-writer": ["--task", DOCS_TASK, "--agent", "writer"],
    "window": ["--since", "2025-03-01T09:05:00+00:00", "--until", "2025-03-01T09:12:00+00:00"],
}


@pytest.fixture
def store_url(database_url: str, monkeypatch: pytest.MonkeyPatch) -> str:  # noqa: F811
    """The database `foundry` uses in this test, SQLite or PostgreSQL."""
    monkeypatch.setenv("FOUNDRY_DATABASE_URL", database_url)
    return database_url


def stored(url: str, events: Sequence[Event]) -> None:
    """The events written as the engine writes them: with the aggregates kept."""
    with Store.open(url) as store:
        write(keep_aggregates(store), events)


def export(target: Path, *arguments: str) -> None:
    assert main(["metrics", "export", "--csv", str(target), *arguments]) == 0


def files(folder: Path) -> dict[str, str]:
    return {name: (folder / f"{name}.csv").read_text(encoding="utf-8") for name in FILES}


@pytest.mark.parametrize("case", FILTERS)
def test_the_files_are_those_written_before(store_url: str, tmp_path: Path, case: str) -> None:
    stored(store_url, full_log())
    export(tmp_path / case, *FILTERS[case])
    assert files(tmp_path / case) == files(EXPECTED / case)


def reference_files(events: list[Event], where: MetricsFilter, folder: Path) -> dict[str, str]:
    """The files the export wrote from the series computed from every event."""
    series = dashboard_series(events, where)
    folder.mkdir()
    for name, point_type in POINTS.items():
        points = getattr(series, name)
        columns = list(point_type.model_fields)
        with (folder / f"{name}.csv").open("w", newline="", encoding="utf-8") as file:
            writer = csv.writer(file)
            writer.writerow(columns)
            for point in points:
                values = point.model_dump(mode="json")
                writer.writerow("" if values[key] is None else values[key] for key in columns)
    return files(folder)


def test_a_synthetic_log_gives_the_files_of_its_series(store_url: str, tmp_path: Path) -> None:
    events = synthetic_log(40, seed=3)  # times with fractions of a second, ties, 4 deciders
    stored(store_url, events)
    with Store.open(store_url) as store:
        read = load_metric_events(store)
    since = T0 + timedelta(hours=2)
    for name, where, arguments in (
        ("all", MetricsFilter(), []),
        ("coder", MetricsFilter(agents=frozenset({"coder"})), ["--agent", "coder"]),
        ("since", MetricsFilter(since=since), ["--since", since.isoformat()]),
    ):
        export(tmp_path / name, *arguments)
        expected = reference_files(read, where, tmp_path / f"{name}-expected")
        assert files(tmp_path / name) == expected, name


def add_unreadable(url: str) -> None:
    """A model call without its figures and a decision on no tool, as a buggy writer left them."""
    with Store.open(url) as store, Session(store.engine) as session:
        session.add_all(
            [
                EventRecord(
                    session_id="chat-free",
                    seq=90,
                    kind="model_call",
                    time=T0,
                    payload={"model": "m", "input_tokens": "lots"},
                ),
                EventRecord(
                    session_id="chat-free",
                    seq=91,
                    kind="tool_call_decided",
                    time=T0,
                    payload={"allowed": True, "by": "policy:x"},
                ),
            ]
        )
        session.commit()
