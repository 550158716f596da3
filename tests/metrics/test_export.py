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
from typing import Any

import pytest
import sqlalchemy as sa
from sqlmodel import Session

from foundry.cli import main
from foundry.metrics import (
    AgreementPoint,
    ConfidencePoint,
    HumanWaitPoint,
    IterationsPoint,
    MetricsFilter,
    ModelCallPoint,
    PhaseSharePoint,
    QuestionPoint,
    ResolutionPoint,
    SeriesPoint,
    dashboard_series,
    keep_aggregates,
    load_metric_events,
)
from foundry.metrics.stored import fold_appended
from foundry.session.events import Event
from foundry.store import EventRecord, Store
from foundry.store.database import create_database_engine, migrate

from ..store.conftest import database_url  # noqa: F401  (the SQLite and PostgreSQL fixture)
from .fixture_log import DOCS_TASK, T0, TASK, api_resolutions_log, at, full_log, supervision_log
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
    "questions": QuestionPoint,
    "agreements": AgreementPoint,
}
FILES = tuple(POINTS)
BEFORE_QUESTIONS = FILES[:6]  # the files tests/metrics/export_expected/ holds
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


def files(folder: Path, names: Sequence[str] = FILES) -> dict[str, str]:
    return {name: (folder / f"{name}.csv").read_bytes().decode() for name in names}  # \r\n kept


@pytest.mark.parametrize("case", FILTERS)
def test_the_files_are_those_written_before(store_url: str, tmp_path: Path, case: str) -> None:
    stored(store_url, full_log())
    export(tmp_path / case, *FILTERS[case])
    assert files(tmp_path / case, BEFORE_QUESTIONS) == files(EXPECTED / case, BEFORE_QUESTIONS)


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


def test_each_series_has_its_file_a_header_and_a_row_per_point(
    store_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stored(store_url, full_log())
    export(tmp_path)
    printed = capsys.readouterr().out.splitlines()
    assert printed[1:3] == [
        f"{tmp_path / 'iterations.csv'}  2 rows",
        f"{tmp_path / 'phase_shares.csv'}  16 rows",
    ]
    assert len(printed) == len(FILES)
    iterations = rows_of(tmp_path / "iterations.csv")
    assert iterations == [
        ["time", "task_id", "task", "iterations", "status"],
        ["2025-03-01T09:00:00Z", TASK, "add-endpoint", "2", "failed"],
        ["2025-03-01T09:16:40Z", DOCS_TASK, "write-docs", "1", "succeeded"],
    ]
    phases = rows_of(tmp_path / "phase_shares.csv")
    assert phases[7] == [  # the endpoint task's wait for a human
        "2025-03-01T09:00:00Z",
        TASK,
        "add-endpoint",
        "waiting_for_approval",
        "65.0",
        "20.3125",
    ]
    calls = rows_of(tmp_path / "model_calls.csv")
    assert calls[5][-4:] == ["220", "70", "", "8.0"]  # no first token time: an empty cell


def test_an_empty_store_gives_the_headers_alone(store_url: str, tmp_path: Path) -> None:
    stored(store_url, [])
    export(tmp_path)
    assert rows_of(tmp_path / "human_waits.csv") == [
        [*POINTS["human_waits"].model_fields],
    ]


def test_human_waits_leave_out_what_a_supervisor_resolved_through_the_api(
    store_url: str, tmp_path: Path
) -> None:
    stored(store_url, api_resolutions_log())
    export(tmp_path)
    waits = rows_of(tmp_path / "human_waits.csv")[1:]
    assert [(row[-4], row[-2], row[-1]) for row in waits] == [("ap1", "human:cli:ana", "2.5")]
    levels = [row[-3] for row in rows_of(tmp_path / "resolutions.csv")[1:]]
    assert levels == ["supervisor", "human"]


def test_questions_and_agreements_are_exported_as_people_answered_them(
    store_url: str, tmp_path: Path
) -> None:
    events = sorted(full_log() + supervision_log(), key=lambda event: event.time)
    stored(store_url, events)
    export(tmp_path / "export")
    assert files(tmp_path / "export") == reference_files(
        events, MetricsFilter(), tmp_path / "expected"
    )
    questions = rows_of(tmp_path / "export" / "questions.csv")
    assert [row[-2:] for row in questions[-5:]] == [
        ["denied", "20.0"],
        ["flagged", "40.0"],
        ["timed_out", "90.0"],  # then agent7's approval: no question
        ["unchanged", "5.0"],
        ["unchanged", "8.0"],
    ]
    agreements = rows_of(tmp_path / "export" / "agreements.csv")
    assert agreements[0][-6:] == ["approval_id", "tool", "shadow", "person", "edited", "agreement"]
    assert [(row[-6], row[-2], row[-1]) for row in agreements[1:]] == [
        ("q1", "False", "agreed"),
        ("q2", "True", "let_through"),
        ("q3", "False", "agreed"),  # the verdict given after the person's decision
        ("q4", "False", "escalated_approved"),
        ("q7", "False", "denied_approved"),
    ]


def rows_of(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as file:
        return list(csv.reader(file))


def append_rows(url: str, rows: list[tuple[str, str, dict[str, Any]]]) -> None:
    """Events (session, kind, payload) as a writer that skipped their types left them, after
    the fixture log's, with the aggregates kept."""
    with Store.open(url) as store, Session(store.engine) as session:
        records = [
            EventRecord(session_id=session_id, seq=seq, kind=kind, time=at(1100), payload=payload)
            for seq, (session_id, kind, payload) in enumerate(rows, 90)
        ]
        session.add_all(records)
        fold_appended(session, records)
        session.commit()


UNREADABLE = [
    ("chat-free", "model_call", {"model": "m", "input_tokens": "lots"}),
    ("chat-free", "tool_call_decided", {"allowed": True, "by": "policy:x"}),
    (TASK, "criterion_scored", {"criterion": "c", "iteration": 1, "score": 50.0, "level": "meh"}),
    ("chat-free", "tool_call_decided", {"call": {"id": "1", "name": "t"}, "allowed": 5, "by": "x"}),
]


def test_unreadable_events_are_left_out_and_reported(
    store_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stored(store_url, full_log())
    append_rows(store_url, UNREADABLE)
    export(tmp_path)
    assert files(tmp_path, BEFORE_QUESTIONS) == files(EXPECTED / "everything", BEFORE_QUESTIONS)
    errors = capsys.readouterr().err.splitlines()
    assert errors == [
        "foundry: left out the unreadable event criterion_scored task-1#92: level: "
        "Input should be 'pass', 'uncertain' or 'fail'",
        "foundry: left out the unreadable event model_call chat-free#90: input_tokens: Input "
        "should be a valid integer, unable to parse string as an integer; output_tokens: Field "
        "required; first_token_s: Field required; total_s: Field required; stop_reason: Field "
        "required",
        "foundry: left out the unreadable event tool_call_decided chat-free#91: call: Field "
        "required",
        "foundry: left out the unreadable event tool_call_decided chat-free#93: allowed: Input "
        "should be a valid boolean, unable to interpret input",
    ]


def test_fields_of_other_json_types_are_read_as_their_event_type_reads_them(
    store_url: str, tmp_path: Path
) -> None:
    """A count written as 3.0, a time as 2, a default left out: what pydantic makes of them."""
    stored(store_url, full_log())
    model_call = {"model": "m", "input_tokens": 3.0, "output_tokens": True, "first_token_s": 1}
    append_rows(
        store_url,
        [
            ("chat-free", "model_call", {**model_call, "total_s": 2, "stop_reason": "stop"}),
            (
                "chat-free",
                "approval_resolved",
                {"approval_id": "a", "status": "ok", "resolved_by": "x"},
            ),
            (  # as written before migration 0012: no tool, edit, flag nor verdict
                "chat-free",
                "approval_resolved",
                {"approval_id": "b", "status": "approved", "resolved_by": "h", "waited_s": 4.0},
            ),
            (
                TASK,
                "criterion_scored",
                {"criterion": "c", "iteration": 1, "score": 7, "level": "fail"},
            ),
            (
                "chat-free",
                "tool_call_decided",
                {"call": {"id": "1", "name": "t"}, "allowed": 1, "by": "x"},
            ),
        ],
    )
    with Store.open(store_url) as store:
        read = load_metric_events(store)
    export(tmp_path / "export")
    expected = reference_files(read, MetricsFilter(), tmp_path / "expected")
    assert files(tmp_path / "export") == expected
    assert "2025-03-01T09:18:20Z,,,chat-free,assistant,m,3,1,1.0,2.0" in expected["model_calls"]
    assert "chat-free,assistant,b,,unchanged,4.0" in expected["questions"]


def test_aggregates_that_are_not_complete_are_refused(
    store_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stored(store_url, full_log())
    with Store.open(store_url) as store, Session(store.engine) as session:
        session.execute(sa.text("UPDATE metrics_state SET complete = false"))
        session.commit()
    assert main(["metrics", "export", "--csv", str(tmp_path / "out")]) == 1
    assert capsys.readouterr().err == (
        "foundry: the store's metric aggregates are not complete (events from before they were "
        "kept, or a writer failed to fold some): run `foundry metrics rebuild`, then export "
        "again\n"
    )
    assert not (tmp_path / "out").exists()


def test_a_store_from_before_the_aggregates_is_refused(
    store_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    engine = create_database_engine(store_url)
    migrate(engine, "0005")
    engine.dispose()
    assert main(["metrics", "export", "--csv", str(tmp_path)]) == 1
    assert "has no metric aggregates yet" in capsys.readouterr().err


def test_a_store_that_is_not_there_is_said_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("FOUNDRY_DATABASE_URL", f"sqlite:///{tmp_path / 'none.sqlite3'}")
    assert main(["metrics", "export", "--csv", str(tmp_path / "out")]) == 1
    assert capsys.readouterr().err == f"foundry: there is no store at {tmp_path / 'none.sqlite3'}\n"
    assert not (tmp_path / "none.sqlite3").exists()
