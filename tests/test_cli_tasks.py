"""The task commands: run (resume, replay), list and metrics; the sample task, for real."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from foundry.cli import main
from tests.orchestration.conftest import GREET_CODE, agent, task_file, write

from .conftest import REPO


def output_of(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_run_list_metrics_and_replay(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    agent(
        tmp_path / "agents" / "coder",
        [{"tool_calls": [write("greetings.py", GREET_CODE)]}, {"text": "Done. STATUS: done"}],
    )
    path = str(task_file(tmp_path))

    code, out, err = output_of(capsys, "task", "run", path)
    assert code == 0 and out.strip() == "Done. STATUS: done"
    assert "[1] validation ..." in err and "pass" in err and "succeeded after 1 iteration(s)" in err
    task_id = err.rsplit("task ", 1)[1].split(":")[0]

    code, out, _ = output_of(capsys, "task", "list")
    assert code == 0 and task_id in out and "succeeded" in out and "greeting" in out

    code, out, _ = output_of(capsys, "task", "metrics", task_id, "--json")
    figures = json.loads(out)
    assert (code, figures["iterations"], figures["status"]) == (0, 1, "succeeded")
    assert figures["confidence_scores"] == [92.0]

    code, out, err = output_of(capsys, "task", "run", path, "--replay", "--quiet")
    assert code == 0 and out.strip() == "Done. STATUS: done"
    assert "replayed 2 steps" in err and "0 message(s) to agents" in err


def test_a_broken_task_file_is_refused_with_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "task.yaml"
    path.write_text(
        "name: t\ngoal: g\ncriteria: [ok]\noperators: [nowhere]\nlimits: {maxRetries: many}\n"
    )
    code, out, err = output_of(capsys, "task", "run", str(path))
    assert code == 1 and out == ""
    assert f"{path}:5: limits.maxRetries:" in err


def test_an_unknown_task_id_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = output_of(capsys, "task", "metrics", "nope")
    assert code == 1 and err.strip() == "foundry: no task with id 'nope'"


def test_the_sample_task_runs_with_the_embedded_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Whatever the small model answers, the run ends and leaves its metrics."""
    shutil.copytree(REPO / "agents", tmp_path / "agents")
    shutil.copytree(
        REPO / "tasks" / "capital",
        tmp_path / "tasks" / "capital",
        ignore=shutil.ignore_patterns("workspace"),
    )
    path = tmp_path / "tasks" / "capital" / "task.yaml"
    spec = yaml.safe_load(path.read_text())
    spec["limits"].update(maxIterations=1, interrogationRounds=0)  # one pass keeps CI quick
    path.write_text(yaml.safe_dump(spec))
    code, _, err = output_of(capsys, "task", "run", str(path))
    assert code in (0, 1), err
    task_id = err.rsplit("task ", 1)[1].split(":")[0]

    _, out, _ = output_of(capsys, "task", "metrics", task_id, "--json")
    figures = json.loads(out)
    assert figures["supervisor_calls"] >= 1 and figures["iterations"] >= 1
    assert len(figures["confidence_scores"]) >= 2 and figures["input_tokens"] > 0
    assert abs(sum(p["share"] for p in figures["phases"]) - 100) < 0.1
