"""The line of each key and item in JSON text, so problems in JSON files can name their line."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

Location = tuple[str | int, ...]
MAX_ENTRIES = 100_000
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\],:]|[^\s{}\[\],:"]+')


@dataclass
class _Container:
    location: Location
    is_list: bool
    index: int = 0
    key: str | None = None
    expecting_key: bool = True

    def child(self) -> Location:
        return (*self.location, self.index if self.is_list else str(self.key))


@dataclass
class JsonIndex:
    """Lines of the keys and items of the JSON value starting at `start` in `text`.

    Built on first use, for valid JSON only; at most MAX_ENTRIES entries are kept, so a huge file
    costs one pass and a bounded amount of memory.
    """

    text: str
    start: int = 0
    _lines: dict[Location, int] | None = field(default=None, repr=False)

    def line_of(self, location: Location) -> int | None:
        """The line of `location`, or of the deepest part of it that is in the text."""
        if self._lines is None:
            self._lines = _index(self.text, self.start)
        for length in range(len(location), 0, -1):
            line = self._lines.get(location[:length])
            if line is not None:
                return line
        return None


def _index(text: str, start: int) -> dict[Location, int]:
    lines: dict[Location, int] = {}
    stack: list[_Container] = []
    line, last = text.count("\n", 0, start) + 1, start
    for match in _TOKEN.finditer(text, start):
        token, position = match.group(), match.start()
        line += text.count("\n", last, position)
        last = position
        if stack and len(lines) < MAX_ENTRIES:
            _record(stack[-1], token, line, lines)
        if token in ("{", "["):
            location = stack[-1].child() if stack else ()
            stack.append(_Container(location, is_list=token == "["))
        elif token in ("}", "]"):
            stack.pop()
        elif token == "," and stack:
            _next_entry(stack[-1])
        elif token == ":" and stack:
            stack[-1].expecting_key = False
        if not stack:
            break
    return lines


def _record(container: _Container, token: str, line: int, lines: dict[Location, int]) -> None:
    if token in ("}", "]", ",", ":"):
        return
    if container.is_list:
        lines.setdefault(container.child(), line)
    elif container.expecting_key and token.startswith('"'):
        container.key = json.loads(token)
        lines[container.child()] = line


def _next_entry(container: _Container) -> None:
    if container.is_list:
        container.index += 1
    else:
        container.expecting_key = True
