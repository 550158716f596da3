"""Converting and opening agents: relative paths still hold after a move, a folder's YAML file
wins over the tsagent.json left beside it, and loading an agent to use it checks what validate
checks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from foundry.agent import AgentError, AgentFormat, load_agent, read_agent, validate_agent
from foundry.agent.document import ignored_config, new_agent_path_problem
from foundry.agent.relocate import convert_agent, moved_path

from .conftest import WATCHER_AGENT, YAML_AGENT


def folder_agent(root: Path, **config: Any) -> Path:
    root.mkdir(parents=True)
    (root / "tsagent.json").write_text(json.dumps({"metadata": {"name": root.name}, **config}))
    return root


def watched_agent(root: Path) -> Path:
    """An agent with every kind of relative path, beside a watcher agent and a scripted model."""
    folder_agent(root.parent / "watcher")
    (root.parent / "turns.yaml").write_text("turns: [{text: hi}]\n")
    return folder_agent(
        root,
        settings={"model": "scripted:../turns.yaml"},
        mcpServers={
            "local": {"command": "python", "args": ["server.py"], "cwd": "../tools"},
            "far": {"command": "python", "cwd": "/opt/tools"},
            "here": {"command": "python"},
        },
        supervisors=[
            {"type": "agent", "id": "watch", "config": {"agentPath": "../watcher"}},
            {"type": "policy", "id": "policy", "config": {"supervisorAgentPath": "../watcher"}},
            {"type": "collection", "id": "stats", "config": {"exportPath": "stats.json"}},
            {"type": "collection", "id": "quiet"},
        ],
    )


def test_converting_beside_the_folder_keeps_the_supervisors_found(sample_agents: Path) -> None:
    target = sample_agents / "assistant.yaml"
    convert_agent(load_agent(sample_agents / "assistant"), target)
    assert validate_agent(target) == []
    assert "agentPath: architect\n" in target.read_text()


def test_every_relative_path_names_what_it_named_before(tmp_path: Path) -> None:
    source = watched_agent(tmp_path / "agents" / "worker")
    converted = convert_agent(load_agent(source), tmp_path / "out" / "worker.yaml")
    agent = converted.agent
    assert agent is not None
    assert agent.settings.model == "scripted:../agents/turns.yaml"
    servers = converted.data["mcpServers"]
    assert servers["local"]["cwd"] == "../agents/tools"
    assert servers["far"]["cwd"] == "/opt/tools"  # absolute: as it was
    assert "cwd" not in servers["here"]  # none given: none added
    configs = [entry.get("config", {}) for entry in converted.data["supervisors"]]
    assert configs[0]["agentPath"] == "../agents/watcher"
    assert configs[1]["supervisorAgentPath"] == "../agents/watcher"
    assert configs[2]["exportPath"] == "../agents/worker/stats.json"
    assert configs[3] == {}
    assert validate_agent(converted.path) == []


def test_paths_that_still_hold_are_left_as_written(tmp_path: Path) -> None:
    source = watched_agent(tmp_path / "agents" / "worker")
    inside = convert_agent(load_agent(source), source / "tsagent.yaml")  # tsagent's own layout
    assert inside.data["supervisors"][0]["config"]["agentPath"] == "../watcher"
    assert inside.data["settings"]["model"] == "scripted:../turns.yaml"


def test_a_legacy_model_setting_is_rewritten_too(tmp_path: Path) -> None:
    (tmp_path / "turns.yaml").write_text("turns: [{text: hi}]\n")
    source = folder_agent(tmp_path / "old", settings={"mostRecentModel": "scripted:../turns.yaml"})
    converted = convert_agent(load_agent(source), tmp_path / "old.yaml")
    assert converted.data["settings"] == {"mostRecentModel": "scripted:turns.yaml"}


@pytest.mark.parametrize(
    ("value", "old", "new", "moved"),
    [
        ("../architect", "agents/assistant", "agents", "architect"),
        ("architect", "agents", "agents/back", "../architect"),
        ("./watcher.yaml", "a", "a", "./watcher.yaml"),
        ("sub/../x", "a", "b", "../a/x"),
    ],
)
def test_moved_paths_are_relative_and_posix(
    tmp_path: Path, value: str, old: str, new: str, moved: str
) -> None:
    assert moved_path(value, tmp_path / old, tmp_path / new) == moved


def test_a_folder_with_both_files_opens_the_yaml_one(tmp_path: Path) -> None:
    (tmp_path / "watcher.yaml").write_text(WATCHER_AGENT)
    folder = folder_agent(tmp_path / "migrated")  # the JSON that tsagent's migration left
    (folder / "tsagent.yaml").write_text(YAML_AGENT.replace("./watcher", "../watcher"))
    document = read_agent(folder)
    assert (document.path, document.format) == (folder / "tsagent.yaml", AgentFormat.YAML)
    assert document.agent is not None and document.agent.metadata.name == "Single File"
    assert ignored_config(folder) == folder / "tsagent.json"
    assert ignored_config(folder / "tsagent.yaml") is None


def test_a_new_agent_is_refused_in_a_folder_holding_tsagent_yaml(tmp_path: Path) -> None:
    (tmp_path / "modern").mkdir()
    (tmp_path / "modern" / "tsagent.yaml").write_text(WATCHER_AGENT)
    problem = new_agent_path_problem(tmp_path / "modern")
    assert problem is not None and "already holds an agent" in problem.message


def test_loading_an_agent_to_use_it_reports_what_validate_reports(tmp_path: Path) -> None:
    lost = {"type": "agent", "id": "lost", "config": {"agentPath": "../gone"}}
    source = folder_agent(tmp_path / "worker", supervisors=[lost])
    with pytest.raises(AgentError) as refused:
        load_agent(source)
    assert refused.value.problems == validate_agent(source)
    assert "no agent at '../gone'" in str(refused.value)


def test_a_file_that_is_not_utf8_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "latin.yaml"
    path.write_bytes("metadata: {name: Caf\xe9}\n".encode("latin-1"))
    [problem] = validate_agent(path)
    assert problem.file == path and "not UTF-8" in problem.message
    with pytest.raises(AgentError, match="not UTF-8"):
        load_agent(path)
