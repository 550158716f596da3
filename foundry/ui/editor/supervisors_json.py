"""The supervisors list as editable JSON text: rendering, and parsing with located problems."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from foundry.agent.models import SupervisorEntry
from foundry.agent.problems import AgentProblem, problems_from_validation

ENTRIES: TypeAdapter[list[SupervisorEntry]] = TypeAdapter(list[SupervisorEntry])
_ENTRY_FIELD = re.compile(r"^supervisors\[(\d+)\]")
_UNION_TAG = re.compile(r"^(supervisors\[\d+\])\.(?:agent|guardian|policy|collection|architect)\b")
_DECODER = json.JSONDecoder()


def supervisors_text(entries: list[Any]) -> str:
    """The entries as the JSON the editor shows: tsagent's field names, two-space indents."""
    data = [entry.model_dump(mode="json", by_alias=True, exclude_unset=True) for entry in entries]
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def parse_supervisors(
    text: str, file: Path
) -> tuple[list[SupervisorEntry] | None, list[AgentProblem]]:
    """The entries in `text`, or None and every problem, each on the line it is about."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        message = f"not valid JSON: {error.msg}"
        problem = AgentProblem(
            file=file, field="supervisors", message=message, line=error.lineno, column=error.colno
        )
        return None, [problem]
    try:
        return ENTRIES.validate_python(data), []
    except ValidationError as error:
        problems = problems_from_validation(error, file, prefix=("supervisors",))
        spans = entry_spans(text)
        return None, [_with_line(problem, text, spans) for problem in problems]


def entry_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) offsets of each entry of the top-level JSON list in `text`."""
    position = _skip_space(text, 0)
    if not text.startswith("[", position):
        return []
    spans: list[tuple[int, int]] = []
    position = _skip_space(text, position + 1)
    while position < len(text) and text[position] != "]":
        _, end = _DECODER.raw_decode(text, position)
        spans.append((position, end))
        position = _skip_space(text, end)
        if text.startswith(",", position):
            position = _skip_space(text, position + 1)
    return spans


def _skip_space(text: str, position: int) -> int:
    while position < len(text) and text[position].isspace():
        position += 1
    return position


def _with_line(problem: AgentProblem, text: str, spans: list[tuple[int, int]]) -> AgentProblem:
    """Put the problem on the line of the key it names inside its entry, else the entry's start."""
    problem = problem.model_copy(update={"field": _UNION_TAG.sub(r"\1", problem.field)})
    match = _ENTRY_FIELD.match(problem.field)
    if match is None:
        return problem.model_copy(update={"line": 1})
    index = int(match.group(1))
    if index >= len(spans):
        return problem
    start, end = spans[index]
    offset = start
    key = re.split(r"[.\[]", problem.field)[-1].rstrip("]")
    if key and not key.isdigit():
        found = text.find(f'"{key}"', start, end)
        offset = found if found >= 0 else start
    return problem.model_copy(update={"line": text.count("\n", 0, offset) + 1})
