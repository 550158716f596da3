"""Checks that span fields or files: duplicate names, supervisor paths and supervisor loops.

They read the document as it was read, not the validated agent, so that they still report
their problems when other fields of the same agent are invalid.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from foundry.agent.document import AgentDocument, read_agent, resolve_agent_path
from foundry.agent.problems import AgentProblem, field_path

Location = tuple[str | int, ...]


def validate_agent(path: Path) -> list[AgentProblem]:
    """Every problem of the agent at `path`, its files and its supervisor chain."""
    document = read_agent(Path(path))
    if document.source is None:
        return document.problems
    return [*document.problems, *check_agent(document)]


def check_agent(document: AgentDocument) -> list[AgentProblem]:
    return [
        *_duplicates(document, "rules", "name", "rule name"),
        *_duplicates(document, "references", "name", "reference name"),
        *_duplicates(document, "supervisors", "id", "supervisor id"),
        *_supervisor_paths(document, chain=(_identity(document.path),)),
    ]


def _problem(document: AgentDocument, location: Location, message: str) -> AgentProblem:
    assert document.source is not None
    file, inner = document.source.locate(location)
    return AgentProblem(file=file, field=field_path(inner), message=message)


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
            assert document.source is not None
            first, _ = document.source.locate((section, seen[value]))
            where = first.name if first != document.path else f"{section}[{seen[value]}]"
            message = f"duplicate {what} {value!r} (already used by {where})"
            problems.append(_problem(document, (section, index, key), message))
        else:
            seen[value] = index
    return problems


def _identity(path: Path) -> Path:
    return resolve_agent_path(path).resolve()


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
        target = (document.base_dir / agent_path).resolve()
        message = _supervisor_problem(agent_path, target, chain)
        if message:
            problems.append(_problem(document, location, message))
    return problems


def _supervisor_problem(agent_path: str, target: Path, chain: tuple[Path, ...]) -> str | None:
    if not target.exists():
        return f"no agent at {agent_path!r} (looked for {target})"
    identity = _identity(target)
    if identity in chain:
        names = " → ".join(_display_name(path) for path in (*chain, identity))
        return f"supervisor chain loops back: {names}"
    supervisor = read_agent(target)
    if supervisor.agent is None or supervisor.problems:
        count = len(supervisor.problems)
        return f"the supervisor agent at {agent_path!r} has {count} problem(s); validate it"
    for _, nested_path in _supervisor_agent_paths(supervisor):
        nested_target = (supervisor.base_dir / nested_path).resolve()
        nested = _supervisor_problem(nested_path, nested_target, (*chain, identity))
        if nested:
            return nested if "loops back" in nested else f"in {_display_name(identity)}: {nested}"
    return None


def _display_name(path: Path) -> str:
    return path.stem if path.is_file() else path.name
