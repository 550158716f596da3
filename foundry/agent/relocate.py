"""Converting an agent to another place or format, its relative paths rewritten to still hold."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from foundry.agent.document import (
    AgentDocument,
    base_dir_of,
    format_for_path,
    save_agent,
)
from foundry.agent.models import Agent, AgentModel, StdioServer

PATH_FIELDS = ("agent_path", "supervisor_agent_path", "export_path")  # of supervisors' configs
SCRIPTED = "scripted:"
PathChange = Callable[[str], str]


def convert_agent(document: AgentDocument, target: Path) -> AgentDocument:
    """Save the agent at `target` (its format from the name), with every relative path
    rewritten so that, read from the new place, it names the same file or folder."""
    if document.agent is not None:  # (save_agent says why an agent without one cannot be saved)
        new_base = base_dir_of(target, format_for_path(target))
        moved = relocate_agent(document.agent, document.base_dir, new_base)
        document = replace(document, agent=moved)
    return save_agent(document, target)


def relocate_agent(agent: Agent, old_base: Path, new_base: Path) -> Agent:
    """A copy of `agent` whose relative paths, read from `new_base`, name what they named when
    read from `old_base`: supervisors' agents and export files, stdio servers' working folders
    and a scripted model's file. Absolute paths, and paths that still hold, stay as written."""
    moved = agent.model_copy(deep=True)

    def move(value: str) -> str:
        return moved_path(value, old_base, new_base)

    for entry in moved.supervisors:
        for name in PATH_FIELDS:
            _update(entry.config, name, move)
    for server in moved.mcp_servers.values():
        if isinstance(server, StdioServer):
            _update(server, "cwd", move)
    for name in ("model", "mostRecentModel"):
        _update(moved.settings, name, lambda value: _moved_model(value, move))
    return moved


def _update(model: AgentModel, name: str, change: PathChange) -> None:
    """Set a text field (or kept extra) to its changed value; an unchanged one is not touched,
    so that a field the file did not have is not written."""
    value = getattr(model, name, None)
    if not isinstance(value, str) or not value:
        return
    changed = change(value)
    if changed != value:
        setattr(model, name, changed)


def _moved_model(reference: str, move: PathChange) -> str:
    """`scripted:FILE` names a file relative to the agent; other models name no file."""
    if not reference.startswith(SCRIPTED):
        return reference
    return SCRIPTED + move(reference.removeprefix(SCRIPTED))


def moved_path(value: str, old_base: Path, new_base: Path) -> str:
    """`value`, relative to `old_base`, rewritten relative to `new_base` (posix style)."""
    if Path(value).is_absolute():
        return value
    target = Path(os.path.normpath(old_base.resolve() / value))
    if Path(os.path.normpath(new_base.resolve() / value)) == target:
        return value
    try:
        return Path(os.path.relpath(target, new_base.resolve())).as_posix()
    except ValueError:  # on another drive (Windows): only an absolute path reaches it
        return target.as_posix()
