"""Each `foundry` command imports what it uses, and nothing for `--version` and `--help`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import REPO, SAMPLE_AGENTS

# Runs the command as `foundry` would, then writes the top-level packages it imported.
IMPORTS_OF_COMMAND = """
import json, sys
from foundry.cli import main
report, *argv = sys.argv[1:]
try:
    main(argv)
except SystemExit:
    pass
with open(report, "w") as file:
    json.dump(sorted({name.partition(".")[0] for name in sys.modules}), file)
"""

HEAVY = {"mcp", "sqlalchemy", "alembic", "sqlmodel", "ollama", "httpx", "rich", "fastapi"}
HEAVY |= {"uvicorn", "PySide6", "qasync", "xllamacpp", "pydantic", "asyncio"}


def imported_by(tmp_path: Path, *argv: str) -> set[str]:
    report = tmp_path / "imports.json"
    subprocess.run(
        [sys.executable, "-c", IMPORTS_OF_COMMAND, str(report), *argv],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        check=True,
        timeout=120,
    )
    return set(json.loads(report.read_text()))


@pytest.mark.parametrize(
    "argv",
    [
        ["--version"],
        ["--help"],
        ["run", "--help"],
        ["approvals", "list", "--help"],
        ["task", "run", "--help"],
        ["gateway", "--help"],
        ["doctor", "--help"],
    ],
)
def test_version_and_help_import_no_library_of_a_command(tmp_path: Path, argv: list[str]) -> None:
    assert imported_by(tmp_path, *argv) & HEAVY == set()


def test_validate_reads_agents_without_the_store_models_or_tools(tmp_path: Path) -> None:
    imported = imported_by(tmp_path, "validate", str(SAMPLE_AGENTS / "assistant"))

    assert "pydantic" in imported  # it did validate
    assert imported & HEAVY == {"pydantic"}


def test_listing_sessions_opens_the_store_and_starts_nothing(tmp_path: Path) -> None:
    imported = imported_by(tmp_path, "sessions", "list")

    assert "sqlalchemy" in imported
    assert imported & {"mcp", "ollama", "httpx", "fastapi", "PySide6", "xllamacpp"} == set()


def test_a_new_store_and_one_up_to_date_are_opened_without_alembic(tmp_path: Path) -> None:
    first = imported_by(tmp_path, "sessions", "list")  # a new store: made at the newest schema
    again = imported_by(tmp_path, "sessions", "list")

    assert "sqlalchemy" in first and "sqlalchemy" in again
    assert "alembic" not in first | again


def test_exporting_metrics_reads_rows_without_sqlalchemy_or_pydantic(tmp_path: Path) -> None:
    from foundry.metrics import keep_aggregates
    from foundry.store import Store

    from .metrics.fixture_log import full_log
    from .metrics.test_loader import write

    with Store.open() as store:
        write(keep_aggregates(store), full_log())
    imported = imported_by(tmp_path, "metrics", "export", "--csv", str(tmp_path / "csv"))

    assert "sqlite3" in imported  # it did read the store
    assert (tmp_path / "csv" / "model_calls.csv").read_text().count("\n") == 9
    assert imported & HEAVY == set()
