"""What of a saved agent an open chat takes at its next step, and what waits for a restart.

A chat judges each tool call and each message afresh, so its policy (the policy supervisor and
`toolPermission`) and its guardians can change between two steps. Its tool servers, model,
prompt, rules and references, settings and other supervisors were started or read when the
chat began: those change when the chat restarts on the saved agent (`Engine.restart_session`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from foundry.agent.folder import CONFIG_FILE, ITEM_FOLDERS, PROMPT_FILE
from foundry.agent.models import Agent, GuardianSupervisorEntry, SupervisorEntry
from foundry.session.supervisors import MessageSupervisor
from foundry.supervision.guardian import GuardianSupervisor

AGENT_FILES = (CONFIG_FILE, PROMPT_FILE, "tsagent.yaml", "tsagent.yml")  # of a folder agent
LIVE_TYPES = ("policy", "guardian")  # the supervisors a chat takes between two steps
POLICY = "its policy"
GUARDIAN = "its guardian"


def in_force(running: Agent, saved: Agent) -> Agent:
    """The agent a chat running `running` runs once `saved` is applied: `running` with the
    saved policy, guardians and `toolPermission`; its other supervisors stay as they run."""
    settings = running.settings.model_copy(
        update={"tool_permission": saved.settings.tool_permission}
    )
    supervisors = _merged(running.supervisors, saved.supervisors)
    return running.model_copy(update={"settings": settings, "supervisors": supervisors})


def _live(entry: SupervisorEntry) -> bool:
    return entry.type in LIVE_TYPES


def _merged(running: Sequence[SupervisorEntry], saved: Sequence[SupervisorEntry]) -> list[Any]:
    """The saved order, with the running entry in place of each other supervisor that runs;
    one that runs and is no longer saved stays, last, until the restart."""
    others = {entry.id: entry for entry in running if not _live(entry)}
    merged: list[SupervisorEntry] = []
    for entry in saved:
        if _live(entry):
            merged.append(entry)
        elif entry.id in others:
            merged.append(others.pop(entry.id))
    return [*merged, *others.values()]


def applied(before: Agent, after: Agent) -> tuple[str, ...]:
    """What changed at once between the agent a chat ran and the one it runs now."""
    changed = []
    policy_before = (_of_type(before, "policy"), before.settings.tool_permission)
    if policy_before != (_of_type(after, "policy"), after.settings.tool_permission):
        changed.append(POLICY)
    if _of_type(before, "guardian") != _of_type(after, "guardian"):
        changed.append(GUARDIAN)
    return tuple(changed)


def waiting_for_restart(running: Agent, saved: Agent) -> tuple[str, ...]:
    """What of `saved` a chat running `running` takes only when it restarts, in words."""
    return tuple(
        words
        for words, part in (
            ("its name", lambda agent: agent.metadata.name),
            ("its model", lambda agent: (agent.settings.model_reference, agent.providers)),
            ("its tool servers", lambda agent: agent.mcp_servers),
            ("its prompt", lambda agent: agent.system_prompt),
            ("its rules", lambda agent: agent.rules),
            ("its references", lambda agent: agent.references),
            ("its settings", _other_settings),
            ("its other supervisors", lambda agent: _others(agent)),
        )
        if _dumped(part(running)) != _dumped(part(saved))
    )


def with_guardians(running: Sequence[MessageSupervisor], agent: Agent) -> list[MessageSupervisor]:
    """A chat's message supervisors with `agent`'s guardians in place of the ones it ran; the
    others are the same objects, in `agent`'s order."""
    others = {s.id: s for s in running if not isinstance(s, GuardianSupervisor)}
    placed: list[MessageSupervisor] = []
    for entry in agent.supervisors:
        if isinstance(entry, GuardianSupervisorEntry):
            if entry.enabled:
                placed.append(GuardianSupervisor(entry))
        elif entry.id in others:
            placed.append(others.pop(entry.id))
    return [*placed, *others.values()]


def _of_type(agent: Agent, kind: str) -> list[Any]:
    return [entry.model_dump(mode="json") for entry in agent.supervisors if entry.type == kind]


def _others(agent: Agent) -> list[SupervisorEntry]:
    return [entry for entry in agent.supervisors if not _live(entry)]


def _other_settings(agent: Agent) -> dict[str, Any]:
    settings = agent.settings.model_dump(mode="json", by_alias=True)
    for taken_elsewhere in ("model", "mostRecentModel", "toolPermission"):
        settings.pop(taken_elsewhere, None)
    return settings


def _dumped(value: Any) -> Any:
    """`value` as plain data, so that parts compare by what they hold."""
    if isinstance(value, list | tuple):
        return [_dumped(item) for item in value]
    if isinstance(value, dict):
        return {key: _dumped(item) for key, item in value.items()}
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    return value


Stamp = tuple[tuple[str, int, int], ...]


def agent_stamp(path: Path) -> Stamp:
    """What changes when an agent's files are written: each one's name, time and size (a
    folder's own files and its rules' and references', not the rest of its workspace).
    Blocking: it reads the folders."""
    files = [path] if path.is_file() else [path / name for name in AGENT_FILES]
    for folder in ITEM_FOLDERS.values():
        if path.is_dir() and (path / folder).is_dir():
            files.extend(sorted((path / folder).iterdir()))
    stamps = []
    for file in files:
        try:
            status = os.stat(file)
        except OSError:
            continue
        stamps.append((str(file), status.st_mtime_ns, status.st_size))
    return tuple(stamps)
