"""Problems found in agent files, in plain words that name the file, the field and what is wrong."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError


class AgentProblem(BaseModel):
    """One thing wrong in one agent file."""

    model_config = ConfigDict(frozen=True)

    file: Path
    field: str = ""
    message: str
    line: int | None = None
    column: int | None = None

    def __str__(self) -> str:
        where = str(self.file)
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        if self.field:
            return _one_line(f"{where}: {self.field}: {self.message}")
        return _one_line(f"{where}: {self.message}")


def _one_line(text: str) -> str:
    """Control characters (a line break in a file name, say) escaped: one problem, one line."""
    if text.isprintable():
        return text
    return "".join(char if char.isprintable() else repr(char)[1:-1] for char in text)


class AgentError(Exception):
    """An agent could not be loaded or saved; `problems` lists every reason at once."""

    def __init__(self, problems: Sequence[AgentProblem]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(str(problem) for problem in self.problems))


def field_path(location: Iterable[str | int]) -> str:
    """`("rules", 2, "priorityLevel")` -> `rules[2].priorityLevel`."""
    text = ""
    for part in location:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


def parse_field_path(text: str) -> tuple[str | int, ...]:
    """`rules[2].priorityLevel` -> `("rules", 2, "priorityLevel")`."""
    parts: list[str | int] = []
    for segment in text.split("."):
        name, *indexes = segment.split("[")
        if name:
            parts.append(name)
        for index in indexes:
            key = index.rstrip("]")
            parts.append(int(key) if key.isdigit() else key)
    return tuple(parts)


def _clean_location(location: tuple[str | int, ...]) -> tuple[str | int, ...]:
    """Drop what pydantic adds to locations inside unions: the member's tag or validator."""
    kept: list[str | int] = []
    for index, part in enumerate(location):
        in_union = index >= 2 and location[index - 2] in _UNION_FIELDS
        if isinstance(part, str) and (
            (in_union and part in _UNION_TAGS) or part in _TYPE_MEMBERS or "[" in part
        ):
            continue
        kept.append(part)
    return tuple(kept)


_TYPE_MEMBERS = {"int", "float", "str", "bool"}
_UNION_FIELDS = {"supervisors", "mcpServers", "mcp_servers"}
_UNION_TAGS = {
    "agent",
    "guardian",
    "policy",
    "collection",
    "architect",
    "stdio",
    "sse",
    "streamable-http",
    "internal",
}


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _plain_message(error: Any, field: str) -> str:
    """Turn one pydantic error into a sentence a person can act on."""
    kind = error["type"]
    ctx = error.get("ctx") or {}
    value = error.get("input")
    last = field.rsplit(".", 1)[-1].split("[")[0]
    if kind == "missing":
        return "is required but missing"
    if kind == "extra_forbidden":
        return "is not a known field"
    if kind == "enum" or kind == "literal_error":
        expected = ctx.get("expected", "").replace("'", "")
        if last == "include":
            return f"unknown include mode {_shown(value)}; use always, manual or agent"
        return f"{_shown(value)} is not allowed; use {expected}"
    if kind == "union_tag_invalid":
        tags = ctx.get("expected_tags", "").replace("'", "")
        return f"unknown type {_shown(ctx.get('tag'))}; use one of {tags}"
    if kind == "union_tag_not_found":
        return "needs a `type` (one of agent, guardian, policy, collection, architect)"
    if kind == "unknown_server_type":
        declared = value.get("type") if isinstance(value, dict) else value
        return f"{error['msg']} (got {_shown(declared)})"
    if kind in ("greater_than_equal", "less_than_equal", "greater_than", "less_than"):
        return _range_message(last, value, ctx)
    if kind == "string_pattern_mismatch":
        return _pattern_message(last, value)
    if kind == "string_too_short":
        return "must not be empty"
    if kind == "too_short":
        return f"needs at least {ctx.get('min_length', 1)} entry (it has none)"
    if kind in ("int_parsing", "int_type", "float_parsing", "float_type", "int_from_float"):
        return f"must be a number (got {_shown(value)})"
    if kind in ("bool_parsing", "bool_type"):
        return f"must be true or false (got {_shown(value)})"
    if kind in ("string_type",):
        return f"must be text (got {_shown(value)})"
    if kind in ("list_type", "dict_type", "model_type", "model_attributes_type"):
        wanted = {"list_type": "a list", "dict_type": "a mapping"}.get(kind, "a mapping")
        return f"must be {wanted} (got {_shown(value)})"
    if kind == "value_error":
        return str(ctx.get("error", error["msg"]))
    return str(error["msg"])


def _range_message(field: str, value: Any, ctx: dict[str, Any]) -> str:
    low, high = _RANGES.get(field, (None, None))
    if low is not None and high is not None:
        return f"must be between {low} and {high} (got {_shown(value)})"
    bound = next(iter(ctx.values()), "?")
    return f"is out of range (got {_shown(value)}, limit {bound})"


_RANGES: dict[str, tuple[float, float]] = {
    "priorityLevel": (0, 999),
    "temperature": (0, 2),
    "topP": (0, 1),
    "contextIncludeScore": (0, 1),
    "confidenceThreshold": (0, 1),
    "maxChatTurns": (1, 1000),
}


def _pattern_message(field: str, value: Any) -> str:
    if field in ("name", "id"):
        return f"{_shown(value)} may only contain letters, digits, '_' and '-'"
    if field == "model":
        return f"{_shown(value)} must be written as provider:model (for example ollama:qwen2.5)"
    if field == "url":
        return f"{_shown(value)} must start with http:// or https://"
    return f"{_shown(value)} has the wrong form"


def problems_from_validation(
    error: ValidationError, file: Path, prefix: Sequence[str | int] = ()
) -> list[AgentProblem]:
    """Every error pydantic found, each as an AgentProblem located in `file`."""
    problems: list[AgentProblem] = []
    for item in error.errors():
        location = (*prefix, *_clean_location(item["loc"]))
        path = field_path(location)
        problem = AgentProblem(file=file, field=path, message=_plain_message(item, path))
        if problem not in problems:
            problems.append(problem)
    return problems
