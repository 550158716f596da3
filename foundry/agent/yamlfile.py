"""tsagent's single-file format: one YAML file holding the whole agent."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from foundry.agent.overlay import equivalent, overlay
from foundry.agent.problems import AgentError, AgentProblem
from foundry.agent.sidecar import SidecarPlaces
from foundry.agent.syntax import (
    parse_yaml,
    plain,
    read_text,
    render_yaml,
    same_data,
    split_bom,
    yaml_line_of,
)
from foundry.agent.textmerge import carry_changes
from foundry.agent.tsyaml import render_tsagent_yaml

YAML_SUFFIXES = (".yaml", ".yml")


@dataclass
class YamlSource:
    """The file as read (comments and order included), so a save changes only what was edited."""

    path: Path
    root: Any = None
    text: str | None = None
    sidecar: SidecarPlaces | None = None

    def locate(self, location: tuple[str | int, ...]) -> tuple[Path, tuple[str | int, ...]]:
        in_sidecar, location = self._in_file(location)
        if in_sidecar and self.sidecar is not None:
            return self.sidecar.file, location
        return self.path, location

    def line_of(self, location: tuple[str | int, ...]) -> int | None:
        """The line of the deepest key along `location` that exists in the file."""
        in_sidecar, location = self._in_file(location)
        return None if in_sidecar else yaml_line_of(self.root, location)

    def _in_file(self, location: tuple[str | int, ...]) -> tuple[bool, tuple[str | int, ...]]:
        return self.sidecar.place(location) if self.sidecar else (False, location)

    @property
    def broken_files(self) -> set[Path]:
        return set()


def is_yaml_agent(path: Path) -> bool:
    return path.suffix.lower() in YAML_SUFFIXES


def read_yaml_agent(path: Path) -> tuple[dict[str, Any], YamlSource]:
    text = read_text(path)
    root = parse_yaml(text, path)
    if not isinstance(root, dict):
        raise AgentError([AgentProblem(file=path, message="must hold a mapping of agent fields")])
    return plain(root), YamlSource(path=path, root=root, text=text)


def render_yaml_agent(document: dict[str, Any], source: YamlSource | None) -> str:
    """The file's new text: only what changed is rewritten, the rest keeps its bytes.

    Comments, anchors and aliases stay. Raises AgentError rather than write text that would
    not read back as `document`.
    """
    if source is None or source.root is None:
        return _new_text(document)
    merged = overlay(source.root, document)
    if merged is source.root and source.text is not None:
        return source.text
    _refuse_unless(equivalent(plain(merged), document), source.path)
    if source.text is None:
        return render_yaml(merged)
    return _edited_text(source.text, source.root, merged, source.path)


def _new_text(document: dict[str, Any]) -> str:
    """A new file as tsagent writes it; in ruamel's spelling should that not read back."""
    text = render_tsagent_yaml(document)
    return text if _reads_as(text, plain(document), Path("new.yaml")) else render_yaml(document)


def _edited_text(text: str, root: Any, merged: Any, path: Path) -> str:
    """The changes from `root` to `merged` carried over to `text`; the whole file re-rendered
    instead when the carried text would not read back as `merged`."""
    bom, original = split_bom(text)
    expected = plain(merged)
    if original == render_tsagent_yaml(plain(root)):  # as tsagent wrote it: edit as tsagent does
        in_tsagent_style = render_tsagent_yaml(expected)
        if _reads_as(in_tsagent_style, expected, path):
            return bom + in_tsagent_style
    rendered = render_yaml(merged)
    carried = carry_changes(original, render_yaml(root), rendered)
    if _reads_as(carried, expected, path):
        return bom + carried
    _refuse_unless(_reads_as(rendered, expected, path), path)
    return bom + rendered


def _reads_as(text: str, expected: Any, path: Path) -> bool:
    try:
        return same_data(plain(parse_yaml(text, path)), expected)
    except AgentError:
        return False


def _refuse_unless(condition: bool, path: Path) -> None:
    if not condition:
        message = (
            "cannot be saved without changing data that was not edited (its anchors and aliases "
            "could not be kept); edit the file by hand"
        )
        raise AgentError([AgentProblem(file=path, message=message)])
