"""`foundry metrics export --csv DIR` and `foundry metrics rebuild` on this test's store."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from foundry.cli import main
from foundry.metrics import keep_aggregates, read_figures
from foundry.store import Store

from .metrics.fixture_log import full_log
from .metrics.test_loader import write


def test_export_writes_the_series_of_the_store(
    foundry_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with Store.open() as store:
        write(keep_aggregates(store), full_log())  # as the engine writes them
    target = tmp_path / "csv"
    assert main(["metrics", "export", "--csv", str(target), "--agent", "coder"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[1] == f"{target / 'iterations.csv'}  1 row"
    assert printed[3] == f"{target / 'model_calls.csv'}  3 rows"
    with (target / "model_calls.csv").open(newline="") as file:
        rows = list(csv.DictReader(file))
    assert [row["input_tokens"] for row in rows] == ["500", "150", "550"]
    assert {row["agent"] for row in rows} == {"coder"}


def test_export_refuses_a_time_it_cannot_read(
    foundry_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["metrics", "export", "--csv", str(tmp_path), "--since", "yesterday"])
    assert exit_.value.code == 2
    assert "'yesterday' is not a time like 2025-03-01T09:00" in capsys.readouterr().err


def test_export_into_a_file_says_it_wants_a_folder_and_leaves_the_file(
    foundry_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with Store.open() as store:
        write(keep_aggregates(store), full_log())
    notes = tmp_path / "notes.txt"
    notes.write_text("mine")
    assert main(["metrics", "export", "--csv", str(notes)]) == 1
    assert f"{notes}: a file, not a folder" in capsys.readouterr().err
    assert notes.read_text() == "mine"


def test_rebuild_recomputes_the_aggregates_from_every_event(
    foundry_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with Store.open() as store:
        write(store, full_log())  # by a writer that kept no aggregates
        assert read_figures(store).events == 0
    assert main(["metrics", "rebuild"]) == 0
    assert capsys.readouterr().out.endswith("Rebuilt the metric aggregates from 72 events\n")
    with Store.open() as store:
        figures = read_figures(store)
    # six criteria scored, and the confidence of the guardian, the architect and the L1
    assert figures.events == 72 and sum(figures.histogram) == 9
    assert figures.resolutions["message/changed"] == figures.resolutions["supervisor/escalated"]
