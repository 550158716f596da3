"""Tools that shadow another server's tool: a name that is or looks like it, or a description
that names it or tells the model to prefer this one.

A server can steer the model away from another server's tool (and what the model meant to send
there) by offering a tool of the same name, one that reads the same (`readFile`, `read_files`,
`read_file` spelt with a Cyrillic letter a), or a description that says "use this instead of
the other calculator" or names the other tool ("when `send_email` is used, ..."). Tools of two
servers with the same definition are the same software run twice (two filesystem servers on
two folders) and do not shadow each other. Only tools of different servers are compared.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Sequence
from itertools import combinations

from pydantic import BaseModel, ConfigDict

from foundry.supervision.injection import normalise
from foundry.supervision.tool_pins import definition_digest
from foundry.tools.catalog import ToolInfo

MIN_LOOK_ALIKE = 5  # shorter names one edit apart (`add`, `ads`) are different words
SAME_NAME, LOOK_ALIKE = "the same name", "a look-alike name"  # how a name shadows

_PREFERENCE = re.compile(
    r"\b(?:always )?prefer (?:this|these|our) (?:\w+ )?(?:tools?|functions?|servers?)\b"
    r"|\b(?:instead of|rather than|in place of|over|replaces?|overrides?|supersedes?) "
    r"(?:the |any |all )?"
    r"(?:other|another|others'|other servers'|built-in|default|existing|original) (?:\w+ ){0,2}"
    r"(?:tools?|servers?|functions?|calculators?|versions?)\b"
    r"|\b(?:do not|don't|never) (?:use|call) (?:any |the )?(?:other|another) (?:\w+ ){0,2}"
    r"(?:tools?|servers?|functions?)\b"
)


class Shadowing(BaseModel):
    """`tool` shadows `other` (another server's tool, or any other when empty), and how."""

    model_config = ConfigDict(frozen=True)

    tool: str  # `server.tool`
    other: str  # `server.tool`, or "" for "any other tool" (a preference with no name)
    how: str  # the same name, a look-alike name, its description names it / prefers it
    excerpt: str = ""  # the words of the description that do it

    def describe(self) -> str:
        target = f"{self.other}" if self.other else "other servers' tools"
        said = f": {self.excerpt!r}" if self.excerpt else ""
        return f"{self.tool} shadows {target} ({self.how}{said})"


def find_shadowing(tools: Sequence[ToolInfo]) -> list[Shadowing]:
    """Every way one of `tools` shadows a tool of another server."""
    digests = {id(tool): definition_digest(tool.definition()) for tool in tools}
    found = [*_by_name(tools, digests)]
    for tool in tools:
        found += _by_description(tool, [other for other in tools if other.server != tool.server])
    return list(dict.fromkeys(found))


@functools.lru_cache(maxsize=4096)
def name_skeleton(name: str) -> str:
    """A name as it reads: look-alike letters mapped, case, `_`, `-` and `.` dropped."""
    return "".join(char for char in normalise(name) if char.isalnum())


def _by_name(tools: Sequence[ToolInfo], digests: dict[int, str]) -> Iterator[Shadowing]:
    for first, second in combinations(tools, 2):
        if first.server == second.server:
            continue
        how = _name_likeness(first.tool, second.tool)
        if how is None or digests[id(first)] == digests[id(second)]:
            continue
        yield Shadowing(tool=first.name, other=second.name, how=how)
        yield Shadowing(tool=second.name, other=first.name, how=how)


def _name_likeness(first: str, second: str) -> str | None:
    if first == second:
        return SAME_NAME
    one, two = name_skeleton(first), name_skeleton(second)
    if one == two or (min(len(one), len(two)) >= MIN_LOOK_ALIKE and _one_edit_apart(one, two)):
        return LOOK_ALIKE
    return None


def _one_edit_apart(one: str, two: str) -> bool:
    """One letter added, removed, changed, or two neighbours swapped."""
    if abs(len(one) - len(two)) > 1 or one == two:
        return False
    if len(one) == len(two):
        differ = [index for index, (a, b) in enumerate(zip(one, two, strict=True)) if a != b]
        if len(differ) == 1:
            return True
        first, last = differ[0], differ[-1]
        return len(differ) == 2 and last == first + 1 and one[first] == two[last]
    shorter, longer = sorted((one, two), key=len)
    pairs = enumerate(zip(shorter, longer, strict=False))
    index = next((i for i, (a, b) in pairs if a != b), len(shorter))
    return shorter[index:] == longer[index + 1 :]


def _by_description(tool: ToolInfo, others: Sequence[ToolInfo]) -> Iterator[Shadowing]:
    text = _read(" ".join(filter(None, (tool.title, tool.description))))
    for other in others:
        found = _mention(text, other.tool, other.name)
        if found is not None:
            yield Shadowing(
                tool=tool.name, other=other.name, how="its description names it", excerpt=found
            )
    preference = _PREFERENCE.search(text)
    if preference is not None and others:
        yield Shadowing(
            tool=tool.name,
            other="",
            how="its description tells the model to prefer it",
            excerpt=_around(text, preference),
        )


def _mention(text: str, tool: str, qualified: str) -> str | None:
    """Where `text` names another server's tool: by its `server.tool` name, or its own name
    when that cannot be an ordinary word (`send_email`, `sendEmail`) or is quoted (`fetch`)."""
    name = _read(tool)
    if name not in text:  # the pattern can only match where the name is
        return None
    found = _mention_pattern(tool, qualified).search(text)
    return None if found is None else _around(text, found)


@functools.lru_cache(maxsize=4096)
def _mention_pattern(tool: str, qualified: str) -> re.Pattern[str]:
    name = _read(tool)
    names = [re.escape(_read(qualified))]
    if _distinctive(tool):
        names.append(re.escape(name))
    quoted = rf"[`'\"]{re.escape(name)}[`'\"]"
    return re.compile(rf"(?<![\w.-])(?:{'|'.join(names)})(?![\w-])|{quoted}")


@functools.lru_cache(maxsize=4096)
def _read(text: str) -> str:
    """Text as it is searched (supervision/injection.py's normalising), once per text."""
    return normalise(text)


def _distinctive(name: str) -> bool:
    return "_" in name or "-" in name or re.search(r"[a-z][A-Z]", name) is not None


def _around(text: str, found: re.Match[str]) -> str:
    start = max(0, found.start() - 40)
    return " ".join(text[start : found.end() + 40].split())
