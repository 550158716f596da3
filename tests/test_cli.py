"""The `foundry` command: validate, create-agent, convert, and help for each."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from foundry.cli import main

from .conftest import SAMPLE_AGENTS


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "foundry.cli", *args], capture_output=True, text=True, timeout=60
    )


def test_validate_passes_for_the_sample_agents() -> None:
    result = run("validate", *map(str, sorted(SAMPLE_AGENTS.iterdir())))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count(": OK") == len(list(SAMPLE_AGENTS.iterdir()))


def test_validate_prints_one_line_per_problem_and_fails(
    sample_agents: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assistant = sample_agents / "assistant"
    config = json.loads((assistant / "tsagent.json").read_text())
    config["settings"]["topP"] = 3
    config["supervisors"][2]["config"]["agentPath"] = "../gone"
    (assistant / "tsagent.json").write_text(json.dumps(config))
    assert main(["validate", str(assistant), str(sample_agents / "architect")]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        f"{assistant / 'tsagent.json'}: settings.topP: must be between 0 and 1 (got 3)",
        f"{assistant / 'tsagent.json'}: supervisors[2].config.agentPath: no agent at '../gone' "
        f"(looked for {(sample_agents / 'gone').resolve()})",
        f"{sample_agents / 'architect'}: OK",
    ]


def test_create_agent_in_both_formats(tmp_path: Path) -> None:
    folder, single = tmp_path / "helper", tmp_path / "helper.yaml"
    assert main(["create-agent", str(folder), "--name", "Helper", "--system-prompt", "Hi."]) == 0
    assert main(["create-agent", str(single), "--name", "Helper", "--description", "d"]) == 0
    assert (folder / "prompt.md").read_text() == "Hi."
    assert json.loads((folder / "tsagent.json").read_text())["metadata"]["name"] == "Helper"
    assert "description: d" in single.read_text()
    assert main(["validate", str(folder), str(single)]) == 0


def test_create_agent_refuses_an_existing_agent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["create-agent", str(tmp_path / "a"), "--name", "A"]) == 0
    assert main(["create-agent", str(tmp_path / "a"), "--name", "B"]) == 1
    assert "already holds an agent" in capsys.readouterr().err


def test_convert_folder_to_yaml_and_back(sample_agents: Path, tmp_path: Path) -> None:
    single = tmp_path / "assistant.yaml"
    result = run("convert", str(sample_agents / "assistant"), str(single))
    assert result.returncode == 0, result.stderr
    assert "supervisors:" in single.read_text()
    assert run("convert", str(single), str(tmp_path / "back")).returncode == 0
    for name in ("tsagent.json", "prompt.md", "rules/be-concise.mdt", "refs/time-zones.mdt"):
        assert (tmp_path / "back" / name).read_bytes() == (
            sample_agents / "assistant" / name
        ).read_bytes()


def test_convert_refuses_to_replace_without_force(tmp_path: Path) -> None:
    assert main(["create-agent", str(tmp_path / "a.yaml"), "--name", "A"]) == 0
    assert main(["create-agent", str(tmp_path / "b.yaml"), "--name", "B"]) == 0
    assert main(["convert", str(tmp_path / "a.yaml"), str(tmp_path / "b.yaml")]) == 1
    assert main(["convert", "--force", str(tmp_path / "a.yaml"), str(tmp_path / "b.yaml")]) == 0
    assert "name: A" in (tmp_path / "b.yaml").read_text()


def test_convert_of_an_invalid_agent_reports_problems(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "bad.yaml").write_text("metadata: {}\n")
    assert main(["convert", str(tmp_path / "bad.yaml"), str(tmp_path / "out")]) == 1
    assert "metadata.name: is required but missing" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", ["validate", "create-agent", "convert", "gui"])
def test_every_command_has_help(command: str) -> None:
    result = run(command, "--help")
    assert result.returncode == 0
    assert result.stdout.startswith(f"usage: foundry {command}")
