"""Checks that span fields or files: duplicate names, supervisor paths and supervisor loops.

They read the document as it was read, not the validated agent, so that they still report
their problems when other fields of the same agent are invalid.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from foundry.agent.document import AgentDocument, read_agent, resolve_agent_path
from foundry.agent.folder import FolderSource
from foundry.agent.problems import AgentProblem, field_path

Location = tuple[str | int, ...]
MAX_SUPERVISOR_CHAIN = 20


def validate_agent(path: Path) -> list[AgentProblem]:
    """Every problem of the agent at `path`, its files and its supervisor chain."""
    return inspect_agent(path)[1]


def inspect_agent(path: Path) -> tuple[AgentDocument, list[AgentProblem]]:
    """The agent at `path` as read, and every problem it has: its files' own, then those
    across fields and files."""
    document = read_agent(Path(path))
    if document.source is None:
        return document, document.problems
    return document, [*document.problems, *check_agent(document)]


def check_agent(document: AgentDocument) -> list[AgentProblem]:
    return [
        *_duplicates(document, "rules", "name", "rule name"),
        *_duplicates(document, "references", "name", "reference name"),
        *_duplicates(document, "supervisors", "id", "supervisor id"),
        *_supervisor_paths(document, chain=(_identity(document.path),)),
    ]


def _problem(
    document: AgentDocument, location: Location, message: str, line: int | None = None
) -> AgentProblem:
    assert document.source is not None
    file, inner = document.source.locate(location)
    return AgentProblem(file=file, field=field_path(inner), message=message, line=line)


def _line_of(document: AgentDocument, location: Location) -> int | None:
    """The line of a location in its file: a YAML agent's, an .mdt header's or tsagent.json's."""
    source = document.source
    assert source is not None
    line = source.line_of(location)
    if line is None and isinstance(source, FolderSource):
        line = source.config_line_of(location)
    return line


def _entries(document: AgentDocument, section: str) -> Iterator[tuple[int, dict[str, Any]]]:
    items = document.data.get(section)
    if isinstance(items, list):
        for index, item in enumerate(items):
            if isinstance(item, dict):
                yield index, item


def _duplicates(document: AgentDocument, section: str, key: str, what: str) -> list[AgentProblem]:
    seen: dict[Any, int] = {}
    problems = []
    for index, item in _entries(document, section):
        value = item.get(key)
        if not isinstance(value, str):
            continue
        if value in seen:
            where = _first_use(document, (section, seen[value], key), (section, index, key))
            message = f"duplicate {what} {value!r} (already used by {where})"
            location = (section, index, key)
            problems.append(_problem(document, location, message, _line_of(document, location)))
        else:
            seen[value] = index
    return problems


def _first_use(document: AgentDocument, first: Location, duplicate: Location) -> str:
    """Where the first of two equal names is: its file, or its entry and line in the same file."""
    assert document.source is not None
    file, _ = document.source.locate(first)
    if file != document.source.locate(duplicate)[0]:
        return file.name
    line = _line_of(document, first)
    entry = field_path(first[:2])
    return f"{entry} on line {line}" if line is not None else entry


def _identity(path: Path) -> Path:
    return _resolved(resolve_agent_path(path)) or Path(os.path.abspath(path))


def _resolved(path: Path) -> Path | None:
    """`path` made absolute with its links followed; None for a symbolic link loop or a path
    the system cannot take (too long, a NUL character)."""
    try:
        return path.resolve()
    except (OSError, RuntimeError, ValueError):  # RuntimeError: a symbolic link loop
        return None


def _supervisor_agent_paths(document: AgentDocument) -> Iterator[tuple[Location, str]]:
    """(location, path) of every supervisor entry that names another agent."""
    for index, entry in _entries(document, "supervisors"):
        config = entry.get("config")
        if not isinstance(config, dict):
            continue
        for key in ("agentPath", "supervisorAgentPath"):
            value = config.get(key)
            if isinstance(value, str) and value.strip():
                yield ("supervisors", index, "config", key), value


def _supervisor_paths(document: AgentDocument, chain: tuple[Path, ...]) -> list[AgentProblem]:
    problems = []
    for location, agent_path in _supervisor_agent_paths(document):
        message = _supervisor_problem(agent_path, document.base_dir, chain)
        if message:
            problems.append(_problem(document, location, message))
    return problems


def _supervisor_problem(agent_path: str, base_dir: Path, chain: tuple[Path, ...]) -> str | None:
    target = _resolved(base_dir / agent_path)
    if target is None:
        return f"{agent_path[:80]!r} cannot be followed (a symbolic link loop or not a valid path)"
    if not os.path.exists(target):
        return f"no agent at {agent_path!r} (looked for {target})"
    if len(chain) > MAX_SUPERVISOR_CHAIN:
        return f"the supervisor chain is more than {MAX_SUPERVISOR_CHAIN} agents long"
    identity = _identity(target)
    if identity in chain:
        names = " → ".join(_display_name(path) for path in (*chain, identity))
        return f"supervisor chain loops back: {names}"
    supervisor = read_agent(target)
    if supervisor.agent is None or supervisor.problems:
        count = len(supervisor.problems)
        return f"the supervisor agent at {agent_path!r} has {count} problem(s); validate it"
    for _, nested_path in _supervisor_agent_paths(supervisor):
        nested = _supervisor_problem(nested_path, supervisor.base_dir, (*chain, identity))
        if nested:
            return nested if "loops back" in nested else f"in {_display_name(identity)}: {nested}"
    return None


def _display_name(path: Path) -> str:
    return path.stem if path.is_file() else path.name
