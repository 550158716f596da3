"""The `.mdt` file of a rule or reference: a JSON or YAML header between `---` lines, then text."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from foundry.agent.problems import AgentError, AgentProblem
from foundry.agent.syntax import parse_yaml, render_json, render_yaml

_OPENING = re.compile(r"\A---[ \t]*(\r?\n)")
_YAML_CLOSING = re.compile(r"^---[ \t]*(\r?\n|\Z)", re.MULTILINE)
_JSON_CLOSING = re.compile(r"[ \t\r\n]*---[ \t]*(\r?\n|\Z)")


@dataclass
class MdtFile:
    """A parsed `.mdt` file that remembers how it was written, so an unchanged one stays byte-exact.

    `source` is the whole file as read; `header_source` the header's own text. A new file is
    written the way tsagent writes it: a JSON header whose closing `}` runs into `---`.
    """

    header: dict[str, Any]
    text: str
    header_format: Literal["json", "yaml"] = "json"
    header_source: str | None = None
    source: str | None = None
    closing: str = "---\n"
    newline: str = "\n"
    raw_header: Any = field(default=None, repr=False)
    raw_text: str | None = field(default=None, repr=False)


def parse_mdt(content: str, file: Path) -> MdtFile:
    opening = _OPENING.match(content)
    if not opening:
        return MdtFile(header={}, text=content, source=content, raw_header={}, raw_text=content)
    newline = opening.group(1)
    start = opening.end()
    if content[start:].lstrip().startswith("{"):
        return _parse_json_header(content, start, newline, file)
    return _parse_yaml_header(content, start, newline, file)


def _parse_json_header(content: str, start: int, newline: str, file: Path) -> MdtFile:
    begin = start + (len(content[start:]) - len(content[start:].lstrip()))
    try:
        _, end = json.JSONDecoder().raw_decode(content, begin)
    except json.JSONDecodeError as error:
        problem = AgentProblem(
            file=file,
            message=f"invalid JSON in the header: {error.msg}",
            line=error.lineno,
            column=error.colno,
        )
        raise AgentError([problem]) from None
    closing = _JSON_CLOSING.match(content, end)
    if not closing:
        line = content.count("\n", 0, end) + 1
        problem = AgentProblem(
            file=file, line=line, message="the header must be followed by a `---` line"
        )
        raise AgentError([problem])
    header_source = content[start:end]
    header = _header_mapping(json.loads(header_source), file)
    return MdtFile(
        header=header,
        text=content[closing.end() :],
        header_format="json",
        header_source=header_source,
        source=content,
        closing=content[end : closing.end()],
        newline=newline,
        raw_header=header,
        raw_text=content[closing.end() :],
    )


def _parse_yaml_header(content: str, start: int, newline: str, file: Path) -> MdtFile:
    closing = _YAML_CLOSING.search(content, start)
    if not closing:
        problem = AgentProblem(
            file=file, line=1, message="the header's closing `---` line is missing"
        )
        raise AgentError([problem])
    header_source = content[start : closing.start()]
    raw = parse_yaml(header_source, file, first_line=2)
    header = _header_mapping(raw, file)
    return MdtFile(
        header=header,
        text=content[closing.end() :],
        header_format="yaml",
        header_source=header_source,
        source=content,
        closing=content[closing.start() : closing.end()],
        newline=newline,
        raw_header=raw,
        raw_text=content[closing.end() :],
    )


def _header_mapping(value: Any, file: Path) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise AgentError([AgentProblem(file=file, line=2, message="the header must be a mapping")])
    return value


def render_mdt(mdt: MdtFile) -> str:
    """The file's text: the original bytes when nothing changed, else the same style re-rendered."""
    unchanged_header = mdt.header_source is not None and mdt.header == mdt.raw_header
    if mdt.source is not None and mdt.header == mdt.raw_header and mdt.text == mdt.raw_text:
        return mdt.source
    if unchanged_header:
        header_text = mdt.header_source
    elif mdt.header_format == "yaml":
        header_text = render_yaml(mdt.header)
    else:
        header_text = render_json(mdt.header).rstrip("\n")
    return f"---{mdt.newline}{header_text}{mdt.closing}{mdt.text}"
