"""Saving an agent's file as text: checked first, atomic, and never over what is on disk now."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from foundry.agent.document import read_agent
from foundry.agent.problems import AgentError
from foundry.agent.raw_files import (
    agent_files,
    check_text,
    editable_text,
    save_text,
    written_text,
)
from foundry.agent.templates import create_agent, new_agent

RULE = "---\nname: be-brief\ninclude: always\npriorityLevel: 100\n---\nAnswer in one sentence.\n"


def folder_agent(path: Path) -> Path:
    create_agent(path, new_agent("Demo", "raw files"))
    (path / "rules").mkdir(exist_ok=True)
    (path / "rules" / "be-brief.mdt").write_text(RULE)
    return path


def broken_json(path: Path) -> tuple[Path, str]:
    """The agent's tsagent.json with a comma too many on line 3; its good text."""
    config = path / "tsagent.json"
    good = config.read_text()
    lines = good.splitlines(keepends=True)
    lines[2] = lines[2].replace(",", ",,", 1) if "," in lines[2] else lines[2] + ",,"
    config.write_text("".join(lines))
    return config, good


def test_the_files_of_a_folder_agent_are_listed(tmp_path: Path) -> None:
    path = folder_agent(tmp_path / "demo")
    names = [file.relative_to(path).as_posix() for file in agent_files(read_agent(path))]
    assert names[0] == "tsagent.json" and "rules/be-brief.mdt" in names


def test_a_broken_tsagent_json_is_repaired_as_text(tmp_path: Path) -> None:
    path = folder_agent(tmp_path / "demo")
    config, good = broken_json(path)
    broken = read_agent(path)
    assert broken.agent is None

    with pytest.raises(AgentError) as still_broken:
        save_text(broken, config, config.read_text(), config.read_text())
    [problem] = still_broken.value.problems
    assert problem.file == config and problem.line == 3
    assert problem.message.startswith("invalid JSON")

    repaired = save_text(broken, config, good, config.read_text())
    assert repaired.agent is not None and repaired.agent.metadata.name == "Demo"
    assert config.read_text() == good


def test_a_broken_agent_takes_a_text_that_parses_so_it_can_be_repaired_in_steps(
    tmp_path: Path,
) -> None:
    path = folder_agent(tmp_path / "demo")
    config, good = broken_json(path)
    data = json.loads(good)
    data["settings"]["temperature"] = 5
    step = json.dumps(data, indent=2)
    saved = save_text(read_agent(path), config, step, config.read_text())
    assert saved.agent is None
    assert any(problem.field == "settings.temperature" for problem in saved.problems)


def test_a_text_that_would_break_a_usable_agent_is_refused_and_nothing_is_written(
    tmp_path: Path,
) -> None:
    path = folder_agent(tmp_path / "demo")
    config = path / "tsagent.json"
    before = config.read_text()
    data = json.loads(before)
    data["settings"]["temperature"] = 5
    with pytest.raises(AgentError) as refused:
        save_text(read_agent(path), config, json.dumps(data), before)
    [problem] = refused.value.problems
    assert (problem.file, problem.field) == (config, "settings.temperature")
    assert config.read_text() == before


def test_a_file_changed_on_disk_since_it_was_shown_is_not_written_over(tmp_path: Path) -> None:
    path = folder_agent(tmp_path / "demo")
    rule = path / "rules" / "be-brief.mdt"
    document = read_agent(path)
    rule.write_text(RULE.replace("one sentence", "two sentences"))
    with pytest.raises(AgentError, match="changed on disk since it was shown"):
        save_text(document, rule, RULE.replace("one", "a single"), RULE)
    assert "two sentences" in rule.read_text()


def test_only_the_agents_own_files_are_written(tmp_path: Path) -> None:
    path = folder_agent(tmp_path / "demo")
    other = tmp_path / "elsewhere.txt"
    with pytest.raises(AgentError, match="not one of the agent's files"):
        check_text(read_agent(path), other, "anything")
    assert not other.exists()


def test_a_rule_whose_header_does_not_parse_is_refused_with_its_line(tmp_path: Path) -> None:
    path = folder_agent(tmp_path / "demo")
    rule = path / "rules" / "be-brief.mdt"
    with pytest.raises(AgentError) as refused:
        check_text(read_agent(path), rule, RULE.replace("include: always", "include: [always"))
    [problem] = refused.value.problems
    assert problem.file == rule and problem.line is not None


def test_a_yaml_agent_is_repaired_as_text(tmp_path: Path) -> None:
    path = tmp_path / "demo.yaml"
    create_agent(path, new_agent("Demo", "one file"))
    good = path.read_text()
    path.write_text(good.replace("name: Demo", "name: [Demo", 1))
    broken = read_agent(path)
    sidecar = tmp_path / "demo.foundry.json"  # its policy, beside it
    assert broken.agent is None and agent_files(broken) == [path, sidecar]
    repaired = save_text(broken, path, good, path.read_text())
    assert repaired.agent is not None


def test_line_endings_and_a_byte_order_mark_are_kept() -> None:
    original = '\ufeff{\r\n  "a": 1\r\n}\r\n'
    shown = editable_text(original)
    assert shown == '{\n  "a": 1\n}\n'
    assert written_text(shown.replace("1", "2"), original) == '\ufeff{\r\n  "a": 2\r\n}\r\n'


def test_a_text_validate_would_refuse_is_refused_for_a_usable_agent(sample_agents: Path) -> None:
    path = sample_agents / "assistant"
    config = path / "tsagent.json"
    before = config.read_text()
    text = before.replace('"../architect"', '"../gone"', 1)
    assert text != before
    with pytest.raises(AgentError) as refused:
        save_text(read_agent(path), config, text, before)
    assert any("no agent at '../gone'" in problem.message for problem in refused.value.problems)
    assert config.read_text() == before
