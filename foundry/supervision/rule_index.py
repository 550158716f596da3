"""An index of policy rules by the literal text of their tool and agent globs.

A glob can only match a name that starts with its literal prefix (the text before its first `*`,
`?` or `[`) and ends with its literal suffix (the text after its last `*`, `?` or `]`); a glob
without any of those matches one name only. Each rule is filed under the most telling of these
keys, on its tool glob or on its agent glob, or among the unindexed rules when it has none
(`*`, `*[ab]?`). A lookup gathers the rules filed under the keys the (agent, tool) pair has, plus
the unindexed ones, puts them back in rule order and keeps those whose globs match: exactly the
rules a walk over every rule would find, in the same order, so first-match-wins is unchanged.
Globs are fnmatch's, case-sensitive (as `fnmatch.fnmatchcase`).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Literal, NamedTuple, TypeVar

Rule = TypeVar("Rule")
KeyKind = Literal["exact", "prefix", "suffix"]
Matcher = Callable[[str], object]  # a compiled glob's match: None when the name does not match

WILDCARDS = frozenset("*?[")
SUFFIX_STOPS = frozenset("*?[]")
EXACT_WEIGHT = 1_000_000  # an exact name narrows more than any prefix or suffix


# --- keys ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GlobKey:
    """The literal part of a glob that every name it matches must have, and where."""

    kind: KeyKind
    text: str

    @property
    def weight(self) -> int:
        return EXACT_WEIGHT if self.kind == "exact" else len(self.text)


def glob_key(glob: str) -> GlobKey | None:
    """The glob's most telling literal key, or None when it has no literal prefix or suffix."""
    if not any(char in WILDCARDS for char in glob):
        return GlobKey("exact", glob)
    prefix = _literal_prefix(glob)
    suffix = _literal_suffix(glob)
    if not prefix and not suffix:
        return None
    return GlobKey("prefix", prefix) if len(prefix) >= len(suffix) else GlobKey("suffix", suffix)


def _literal_prefix(glob: str) -> str:
    end = next((at for at, char in enumerate(glob) if char in WILDCARDS), len(glob))
    return glob[:end]


def _literal_suffix(glob: str) -> str:
    start = next((at for at in range(len(glob) - 1, -1, -1) if glob[at] in SUFFIX_STOPS), -1)
    return glob[start + 1 :]


def glob_matcher(glob: str, key: GlobKey | None) -> Matcher | None:
    """What still has to be checked of a name found under `key` (None: nothing): the key says
    it all for `*`, an exact name, `prefix*` and `*suffix`; else the whole glob is matched."""
    if glob == "*" or _key_says_it_all(glob, key):
        return None
    return re.compile(fnmatch.translate(glob)).match


def _key_says_it_all(glob: str, key: GlobKey | None) -> bool:
    if key is None:
        return False
    if key.kind == "prefix":
        return glob == key.text + "*"
    if key.kind == "suffix":
        return glob == "*" + key.text
    return True


# --- buckets ---------------------------------------------------------------------------------


class _Entry(NamedTuple, Generic[Rule]):
    """A rule as filed: its position, the rule, and the globs left to check (None: matches)."""

    position: int
    rule: Rule
    tool: Matcher | None
    agent: Matcher | None


class _Bucket(Generic[Rule]):
    """The rules filed under one key, in order; `certain` holds them all when none of them has
    a glob left to check, so a lookup that finds this bucket alone has its answer."""

    def __init__(self, entries: Sequence[_Entry[Rule]]) -> None:
        self.entries = tuple(entries)
        unchecked = all(entry.tool is None and entry.agent is None for entry in self.entries)
        self.certain = tuple(entry.rule for entry in self.entries) if unchecked else None


class _Affixes(Generic[Rule]):
    """Buckets filed by a literal prefix (or suffix), grouped by their first (or last) `span`
    characters, `span` being the shortest key's length: a lookup reads the name's own head,
    then tries only the key lengths of that group, one dictionary lookup each."""

    def __init__(self, buckets: dict[str, _Bucket[Rule]], at_end: bool) -> None:
        self._at_end = at_end
        self._span = min((len(text) for text in buckets), default=0)
        grouped: dict[str, dict[int, dict[str, _Bucket[Rule]]]] = {}
        for text, bucket in buckets.items():
            by_length = grouped.setdefault(self._head(text), {})
            by_length.setdefault(len(text), {})[text] = bucket
        self._groups = {
            head: tuple(sorted(by_length.items())) for head, by_length in grouped.items()
        }

    def __bool__(self) -> bool:
        return bool(self._groups)

    def _head(self, name: str) -> str:
        return name[len(name) - self._span :] if self._at_end else name[: self._span]

    def gather(self, name: str, into: list[_Bucket[Rule]]) -> None:
        """Append the bucket of every key `name` starts (or ends) with."""
        size, span = len(name), self._span
        if size < span:
            return
        group = self._groups.get(name[size - span :] if self._at_end else name[:span])
        if group is None:
            return
        for length, keys in group:
            if length > size:
                break
            bucket = keys.get(name[size - length :] if self._at_end else name[:length])
            if bucket is not None:
                into.append(bucket)


class _KeyTable(Generic[Rule]):
    """Entries filed by the literal keys of one kind of name (tools, or agents)."""

    def __init__(self, filed: list[tuple[GlobKey, _Entry[Rule]]]) -> None:
        grouped: dict[KeyKind, dict[str, list[_Entry[Rule]]]] = {
            "exact": {},
            "prefix": {},
            "suffix": {},
        }
        for key, entry in filed:
            grouped[key.kind].setdefault(key.text, []).append(entry)
        exact, prefixes, suffixes = (
            {text: _Bucket(entries) for text, entries in grouped[kind].items()}
            for kind in ("exact", "prefix", "suffix")
        )
        self._exact = exact
        affixes = (_Affixes(prefixes, at_end=False), _Affixes(suffixes, at_end=True))
        self._affixes = tuple(table for table in affixes if table)

    def gather(self, name: str, into: list[_Bucket[Rule]]) -> None:
        """Append every bucket whose key `name` has."""
        bucket = self._exact.get(name)
        if bucket is not None:
            into.append(bucket)
        for table in self._affixes:
            table.gather(name, into)


# --- the index -------------------------------------------------------------------------------


class RuleIndex(Generic[Rule]):
    """The rules whose globs match an (agent, tool) pair, in their order, without a full scan."""

    def __init__(self, rules: Sequence[Rule], globs: Callable[[Rule], tuple[str, str]]) -> None:
        """`globs` gives a rule's (agent glob, tool glob)."""
        by_tool: list[tuple[GlobKey, _Entry[Rule]]] = []
        by_agent: list[tuple[GlobKey, _Entry[Rule]]] = []
        unindexed: list[_Entry[Rule]] = []
        for position, rule in enumerate(rules):
            agent_glob, tool_glob = globs(rule)
            tool_key, agent_key = glob_key(tool_glob), glob_key(agent_glob)
            if tool_key is not None and (agent_key is None or tool_key.weight >= agent_key.weight):
                by_tool.append(
                    (tool_key, _entry(position, rule, (tool_glob, tool_key), agent_glob))
                )
            elif agent_key is not None:
                by_agent.append(
                    (agent_key, _entry(position, rule, tool_glob, (agent_glob, agent_key)))
                )
            else:
                unindexed.append(_entry(position, rule, tool_glob, agent_glob))
        self._size = len(rules)
        self._tools = _KeyTable(by_tool)
        self._agents = _KeyTable(by_agent) if by_agent else None
        self._unindexed = _Bucket(unindexed) if unindexed else None

    def covering(self, agent_id: str, tool: str) -> tuple[Rule, ...]:
        """Every rule whose agent glob matches `agent_id` and tool glob matches `tool`, in order."""
        buckets = [self._unindexed] if self._unindexed is not None else []
        self._tools.gather(tool, buckets)
        if self._agents is not None:
            self._agents.gather(agent_id, buckets)
        if not buckets:
            return ()
        if len(buckets) == 1:
            if buckets[0].certain is not None:
                return buckets[0].certain
            entries: Sequence[_Entry[Rule]] = buckets[0].entries
        else:
            entries = sorted([entry for b in buckets for entry in b.entries], key=_position)
        found = []
        for _, rule, tool_match, agent_match in entries:  # a plain loop: the fastest here
            if tool_match is not None and tool_match(tool) is None:
                continue
            if agent_match is not None and agent_match(agent_id) is None:
                continue
            found.append(rule)
        return tuple(found)

    def __len__(self) -> int:
        return self._size


Filed = str | tuple[str, GlobKey]  # a glob, with the key it is filed under when it is


def _entry(position: int, rule: Rule, tool: Filed, agent: Filed) -> _Entry[Rule]:
    return _Entry(position, rule, _left_to_check(tool), _left_to_check(agent))


def _left_to_check(glob: Filed) -> Matcher | None:
    return glob_matcher(glob, None) if isinstance(glob, str) else glob_matcher(*glob)


def _position(entry: _Entry[Any]) -> int:
    return entry.position
