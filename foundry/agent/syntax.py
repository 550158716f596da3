"""Parsing and writing JSON and YAML text, with syntax errors reported at their line."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.scalarstring import LiteralScalarString

from foundry.agent.problems import AgentError, AgentProblem


def _round_trip_yaml() -> YAML:
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=4, offset=2)
    return yaml


def parse_json(text: str, file: Path) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        problem = AgentProblem(
            file=file, message=f"invalid JSON: {error.msg}", line=error.lineno, column=error.colno
        )
        raise AgentError([problem]) from None


def render_json(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def parse_yaml(text: str, file: Path, first_line: int = 1) -> Any:
    """Parse YAML keeping comments and key order; `first_line` offsets reported line numbers."""
    try:
        return _round_trip_yaml().load(text)
    except MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = mark.line + first_line if mark else None
        column = mark.column + 1 if mark else None
        reason = error.problem or error.context or "syntax error"
        problem = AgentProblem(
            file=file, message=f"invalid YAML: {reason}", line=line, column=column
        )
        raise AgentError([problem]) from None
    except YAMLError as error:
        raise AgentError([AgentProblem(file=file, message=f"invalid YAML: {error}")]) from None


def render_yaml(data: Any) -> str:
    stream = io.StringIO()
    _round_trip_yaml().dump(_multiline_as_blocks(data), stream)
    return stream.getvalue()


def _multiline_as_blocks(data: Any) -> Any:
    """Write multi-line text as `|` blocks, readable in the file, unless already styled."""
    if isinstance(data, dict):
        for key, value in data.items():
            data[key] = _multiline_as_blocks(value)
    elif isinstance(data, list):
        data[:] = [_multiline_as_blocks(item) for item in data]
    elif type(data) is str and "\n" in data and _block_safe(data):
        return LiteralScalarString(data)
    return data


def _block_safe(text: str) -> bool:
    """Literal blocks cannot hold trailing spaces on a line or some control characters."""
    return not any(line != line.rstrip(" \t") for line in text.split("\n")) and "\r" not in text


def plain(data: Any) -> Any:
    """A deep copy of parsed YAML or JSON as plain dicts and lists (for validation)."""
    if isinstance(data, dict):
        return {str(key): plain(value) for key, value in data.items()}
    if isinstance(data, list):
        return [plain(item) for item in data]
    if isinstance(data, str):
        return str(data)
    return data


def read_text(path: Path) -> str:
    """A file's text exactly as stored: line endings are not translated."""
    with open(path, encoding="utf-8", newline="") as handle:
        return handle.read()
