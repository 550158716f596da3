"""The `foundry` command: validate, create-agent, convert, and help for each."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from foundry.cli import main

from .conftest import SAMPLE_AGENTS
from .orchestration.conftest import task_file
from .runtime.conftest import write_agent


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


def test_a_new_agent_carries_the_default_policy_unless_asked_not_to(tmp_path: Path) -> None:
    careful, bare = tmp_path / "careful", tmp_path / "bare"
    assert main(["create-agent", str(careful), "--name", "Careful"]) == 0
    assert main(["create-agent", str(bare), "--name", "Bare", "--no-policy"]) == 0
    assert json.loads((careful / "tsagent.json").read_text())["supervisors"] == []
    supervisors = json.loads((careful / "foundry.json").read_text())["supervisors"]  # tsagent
    assert [entry["type"] for entry in supervisors] == ["policy"]  # refuses the type
    assert len(supervisors[0]["config"]["rules"]) > 50
    assert json.loads((bare / "tsagent.json").read_text())["supervisors"] == []
    assert main(["validate", str(careful), str(bare)]) == 0


def test_create_agent_refuses_an_existing_agent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["create-agent", str(tmp_path / "a"), "--name", "A"]) == 0
    assert main(["create-agent", str(tmp_path / "a"), "--name", "B"]) == 1
    assert "already holds an agent" in capsys.readouterr().err


def test_convert_folder_to_yaml_and_back(sample_agents: Path) -> None:
    single = sample_agents / "assistant.yaml"
    result = run("convert", str(sample_agents / "assistant"), str(single))
    assert result.returncode == 0, result.stderr
    assert "supervisors:" in single.read_text()
    assert "agentPath: architect" in single.read_text()  # from beside the folder, not in it
    assert run("convert", str(single), str(sample_agents / "back")).returncode == 0
    for name in ("tsagent.json", "prompt.md", "rules/be-concise.mdt", "refs/time-zones.mdt"):
        assert (sample_agents / "back" / name).read_bytes() == (
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


def test_validate_says_which_file_it_read_when_both_exist(
    sample_agents: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assistant = sample_agents / "assistant"
    assert main(["convert", str(assistant), str(assistant / "tsagent.yaml")]) == 0
    capsys.readouterr()
    assert main(["validate", str(assistant)]) == 0
    assert capsys.readouterr().out == (
        f"{assistant}: OK (read tsagent.yaml; the tsagent.json beside it is ignored, "
        "as tsagent ignores it)\n"
    )


def lost_supervisor(root: Path) -> Path:
    """An agent whose supervisor's agent is not there: only validate's checks across files
    find that."""
    lost = {"type": "agent", "id": "lost", "config": {"agentPath": "../gone"}}
    return write_agent(root, {"turns": [{"text": "Hi."}]}, servers={}, supervisors=[lost])


@pytest.mark.parametrize(
    "command",
    [["run", "{agent}", "-m", "hi"], ["chat", "{agent}"], ["convert", "{agent}", "{out}"]],
)
def test_commands_refuse_an_agent_that_validate_rejects(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agent = lost_supervisor(tmp_path / "worker")
    assert main(["validate", str(agent)]) == 1
    problems = capsys.readouterr().out.splitlines()
    argv = [part.format(agent=agent, out=tmp_path / "out.yaml") for part in command]
    assert main(argv) == 1
    captured = capsys.readouterr()
    assert captured.err.splitlines()[: len(problems)] == problems
    assert captured.out == "" and not (tmp_path / "out.yaml").exists()


def test_a_task_with_an_agent_that_validate_rejects_does_not_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agent = lost_supervisor(tmp_path / "agents" / "coder")
    assert main(["validate", str(agent)]) == 1
    problems = capsys.readouterr().out
    assert main(["task", "run", str(task_file(tmp_path))]) == 1
    assert capsys.readouterr().err == problems


def test_convert_with_force_writes_an_invalid_agent_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agent = lost_supervisor(tmp_path / "agents" / "worker")
    target = tmp_path / "worker.yaml"
    assert main(["convert", "--force", str(agent), str(target)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"foundry: wrote {target} although it has 1 problem(s):",
        f"{target}: supervisors[0].config.agentPath: no agent at 'agents/gone' "
        f"(looked for {(tmp_path / 'agents' / 'gone').resolve()})",
    ]


def test_sessions_list_says_when_there_are_none(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sessions", "list"]) == 0
    shown = capsys.readouterr()
    assert shown.out == ""  # nothing for a script to read as a session
    assert "no sessions yet" in shown.err


@pytest.mark.parametrize("given", ["folder", "tsagent.json"])
def test_gui_opens_the_agent_folder_given_it_or_its_tsagent_json(
    sample_agents: Path, given: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import foundry.ui.app

    opened: list[Path | None] = []
    monkeypatch.setattr(foundry.ui.app, "run", lambda agent: opened.append(agent) or 0)
    assistant = sample_agents / "assistant"
    path = assistant if given == "folder" else assistant / "tsagent.json"
    assert main(["gui", str(path)]) == 0
    assert opened == [assistant]
