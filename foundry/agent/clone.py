"""Cloning an agent: a copy under a new name, in a new folder or YAML file."""

from __future__ import annotations

import shutil
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from foundry.agent.document import (
    AgentDocument,
    AgentFormat,
    format_for_path,
    load_agent,
    new_agent_path_problem,
    read_agent,
    save_agent,
)
from foundry.agent.problems import AgentError


def clone_agent(source: Path, target: Path, name: str) -> AgentDocument:
    """Copy the agent at `source` to `target` (its format from the name) and call it `name`.

    A folder cloned to a folder is copied whole, so files beside the agent (scripts its servers
    run, a .env) come along; other clones are a save in the target's format.
    """
    problem = new_agent_path_problem(target)
    if problem:
        raise AgentError([problem])
    document = load_agent(source)
    assert document.agent is not None  # load_agent raises for an agent with problems
    agent = document.agent.model_copy(deep=True)
    now = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    agent.metadata.name = name
    agent.metadata.created = now
    agent.metadata.last_accessed = now
    folders = document.format is AgentFormat.FOLDER
    if folders and format_for_path(target) is AgentFormat.FOLDER:
        shutil.copytree(document.path, target, dirs_exist_ok=True)
        return save_agent(replace(read_agent(target), agent=agent))
    return save_agent(replace(document, agent=agent), target)
