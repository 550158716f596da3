"""Saves are atomic, touch only what changed, and never overwrite a file that failed to load."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from foundry.agent import AgentError, Rule, atomic, load_agent, read_agent, save_agent
from foundry.agent.templates import create_agent, new_agent

from .test_formats import snapshot


def test_a_save_that_fails_midway_leaves_every_original(
    sample_agents: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assistant = sample_agents / "assistant"
    before = snapshot(assistant)
    document = load_agent(assistant)
    assert document.agent is not None
    document.agent.settings.temperature = 0.1
    document.agent.system_prompt = "Changed."
    for rule in document.agent.rules:
        rule.priority_level += 1

    real_stage = atomic._stage
    staged: list[Path] = []

    def stage_then_fail(path: Path, content: str) -> Path:
        if len(staged) == 3:
            raise OSError(28, "No space left on device", str(path))
        staged.append(real_stage(path, content))
        return staged[-1]

    monkeypatch.setattr(atomic, "_stage", stage_then_fail)
    with pytest.raises(AgentError, match="No space left on device"):
        save_agent(document)
    assert snapshot(assistant) == before
    assert not any(path.exists() for path in staged)


def test_a_crash_while_writing_one_file_leaves_it_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "file.txt"
    target.write_text("old content")

    def fail_fsync(fd: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fsync", fail_fsync)
    with pytest.raises(AgentError, match=r"file\.txt: could not be written"):
        atomic.write_file_atomically(target, "new content")
    assert target.read_text() == "old content"
    assert [p.name for p in tmp_path.iterdir()] == ["file.txt"]


def test_only_changed_files_are_written(sample_agents: Path) -> None:
    assistant = sample_agents / "assistant"
    times = {p: p.stat().st_mtime_ns for p in assistant.rglob("*.mdt")}
    os.utime(assistant / "tsagent.json", ns=(1, 1))
    document = load_agent(assistant)
    assert document.agent is not None
    rule = document.agent.rule("formal-tone")
    assert rule is not None
    rule.enabled = False
    save_agent(document)
    changed = [p for p, t in times.items() if p.stat().st_mtime_ns != t]
    assert changed == [assistant / "rules" / "formal-tone.mdt"]
    assert (assistant / "tsagent.json").stat().st_mtime_ns == 1


def test_a_rule_file_that_failed_to_load_is_never_overwritten(sample_agents: Path) -> None:
    assistant = sample_agents / "assistant"
    broken = assistant / "rules" / "formal-tone.mdt"
    broken.write_text('---\n{"name": "formal-tone", "priorityLevel": 5000}---\nbroken')
    document = read_agent(assistant)
    assert document.agent is not None, "the rest of the agent stays usable"
    assert document.broken_files == {broken}
    assert document.agent.rule("formal-tone") is None

    document.agent.system_prompt = "Still saved."
    save_agent(document)
    assert broken.read_text().endswith("broken"), "not deleted or rewritten"
    assert (assistant / "prompt.md").read_text() == "Still saved."

    document = read_agent(assistant)
    assert document.agent is not None
    document.agent.rules.append(Rule(name="formal-tone", text="replacement"))
    with pytest.raises(AgentError, match="not overwritten"):
        save_agent(document)
    assert broken.read_text().endswith("broken")


def test_an_agent_whose_config_failed_to_load_cannot_be_saved(sample_agents: Path) -> None:
    config = sample_agents / "architect" / "tsagent.json"
    config.write_text("{ not json")
    document = read_agent(sample_agents / "architect")
    assert document.agent is None
    with pytest.raises(AgentError, match="cannot be saved"):
        save_agent(document)
    assert config.read_text() == "{ not json"


def test_create_agent_never_replaces_an_existing_one(tmp_path: Path) -> None:
    create_agent(tmp_path / "a", new_agent("A"))
    with pytest.raises(AgentError, match="already holds an agent"):
        create_agent(tmp_path / "a", new_agent("B"))
    assert load_agent(tmp_path / "a").agent.metadata.name == "A"  # type: ignore[union-attr]
