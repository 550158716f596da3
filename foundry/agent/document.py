"""Opening and saving agents in either format, with every problem found reported at once."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from foundry.agent.atomic import write_files_atomically
from foundry.agent.folder import (
    CONFIG_FILE,
    FolderSource,
    drop_items,
    is_agent_folder,
    read_folder,
    render_folder,
)
from foundry.agent.models import Agent, AgentModel
from foundry.agent.problems import (
    AgentError,
    AgentProblem,
    field_path,
    parse_field_path,
    problems_from_validation,
)
from foundry.agent.sidecar import (
    merge_sidecar,
    read_sidecar,
    render_sidecar,
    sidecar_path,
    sidecar_places,
    split_for_tsagent,
)
from foundry.agent.yamlfile import YamlSource, is_yaml_agent, read_yaml_agent, render_yaml_agent

YAML_IN_FOLDER = ("tsagent.yaml", "tsagent.yml")


class AgentFormat(StrEnum):
    FOLDER = "folder"
    YAML = "yaml"


Source = FolderSource | YamlSource


@dataclass
class AgentDocument:
    """An agent together with where it lives and what was read, so saves stay lossless.

    `agent` is None when the main file could not be read or validated; `problems` then says why.
    `broken_files` are files that failed to load: a save never writes or deletes them.
    `data` is the document as read, before validation, for checks that must run even when the
    agent itself is invalid.
    """

    path: Path
    format: AgentFormat
    agent: Agent | None
    problems: list[AgentProblem] = field(default_factory=list)
    source: Source | None = None
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def broken_files(self) -> set[Path]:
        return self.source.broken_files if self.source else set()

    @property
    def base_dir(self) -> Path:
        """The folder that relative paths in the agent (agentPath, cwd) start from."""
        return base_dir_of(self.path, self.format)


def base_dir_of(path: Path, agent_format: AgentFormat) -> Path:
    """Where relative paths of an agent at `path` start: its folder, or its YAML file's folder."""
    return path if agent_format is AgentFormat.FOLDER else path.parent


def format_for_path(path: Path) -> AgentFormat:
    """The format a path holds or, for a new path, the one its name asks for."""
    return AgentFormat.YAML if is_yaml_agent(path) else AgentFormat.FOLDER


def resolve_agent_path(path: Path) -> Path:
    """A folder holding `tsagent.yaml` (tsagent's current layout) is the YAML agent inside it,
    as in tsagent: the `tsagent.json` its migration leaves beside the YAML file is not read."""
    if path.is_dir():
        for name in YAML_IN_FOLDER:
            if (path / name).is_file():
                return path / name
    return path


def is_agent_path(path: Path) -> bool:
    """An agent folder, or a file in the one-file YAML format."""
    return is_agent_folder(path) or (path.is_file() and is_yaml_agent(path))


def ignored_config(path: Path) -> Path | None:
    """The `tsagent.json` that is not read because a YAML agent file beside it is, if any."""
    if resolve_agent_path(path) != path and is_agent_folder(path):
        return path / CONFIG_FILE
    return None


def read_agent(path: Path) -> AgentDocument:
    """Read an agent, keeping every problem; a broken rule or reference leaves the rest usable."""
    path = resolve_agent_path(Path(path))
    agent_format = format_for_path(path)
    source: Source
    problems: list[AgentProblem] = []
    try:
        sidecar_file = sidecar_path(path, agent_format is AgentFormat.FOLDER)
        sidecar = read_sidecar(sidecar_file)
        if agent_format is AgentFormat.FOLDER:
            document, source, problems = _read_folder_document(path, sidecar)
        else:
            document, source = read_yaml_agent(path)
    except AgentError as error:
        return AgentDocument(path=path, format=agent_format, agent=None, problems=error.problems)
    document = merge_sidecar(document, sidecar)
    source.sidecar = sidecar_places(sidecar_file, sidecar, document)
    data = dict(document)
    agent, validation_problems = _validate(document, source, sidecar)
    return AgentDocument(
        path=path,
        format=agent_format,
        agent=agent,
        problems=[*problems, *validation_problems],
        source=source,
        data=data,
    )


def _read_folder_document(
    path: Path, sidecar: dict[str, Any]
) -> tuple[dict[str, Any], FolderSource, list[AgentProblem]]:
    if not path.exists():
        raise AgentError([AgentProblem(file=path, message=f"no agent here: {_why_missing(path)}")])
    return read_folder(path, sidecar)


def _why_missing(path: Path) -> str:
    """Why nothing is at `path`: a link that leads nowhere is not a folder that is missing."""
    if not path.is_symlink():
        return "the folder does not exist"
    try:
        path.resolve(strict=True)
    except FileNotFoundError:
        return f"it is a symbolic link to {os.readlink(path)!r}, which does not exist"
    except (RuntimeError, OSError):  # a loop (RuntimeError up to Python 3.12)
        pass
    return "it is a symbolic link that loops back on itself"


def _validate(
    document: dict[str, Any], source: Source, sidecar: dict[str, Any]
) -> tuple[Agent | None, list[AgentProblem]]:
    """Validate the document; items of a folder agent that fail are set aside as broken files."""
    try:
        return Agent.model_validate(document), []
    except ValidationError as error:
        problems = locate_problems(error, source)
        failed = _failed_items(error)
        config_failed = _config_failed(error)
        if not isinstance(source, FolderSource) or not failed:
            return None, problems
    for section, indexes in failed.items():  # never written by a save, whatever else fails
        document = merge_sidecar(drop_items(source, section, indexes), sidecar)
    if config_failed:
        return None, problems
    try:
        return Agent.model_validate(document), problems
    except ValidationError:
        return None, problems


def _failed_items(error: ValidationError) -> dict[str, set[int]]:
    failed: dict[str, set[int]] = {}
    for item in error.errors():
        location = item["loc"]
        if len(location) >= 2 and location[0] in ("rules", "references"):
            failed.setdefault(str(location[0]), set()).add(int(location[1]))
    return failed


def _config_failed(error: ValidationError) -> bool:
    return any(item["loc"][:1] not in (("rules",), ("references",)) for item in error.errors())


def locate_problems(error: ValidationError, source: Source) -> list[AgentProblem]:
    problems = []
    for problem in problems_from_validation(error, Path(".")):
        location = parse_field_path(problem.field)
        file, inner = source.locate(location)
        line = source.line_of(location)
        problems.append(
            problem.model_copy(update={"file": file, "field": field_path(inner), "line": line})
        )
    return problems


def load_agent(path: Path) -> AgentDocument:
    """Read an agent to use it: raises AgentError with every problem `foundry validate` would
    report (its files, and the checks across files such as its supervisors' agents)."""
    from foundry.agent.checks import inspect_agent  # checks.py imports this module

    document, problems = inspect_agent(path)
    if problems or document.agent is None:
        raise AgentError(problems)
    return document


def to_document(agent: AgentModel) -> dict[str, Any]:
    """The agent (or a part of it) as plain data in tsagent's field names, only with the fields
    it was given: what its file holds."""
    return agent.model_dump(mode="json", by_alias=True, exclude_unset=True)


def save_agent(
    document: AgentDocument, path: Path | None = None, agent_format: AgentFormat | None = None
) -> AgentDocument:
    """Write the agent atomically (to `path` in `agent_format` for "save as") and re-read it.

    Only files whose content changed are written. Files that failed to load are never touched.
    """
    if document.agent is None:
        problem = AgentProblem(file=document.path, message="has errors, so it cannot be saved")
        raise AgentError([problem, *document.problems])
    target = Path(path) if path is not None else document.path
    target_format = agent_format or (document.format if path is None else format_for_path(target))
    is_folder = target_format is AgentFormat.FOLDER
    source = document.source if target_format is document.format else None
    data, foundry_only = split_for_tsagent(
        to_document(document.agent), keep_order=is_folder, fill_required=source is None
    )
    if is_folder:
        folder_source = source if isinstance(source, FolderSource) else None
        writes, removals = render_folder(data, target, folder_source)
    else:
        yaml_source = source if isinstance(source, YamlSource) else None
        text = render_yaml_agent(data, yaml_source)
        unchanged = yaml_source is not None and yaml_source.text == text
        writes, removals = ({} if unchanged and target == document.path else {target: text}), ()
    sidecar_writes, sidecar_removals = _sidecar_files(sidecar_path(target, is_folder), foundry_only)
    write_files_atomically({**writes, **sidecar_writes}, (*removals, *sidecar_removals))
    return read_agent(target)


def _sidecar_files(
    path: Path, foundry_only: dict[str, Any]
) -> tuple[dict[Path, str], tuple[Path, ...]]:
    """The sidecar to write (when its content changes), or to delete once it holds nothing."""
    text = render_sidecar(foundry_only)
    if text is None:
        return {}, ((path,) if os.path.lexists(path) else ())
    try:
        current = path.read_text(encoding="utf-8") if path.is_file() else None
    except (OSError, UnicodeError):
        current = None
    return ({} if current == text else {path: text}), ()


def new_agent_path_problem(path: Path) -> AgentProblem | None:
    """Why a new agent cannot be created at `path`, if it cannot."""
    if format_for_path(path) is AgentFormat.YAML and path.exists():
        return AgentProblem(file=path, message="already exists; choose another file name")
    if path.is_dir() and ((path / CONFIG_FILE).exists() or resolve_agent_path(path) != path):
        return AgentProblem(file=path, message="already holds an agent; choose another folder")
    return None
