"""The `.mdt` file of a rule or reference: a JSON or YAML header between `---` lines, then text."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from foundry.agent.jsonindex import JsonIndex
from foundry.agent.problems import AgentError, AgentProblem
from foundry.agent.syntax import (
    parse_json_prefix,
    parse_yaml,
    render_json,
    render_yaml,
    split_bom,
    yaml_line_of,
)

_OPENING = re.compile(r"\A---[ \t]*(\r?\n)")
_YAML_CLOSING = re.compile(r"^---[ \t]*(\r?\n|\Z)", re.MULTILINE)
_JSON_CLOSING = re.compile(r"[ \t\r\n]*---[ \t]*(\r?\n|\Z)")
_YAML_HEADER_LINE = 2  # the line after the opening `---`


@dataclass
class MdtFile:
    """A parsed `.mdt` file that remembers how it was written, so an unchanged one stays byte-exact.

    `source` is the whole file as read; `header_source` the header's own text, which starts at
    `header_offset` in the file after its byte order mark `bom`. A new file is written the way
    tsagent writes it: a JSON header whose closing `}` runs into `---`.
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
    bom: str = ""
    header_offset: int = 0
    _json_index: JsonIndex | None = field(default=None, repr=False)

    def line_of(self, location: tuple[str | int, ...]) -> int | None:
        """The line in the file of a header field (or of the deepest part of it that exists)."""
        if not location or self.header_source is None:
            return None
        if self.header_format == "yaml":
            return yaml_line_of(self.raw_header, location, first_line=_YAML_HEADER_LINE)
        if self._json_index is None and self.source is not None:
            body = split_bom(self.source)[1]
            self._json_index = JsonIndex(body, self.header_offset)
        return self._json_index.line_of(location) if self._json_index else None


def parse_mdt(content: str, file: Path) -> MdtFile:
    bom, body = split_bom(content)
    opening = _OPENING.match(body)
    if not opening:
        return MdtFile(header={}, text=body, source=content, raw_header={}, raw_text=body, bom=bom)
    newline = opening.group(1)
    start = opening.end()
    rest = body[start:]
    if rest.lstrip().startswith("{"):
        begin = start + len(rest) - len(rest.lstrip())
        mdt = _parse_json_header(body, start, begin, file)
    else:
        mdt = _parse_yaml_header(body, start, file)
    mdt.newline, mdt.source, mdt.bom = newline, content, bom
    return mdt


def _parse_json_header(content: str, start: int, begin: int, file: Path) -> MdtFile:
    raw, end = parse_json_prefix(content, begin, file, "in the header")
    closing = _JSON_CLOSING.match(content, end)
    if not closing:
        line = content.count("\n", 0, end) + 1
        problem = AgentProblem(
            file=file, line=line, message="the header must be followed by a `---` line"
        )
        raise AgentError([problem])
    header = _header_mapping(raw, file, content.count("\n", 0, begin) + 1)
    return MdtFile(
        header=header,
        text=content[closing.end() :],
        header_format="json",
        header_source=content[start:end],
        closing=content[end : closing.end()],
        raw_header=header,
        raw_text=content[closing.end() :],
        header_offset=begin,
    )


def _parse_yaml_header(content: str, start: int, file: Path) -> MdtFile:
    closing = _YAML_CLOSING.search(content, start)
    if not closing:
        problem = AgentProblem(
            file=file, line=1, message="the header's closing `---` line is missing"
        )
        raise AgentError([problem])
    header_source = content[start : closing.start()]
    raw = parse_yaml(header_source, file, first_line=_YAML_HEADER_LINE)
    header = _header_mapping(raw, file, _YAML_HEADER_LINE)
    return MdtFile(
        header=header,
        text=content[closing.end() :],
        header_format="yaml",
        header_source=header_source,
        closing=content[closing.start() : closing.end()],
        raw_header=header if raw is None else raw,
        raw_text=content[closing.end() :],
        header_offset=start,
    )


def _header_mapping(value: Any, file: Path, line: int) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        problem = AgentProblem(file=file, line=line, message="the header must be a mapping")
        raise AgentError([problem])
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
    return f"{mdt.bom}---{mdt.newline}{header_text}{mdt.closing}{mdt.text}"
