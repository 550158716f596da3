"""Parsing and writing JSON and YAML text, with syntax errors reported at their line."""

from __future__ import annotations

import io
import json
import math
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ruamel.yaml.comments import TaggedScalar
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.reader import ReaderError
from ruamel.yaml.scalarstring import LiteralScalarString

from foundry.agent.limits import MAX_DEPTH, MAX_INT_DIGITS, MAX_YAML_CHARS
from foundry.agent.numbers import js_number_text
from foundry.agent.problems import AgentError, AgentProblem
from foundry.agent.textfile import read_text as read_text
from foundry.agent.yamlcore import YamlLimitError, round_trip_yaml

BOM = "\ufeff"
Location = tuple[str | int, ...]
_BRACKETS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


class _NotJson(Exception):
    """A number JSON cannot hold: too many digits, too large, or NaN/Infinity."""

    def __init__(self, literal: str, reason: str) -> None:
        super().__init__(reason)
        self.literal = literal
        self.reason = reason


def split_bom(text: str) -> tuple[str, str]:
    """(the UTF-8 byte order mark or "", the rest): parsers read the rest, saves put it back."""
    return (BOM, text[1:]) if text.startswith(BOM) else ("", text)


def parse_json(text: str, file: Path) -> Any:
    """The JSON value of a whole file (a leading BOM is skipped), within the nesting limit."""
    body = split_bom(text)[1]
    return _decode_json(body, file, lambda decoder: decoder.decode(body), "invalid JSON")


def parse_json_prefix(text: str, start: int, file: Path, what: str) -> tuple[Any, int]:
    """The JSON value that starts at `start` in `text`, and where it ends."""

    def decode(decoder: json.JSONDecoder) -> tuple[Any, int]:
        return decoder.raw_decode(text, start)

    value, end = _decode_json(text, file, decode, f"invalid JSON {what}")
    return value, end


def _decode_json(
    text: str, file: Path, decode: Callable[[json.JSONDecoder], Any], what: str
) -> Any:
    decoder = json.JSONDecoder(
        parse_int=_json_int, parse_float=_json_float, parse_constant=_no_constant
    )
    try:
        result = decode(decoder)
    except json.JSONDecodeError as error:
        problem = AgentProblem(
            file=file, message=f"{what}: {error.msg}", line=error.lineno, column=error.colno
        )
        raise AgentError([problem]) from None
    except _NotJson as error:
        raise _json_problem(file, error.reason, _line_of_text(text, error.literal)) from None
    except RecursionError:
        raise _too_deep(text, file) from None
    value = result[0] if isinstance(result, tuple) else result
    if _deeper_than(value, MAX_DEPTH):
        raise _too_deep(text, file)
    return result


def _json_int(literal: str) -> int:
    if len(literal.lstrip("-")) > MAX_INT_DIGITS:
        raise _NotJson(literal, f"a number of more than {MAX_INT_DIGITS} digits is too long")
    return int(literal)


def _json_float(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):
        raise _NotJson(literal, f"the number {literal[:40]} is too large")
    return value


def _no_constant(literal: str) -> Any:
    raise _NotJson(literal, f"{literal} is not a JSON value")


def _json_problem(file: Path, message: str, line: int | None) -> AgentError:
    return AgentError([AgentProblem(file=file, message=message, line=line)])


def _line_of_text(text: str, literal: str) -> int | None:
    position = text.find(literal)
    return text.count("\n", 0, position) + 1 if position >= 0 else None


def _too_deep(text: str, file: Path) -> AgentError:
    return _json_problem(file, f"nested more than {MAX_DEPTH} levels deep", _deep_line(text))


def _deep_line(text: str) -> int | None:
    """The line where JSON text first opens more than MAX_DEPTH brackets."""
    depth = 0
    for match in _BRACKETS.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return text.count("\n", 0, match.start()) + 1
        elif token in "]}":
            depth -= 1
    return None


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether lists and mappings nest more than `limit` deep (without recursion)."""
    pending: list[tuple[Any, int]] = [(value, 1)] if isinstance(value, dict | list) else []
    while pending:
        container, depth = pending.pop()
        if depth > limit:
            return True
        children = container.values() if isinstance(container, dict) else container
        pending.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


def render_json(data: Any) -> str:
    """JSON as tsagent's JSON.stringify(data, null, 2) writes it: numbers in JavaScript's
    spelling (js_number_text), NaN and infinities as null."""
    return "".join(_json_parts(data, "\n")) + "\n"


def _json_parts(value: Any, newline: str) -> Iterator[str]:
    if isinstance(value, dict):
        yield from _json_container(
            [(_json_key(key), item) for key, item in value.items()], "{}", newline
        )
    elif isinstance(value, list | tuple):
        yield from _json_container([("", item) for item in value], "[]", newline)
    else:
        yield _json_scalar(value)


def _json_container(items: list[tuple[str, Any]], brackets: str, newline: str) -> Iterator[str]:
    if not items:
        yield brackets
        return
    inner = newline + "  "
    yield brackets[0]
    for index, (key, item) in enumerate(items):
        yield ("," if index else "") + inner + key
        yield from _json_parts(item, inner)
    yield newline + brackets[1]


def _json_key(key: Any) -> str:
    text = key if isinstance(key, str) else _json_scalar(key).strip('"')
    return json.dumps(text, ensure_ascii=False) + ": "


def _json_scalar(value: Any) -> str:
    if isinstance(value, float) and not isinstance(value, bool):
        return js_number_text(value) if math.isfinite(value) else "null"
    return json.dumps(value, ensure_ascii=False)


def parse_yaml(text: str, file: Path, first_line: int = 1) -> Any:
    """Parse YAML keeping comments and key order; `first_line` offsets reported line numbers.

    Plain scalars are read by the YAML 1.2 core schema, and the limits of `yamlcore` apply.
    """
    if len(text) > MAX_YAML_CHARS:
        size, limit = len(text) / (1024 * 1024), MAX_YAML_CHARS // (1024 * 1024)
        message = f"holds {size:.1f} MiB of YAML; YAML in agent files is limited to {limit} MiB"
        raise AgentError([AgentProblem(file=file, message=message)])
    try:
        return round_trip_yaml().load(text)
    except MarkedYAMLError as error:
        raise _yaml_problem(error, file, first_line) from None
    except ReaderError as error:
        line = text.count("\n", 0, error.position) + first_line
        character = error.character if isinstance(error.character, int) else ord(error.character)
        message = f"invalid YAML: the character #x{character:04x} is not allowed"
        raise AgentError([AgentProblem(file=file, message=message, line=line)]) from None
    except YAMLError as error:
        message = f"invalid YAML: {_brief(str(error))}"
        raise AgentError([AgentProblem(file=file, message=message)]) from None


def _yaml_problem(error: MarkedYAMLError, file: Path, first_line: int) -> AgentError:
    mark = error.problem_mark or error.context_mark
    line = mark.line + first_line if mark else None
    column = mark.column + 1 if mark else None
    reason = _brief(_reason(error))
    message = reason if isinstance(error, YamlLimitError) else f"invalid YAML: {reason}"
    return AgentError([AgentProblem(file=file, message=message, line=line, column=column)])


def _reason(error: MarkedYAMLError) -> str:
    problem, context = error.problem or "", error.context or ""
    if problem.startswith("but ") and context:
        return f"{context}, {problem}"
    return str(problem or context or "syntax error")


def _brief(text: str, limit: int = 200) -> str:
    """One line of at most `limit` characters (ruamel quotes whole values in some messages)."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


def render_yaml(data: Any) -> str:
    stream = io.StringIO()
    round_trip_yaml().dump(_multiline_as_blocks(data, {}), stream)
    return stream.getvalue()


def _multiline_as_blocks(data: Any, done: dict[int, Any]) -> Any:
    """Multi-line text as `|` blocks, readable in the file, unless already styled.

    `data` is not changed: containers holding such text are copied (once, so shared ones stay
    shared), the others are returned as they are.
    """
    if isinstance(data, dict | list):
        if id(data) not in done:
            done[id(data)] = _blocks_in(data, done)
        return done[id(data)]
    if type(data) is str and "\n" in data and _block_safe(data):
        return LiteralScalarString(data)
    return data


def _blocks_in(container: dict[Any, Any] | list[Any], done: dict[int, Any]) -> Any:
    keys = list(container) if isinstance(container, dict) else range(len(container))
    changed = {}
    for key in keys:
        value = container[key]
        converted = _multiline_as_blocks(value, done)
        if converted is not value:
            changed[key] = converted
    if not changed:
        return container
    result = shallow_copy(container)
    for key, value in changed.items():
        result[key] = value
    return result


def _block_safe(text: str) -> bool:
    """Literal blocks cannot hold trailing spaces on a line or some control characters."""
    return not any(line != line.rstrip(" \t") for line in text.split("\n")) and "\r" not in text


def shallow_copy(container: Any) -> Any:
    """A copy of a dict or list with its YAML comments, style, line numbers and anchor."""
    result = type(container)()
    copy_attributes = getattr(container, "copy_attributes", None)
    if copy_attributes is not None:
        copy_attributes(result, memo={})
    if isinstance(container, dict):
        result.update(container)
    else:
        result.extend(container)
    return result


def plain(data: Any) -> Any:
    """A deep copy of parsed YAML or JSON as plain dicts and lists (for validation)."""
    if isinstance(data, dict):
        return {str(scalar_value(key)): plain(value) for key, value in data.items()}
    if isinstance(data, list):
        return [plain(item) for item in data]
    if isinstance(data, str | TaggedScalar):
        return str(scalar_value(data))
    return data


def scalar_value(value: Any) -> Any:
    """What a scalar stands for: ruamel keeps `!!str 5` as a TaggedScalar to write it back."""
    if isinstance(value, TaggedScalar):
        return "" if value.value is None else str(value.value)
    return value


def same_data(first: Any, second: Any) -> bool:
    """Whether two parsed documents hold the same data, types included (NaN equals NaN)."""
    if isinstance(first, dict) and isinstance(second, dict):
        return first.keys() == second.keys() and all(
            same_data(first[key], second[key]) for key in first
        )
    if isinstance(first, list) and isinstance(second, list):
        return len(first) == len(second) and all(map(same_data, first, second))
    if _kind(first) != _kind(second):
        return False
    if isinstance(first, float) and math.isnan(first):
        return isinstance(second, float) and math.isnan(second)
    return bool(first == second)


def _kind(value: Any) -> type:
    for kind in (bool, str, dict, list, int, float):
        if isinstance(value, kind):
            return kind
    return type(value)


def yaml_line_of(root: Any, location: Location, first_line: int = 1) -> int | None:
    """The line of the deepest key or item along `location` that exists in parsed YAML."""
    node, line = root, None
    for part in location:
        position = _position(node, part)
        if position is None:
            break
        line = position + first_line
        node = node[part]
    return line


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
