"""tsagent's single-file format: one YAML file holding the whole agent."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from foundry.agent.overlay import overlay
from foundry.agent.problems import AgentError, AgentProblem
from foundry.agent.syntax import parse_yaml, plain, read_text, render_yaml

YAML_SUFFIXES = (".yaml", ".yml")


@dataclass
class YamlSource:
    """The file as read (comments and order included), so a save changes only what was edited."""

    path: Path
    root: Any = None
    text: str | None = None

    def locate(self, location: tuple[str | int, ...]) -> tuple[Path, tuple[str | int, ...]]:
        return self.path, location

    def line_of(self, location: tuple[str | int, ...]) -> int | None:
        """The line of the deepest key along `location` that exists in the file."""
        node, line = self.root, None
        for part in location:
            position = _position(node, part)
            if position is None:
                break
            line = position + 1
            node = node[part]
        return line

    @property
    def broken_files(self) -> set[Path]:
        return set()


def _position(node: Any, part: str | int) -> int | None:
    lines = getattr(node, "lc", None)
    if lines is None:
        return None
    try:
        if isinstance(node, dict) and part in node:
            return int(lines.key(part)[0])
        if isinstance(node, list) and isinstance(part, int) and part < len(node):
            return int(lines.item(part)[0])
    except (KeyError, TypeError, IndexError):
        return None
    return None


def is_yaml_agent(path: Path) -> bool:
    return path.suffix.lower() in YAML_SUFFIXES


def read_yaml_agent(path: Path) -> tuple[dict[str, Any], YamlSource]:
    if not path.is_file():
        raise AgentError([AgentProblem(file=path, message="file not found")])
    text = read_text(path)
    root = parse_yaml(text, path)
    if not isinstance(root, dict):
        raise AgentError([AgentProblem(file=path, message="must hold a mapping of agent fields")])
    return plain(root), YamlSource(path=path, root=root, text=text)


def render_yaml_agent(document: dict[str, Any], source: YamlSource | None) -> str:
    if source is None or source.root is None:
        return render_yaml(document)
    merged = overlay(source.root, document)
    if plain(merged) == plain(source.root) and source.text is not None:
        return source.text
    return render_yaml(merged)
