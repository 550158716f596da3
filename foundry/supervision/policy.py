"""The L0 policy engine: rate limits, loop detection, then ordered first-match-wins rules.

A path condition (`within`) judges every path the call names, not only the parameter it names:
it holds when that parameter is given and every path of the call (see `paths.py`), resolved where
the tool's server runs, lies inside its folder. A path that cannot be resolved, a server whose
working folder is unknown, or a relative path sent to a server of no kind Foundry knows, never
satisfies it; `*` as the parameter of `within` stands for every path the call names (none will
do, for a server whose folder is known: never for a remote one). A rule written for a kind of
server (`kind`) covers only that kind's tools; one with `hints` only a tool whose trusted
server declared those annotations (MCP's defaults where it declared none), never one of
Foundry's own or one no server listed.

Beside comparisons, a condition can judge what a parameter does, by real parsers:
`read_only_sql` (one statement that only reads, in the dialect given: statements.py),
`read_only_command` (a shell line that only reads inside the folder given: commands.py),
`command_names` (a word of a shell line, as the shell reads it, matches a pattern),
`several_sql_statements` (one hidden after another), `reaches` (`public` or `inside`: where a
URL leads, addresses.py), `carries_data` (a URL carrying data out: addresses.py) and
`holds_secret` (a secret as the store masks it: secrets.py). A command given as a list of
words is matched as its words and as the line they make.
"""

from __future__ import annotations

import contextlib
import copy
import fnmatch
import json
import operator
import os
import re
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel

from foundry.agent.models import (
    TOOL_HINT_DEFAULTS,
    PolicyCondition,
    PolicyConfig,
    PolicyMatch,
    PolicyRule,
)
from foundry.supervision.addresses import carries_data, reach
from foundry.supervision.commands import command_words, reads_only_inside
from foundry.supervision.paths import (
    CallPaths,
    ServerFolders,
    ServerPlaces,
    UnresolvablePath,
    find_paths,
    is_command_name,
    is_path_name,
    readings,
    resolve_folder,
    resolve_path,
)
from foundry.supervision.rule_index import RuleIndex
from foundry.supervision.secrets import mask_secrets
from foundry.supervision.statements import reads_only, several_statements

PolicyAction = Literal["allow", "deny", "supervisor", "human"]

LOOP_REPEATS = 3
LOOP_WINDOW_SECONDS = 10.0
SHOWN_VALUE_CHARS = 60  # a longer value in a reason is cut
PATH_TEXT_OPERATORS = ("matches", "starts_with")  # judged on where a path leads (path params)
COVERING_CACHE_SIZE = 4096  # (agent, tool) pairs whose covering rules are remembered
EVERY_PATH = "*"  # as the parameter of `within`: every path the call names; else any value
MAX_TEXT_DEPTH = 32  # levels of a call's parameters a test on `*` looks into
# the parameters a command tool takes the folder it runs the command in from
WORKING_FOLDER_PARAMS = ("directory", "cwd", "workdir", "working_directory", "dir")


class ToolDefinition(BaseModel, frozen=True):
    """What the gate knows of the tool called: its input schema, and the annotations of the
    server that listed it (None: no server a person trusted listed it, as for a tool of
    Foundry's own, so no `hints` rule covers it)."""

    input_schema: dict[str, Any] | None = None
    annotations: dict[str, Any] | None = None

    @classmethod
    def listed(cls, entry: Mapping[str, Any]) -> ToolDefinition:
        """From a trusted server's `tools/list` entry (wire names: `inputSchema`,
        `annotations`)."""
        schema, annotations = entry.get("inputSchema"), entry.get("annotations")
        return cls(
            input_schema=schema if isinstance(schema, dict) else None,
            annotations=annotations if isinstance(annotations, dict) else {},
        )

    def declares(self, hints: Mapping[str, bool]) -> bool:
        """Whether the server declared each of `hints` as given (MCP's defaults where it said
        nothing, or said something other than true or false)."""
        if self.annotations is None:
            return False
        return all(self._hint(name) is wanted for name, wanted in hints.items())

    def _hint(self, name: str) -> bool:
        assert self.annotations is not None
        value = self.annotations.get(name)
        return value if isinstance(value, bool) else TOOL_HINT_DEFAULTS[name]


class OfferedTool(Protocol):
    """A tool on offer as the tool host lists it (tools/catalog.py ToolInfo)."""

    @property
    def name(self) -> str: ...
    @property
    def parameters(self) -> dict[str, Any]: ...
    @property
    def listed(self) -> dict[str, Any]: ...


def offered_definition(tools: Iterable[OfferedTool], name: str) -> ToolDefinition | None:
    """The definition of the tool called `name` among those on offer; None when none is: its
    schema, and its annotations when a server listed it (Foundry's own tools have no listing)."""
    tool = next((tool for tool in tools if tool.name == name), None)
    if tool is None:
        return None
    if not tool.listed:
        return ToolDefinition(input_schema=tool.parameters)
    return ToolDefinition.listed({**tool.listed, "inputSchema": tool.parameters})


class PolicyDecision(BaseModel, frozen=True):
    """What L0 decided about one tool call, which rule decided it, and why in plain words."""

    action: PolicyAction
    rule: str | None = None
    reason: str


# --- operators -------------------------------------------------------------------------------

_MISSING = object()
Test = Callable[[Any, Any], bool]


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _equal(actual: Any, expected: Any) -> bool:
    """Python equality, except that true/false are never equal to the numbers 1/0."""
    if isinstance(actual, bool) or isinstance(expected, bool):
        return isinstance(actual, bool) and isinstance(expected, bool) and actual == expected
    return bool(actual == expected)


def _not_equal(actual: Any, expected: Any) -> bool:
    return not _equal(actual, expected)


def _ordered(compare: Callable[[Any, Any], bool]) -> Test:
    """An ordering test: numbers with numbers, text with text; anything else is false."""

    def test(actual: Any, expected: Any) -> bool:
        if _is_number(actual) and _is_number(expected):
            return compare(actual, expected)
        if isinstance(actual, str) and isinstance(expected, str):
            return compare(actual, expected)
        return False

    return test


def _is_in(actual: Any, expected: Any) -> bool:
    return isinstance(expected, list) and any(_equal(actual, item) for item in expected)


def _contains(actual: Any, expected: Any) -> bool:
    if isinstance(actual, str):
        return isinstance(expected, str) and expected in actual
    if isinstance(actual, list):
        return any(_equal(item, expected) for item in actual)
    return False


def _starts_with(actual: Any, expected: Any) -> bool:
    return isinstance(actual, str) and isinstance(expected, str) and actual.startswith(expected)


def path_within(path: str, container: str, project_root: Path | str) -> bool:
    """Whether path lies inside (or is) container, both relative to project_root when relative.

    Neither needs to exist. `..`, `~`, absolute paths and symlinks (followed as far as they
    exist) are resolved first, so none of them lets a path escape; `/proj-evil` is not in `/proj`.
    A path that cannot be resolved (see `paths.resolve_path`) lies within nothing.
    """
    root = os.path.abspath(project_root)
    folder = resolve_folder(container, root)
    if folder is None:
        return False
    try:
        inner = resolve_path(path, root)
    except UnresolvablePath:
        return False
    return os.path.commonpath([inner, folder]) == folder


def _matches(actual: Any, expected: Any) -> bool:
    """The regular expression is found in the text, or in any text of a list."""
    if not isinstance(expected, str):
        return False
    if isinstance(actual, str):
        return re.search(expected, actual) is not None
    if isinstance(actual, list):
        return any(isinstance(item, str) and re.search(expected, item) for item in actual)
    return False


def _larger_than(actual: Any, expected: Any) -> bool:
    """More than `expected` bytes: a text's UTF-8 size, anything else's size as compact JSON."""
    if not _is_number(expected):
        return False
    if not isinstance(actual, str):
        actual = json.dumps(actual, ensure_ascii=False, separators=(",", ":"), default=repr)
    if len(actual) > expected or 4 * len(actual) <= expected:  # UTF-8 takes 1 to 4 bytes a char
        return len(actual) > expected
    return len(actual.encode("utf-8", "surrogatepass")) > expected


def _texts(actual: Any) -> list[str]:
    """A text, or the texts of a list of them; nothing else."""
    if isinstance(actual, str):
        return [actual]
    if isinstance(actual, list) and all(isinstance(item, str) for item in actual):
        return actual
    return []


def _reaches(actual: Any, expected: Any) -> bool:
    """Every URL given leads to a public host (`public`), or one leads inside (`inside`)."""
    places = [reach(text) for text in _texts(actual)]
    if expected == "public":
        return bool(places) and all(place == "public" for place in places)
    return any(place == "inside" for place in places)


def _carries_data(actual: Any, expected: Any) -> bool:
    return any(carries_data(text) for text in _texts(actual))


def _read_only_sql(actual: Any, expected: Any) -> bool:
    return isinstance(actual, str) and reads_only(actual, expected)


def _several_sql_statements(actual: Any, expected: Any) -> bool:
    return isinstance(actual, str) and several_statements(actual, expected)


def _holds_secret(actual: Any, expected: Any) -> bool:
    """The value (a text, or anything holding texts) holds a secret as the store masks it."""
    return bool(mask_secrets(actual) != actual)


_PLAIN_OPERATORS: dict[str, Test] = {
    "==": _equal,
    "!=": _not_equal,
    "<": _ordered(operator.lt),
    "<=": _ordered(operator.le),
    ">": _ordered(operator.gt),
    ">=": _ordered(operator.ge),
    "in": _is_in,
    "contains": _contains,
    "starts_with": _starts_with,
    "matches": _matches,
    "larger_than": _larger_than,
    "reaches": _reaches,
    "carries_data": _carries_data,
    "read_only_sql": _read_only_sql,
    "several_sql_statements": _several_sql_statements,
    "holds_secret": _holds_secret,
}


def _lookup(params: Any, keys: tuple[str, ...]) -> Any:
    """The value at a dotted param path, or _MISSING when any step is absent."""
    value = params
    for key in keys:
        if not isinstance(value, dict) or key not in value:
            return _MISSING
        value = value[key]
    return value


# --- compiled rules --------------------------------------------------------------------------


def _compile_glob(pattern: str) -> re.Pattern[str]:
    return re.compile(fnmatch.translate(pattern))


@dataclass(frozen=True, slots=True)
class _Condition:
    source: PolicyCondition
    keys: tuple[str, ...]
    test: Test

    def holds(self, tool: str, params: dict[str, Any]) -> bool:
        actual = _lookup(params, self.keys)
        if actual is _MISSING:
            return False
        if self.test(actual, self.source.value):
            return True
        # a command given as words is also the line they make, as a shell handed them reads it
        listed = isinstance(actual, list) and is_command_name(self.keys[-1])
        words = _texts(actual) if listed else []
        return bool(words) and self.test(" ".join(words), self.source.value)

    def describe(self) -> str:
        return describe_condition(self.source)


@dataclass(frozen=True, slots=True)
class _PathPatternCondition:
    """`matches` or `starts_with` on a path parameter, tried on where each path really leads
    (relative to the workspace when inside it; decoded too when percent-escaped). In a rule that
    stops a call (deny, ask) the path as written or any place it leads will do, so a link into
    `.git/hooks` is seen as such; in one that lets a call through (allow, a grant's scope) every
    path must lead where the condition says, so `src/../.git/hooks` is not `src/...`."""

    source: PolicyCondition
    keys: tuple[str, ...]
    test: Test
    folders: ServerFolders
    lets_through: bool

    def holds(self, tool: str, params: dict[str, Any]) -> bool:
        actual = _lookup(params, self.keys)
        if actual is _MISSING:
            return False
        if not self.lets_through and self.test(actual, self.source.value):
            return True
        named = _named_paths(actual, self.source.param)
        leads_to = self._leads_to(tool, params, named)
        if self.lets_through:
            return bool(named) and all(
                path is not None and self.test(path, self.source.value) for path in leads_to
            )
        return any(path is not None and self.test(path, self.source.value) for path in leads_to)

    def _leads_to(
        self, tool: str, params: dict[str, Any], named: list[tuple[str, str]]
    ) -> list[str | None]:
        """Where each named path (its decoded reading, and from each folder its server may take
        it from) leads; None: it cannot be judged."""
        wanted = {raw for _, raw in readings(named)}
        found = self.folders.paths_of(tool, params, named).paths
        return [
            None if p.resolved is None else self.folders.within_project(p.resolved)
            for p in found
            if p.raw in wanted
        ]

    def describe(self) -> str:
        return describe_condition(self.source)


@dataclass(frozen=True, slots=True)
class _PathCondition:
    """`within`: the named parameter is given (a path or a list of paths), and every path the
    call names, wherever it is, resolves inside the folder."""

    source: PolicyCondition
    keys: tuple[str, ...]
    folders: ServerFolders

    def holds(self, tool: str, params: dict[str, Any]) -> bool:
        judged = self._judged(tool, params)
        return judged is not None and judged[0].all_within(judged[1])

    def why_not(self, tool: str, params: dict[str, Any]) -> str | None:
        """Why the call's paths do not all lie in the folder (one outside, or one that cannot
        be judged), when that is what keeps the condition from holding."""
        judged = self._judged(tool, params)
        return None if judged is None else judged[0].describe_outside(judged[1])

    def _judged(self, tool: str, params: dict[str, Any]) -> tuple[CallPaths, str] | None:
        """Every path the call names and the resolved folder; None when the parameter holds
        no path or the folder cannot be judged."""
        every = self.source.param == EVERY_PATH
        named = [] if every else _named_paths(_lookup(params, self.keys), self.source.param)
        container = self.source.value
        if not (named or every) or not isinstance(container, str):
            return None
        if every and self.folders.folder_of(tool) is None:
            return None  # a remote server: where it takes its paths from is nobody's to judge
        folder = self.folders.folder(container)
        if folder is None:
            return None
        return self.folders.paths_of(tool, params, named), folder

    def describe(self) -> str:
        return describe_condition(self.source)


@dataclass(frozen=True, slots=True)
class _CommandCondition:
    """`read_only_command`: the command line only reads inside the folder, run inside it where
    the tool's server runs it (in the folder a `directory`-like parameter names, when given):
    `ls` run in /etc lists /etc. `command_names`: a word of the command as the shell reads it
    (`.e""nv` is `.env`), or where it leads from there, matches the pattern; or the command
    does not parse, so its words cannot be known."""

    source: PolicyCondition
    keys: tuple[str, ...]
    folders: ServerFolders

    def holds(self, tool: str, params: dict[str, Any]) -> bool:
        command = _lookup(params, self.keys)
        if command is _MISSING:
            return False
        if self.source.op == "command_names":
            return self._names(tool, params, command)
        folder = self.folders.folder(self.source.value)
        if folder is None:
            return False
        runs_in = self._runs_in(tool, params)
        if runs_in is None or not path_within(str(runs_in), folder, folder):
            return False
        return reads_only_inside(command, runs_in, folder)

    def _names(self, tool: str, params: dict[str, Any], command: Any) -> bool:
        words = command_words(command)
        if words is None:
            return True
        runs_in = self._runs_in(tool, params)
        pattern = re.compile(self.source.value)
        for word in words:
            leads_to = None
            if runs_in is not None:
                with contextlib.suppress(UnresolvablePath):
                    leads_to = self.folders.within_project(resolve_path(word, runs_in))
            if pattern.search(word) or (leads_to is not None and pattern.search(leads_to)):
                return True
        return False

    def _runs_in(self, tool: str, params: dict[str, Any]) -> Path | None:
        """Where the command runs: the folder the call names, from the server's folder; None
        when unknown (a server of no known kind takes a relative path from nobody knows where)."""
        base = None if self.folders.of_unknown_kind(tool) else self.folders.folder_of(tool)
        named = next((params[k] for k in WORKING_FOLDER_PARAMS if k in params), None)
        if named is None or base is None:
            return base
        if not isinstance(named, str):
            return None
        try:
            return Path(resolve_path(named, base))
        except UnresolvablePath:
            return None

    def describe(self) -> str:
        return describe_condition(self.source)


def _named_paths(value: Any, where: str) -> list[tuple[str, str]]:
    """The path (or list of paths) a rule's parameter holds, each with where it is."""
    if isinstance(value, str):
        return [(where, value)]
    if isinstance(value, list) and value and all(isinstance(item, str) for item in value):
        return [(f"{where}[{index}]", item) for index, item in enumerate(value)]
    return []


def describe_condition(condition: PolicyCondition) -> str:
    """A condition in words a person reads in an approval: no regular expression spelt out."""
    param, op, value = condition.param, condition.op, condition.value
    if value is None and op in ("==", "!="):
        return f"{param} is {'given' if op == '!=' else 'not given'}"
    described = _DESCRIBED_OPERATORS.get(op)
    if described is not None:
        return f"{param} {described(value)}"
    shown = repr(value)
    if len(shown) > SHOWN_VALUE_CHARS:
        if op == "matches":
            return f"{param} matches the rule's pattern"
        shown = shown[: SHOWN_VALUE_CHARS - 1] + "…"
    return f"{param} {op} {shown}"


_DESCRIBED_OPERATORS: dict[str, Callable[[Any], str]] = {
    "read_only_sql": lambda dialect: f"is one {dialect or 'SQL'} statement that only reads",
    "several_sql_statements": lambda _: "holds more than one statement",
    "holds_secret": lambda _: "holds a secret",
    "command_names": lambda _: "names what the rule's pattern matches",
    "read_only_command": lambda folder: f"is a command that only reads inside {folder!r}",
    "reaches": lambda place: "leads to a public host" if place == "public" else "leads inside",
    "carries_data": lambda _: "carries data out in its URL",
    "gives_only": lambda keys: f"gives no parameter but {', '.join(keys) or 'none'}",
}


@dataclass(frozen=True, slots=True)
class _AnyValueCondition:
    """A test on `*`, every parameter: it holds when it holds for some text the call gives,
    at any depth (`matches` on `*`: shell syntax in whatever a tool takes)."""

    source: PolicyCondition
    test: Test

    def holds(self, tool: str, params: dict[str, Any]) -> bool:
        return any(self.test(text, self.source.value) for text in _all_texts(params))

    def describe(self) -> str:
        return describe_condition(self.source).replace("* ", "a parameter ", 1)


def _all_texts(value: Any, depth: int = 0) -> list[str]:
    """Every text in a call's parameters (values, not keys), as deep as a policy looks."""
    if isinstance(value, str):
        return [value]
    if depth >= MAX_TEXT_DEPTH:
        return []
    items = value.values() if isinstance(value, dict) else value
    if not isinstance(value, dict | list):
        return []
    return [text for item in items for text in _all_texts(item, depth + 1)]


@dataclass(frozen=True, slots=True)
class _OnlyParamsCondition:
    """`gives_only`: the call (`*`), or the object at the parameter, gives no parameter but
    those listed: a rule made from approved calls lets through none with a key they lacked."""

    source: PolicyCondition
    keys: tuple[str, ...]

    def holds(self, tool: str, params: dict[str, Any]) -> bool:
        given = params if self.source.param == EVERY_PATH else _lookup(params, self.keys)
        return isinstance(given, dict) and set(given) <= set(self.source.value)

    def describe(self) -> str:
        return describe_condition(self.source).replace("* ", "the call ", 1)


_AnyCondition = (
    _Condition
    | _PathCondition
    | _PathPatternCondition
    | _CommandCondition
    | _AnyValueCondition
    | _OnlyParamsCondition
)


@dataclass(frozen=True, slots=True)
class _Rule:
    source: PolicyRule
    agent: re.Pattern[str]
    tool: re.Pattern[str]
    every: tuple[_AnyCondition, ...]
    some: tuple[_AnyCondition, ...]

    def declared(self, definition: ToolDefinition | None) -> bool:
        """Whether the tool's definition declares the rule's hints (true without hints)."""
        hints = self.source.hints
        return not hints or (definition is not None and definition.declares(hints))

    def covers(self, agent_id: str, tool: str) -> bool:
        """Whether the rule's agent and tool globs match; its conditions are not looked at."""
        return self.tool.match(tool) is not None and self.agent.match(agent_id) is not None

    def explain_match(
        self, agent_id: str, tool: str, params: dict[str, Any], definition: ToolDefinition | None
    ) -> str | None:
        """Why this rule, which covers the call, matches its params and the tool's declared
        hints, or None when it does not."""
        if not self.declared(definition):
            return None
        if not all(condition.holds(tool, params) for condition in self.every):
            return None
        held = next((c for c in self.some if c.holds(tool, params)), None)
        if self.some and held is None:
            return None
        reasons = [f"tool {tool} matches {self.source.tool!r}"]
        if self.source.agent != "*":
            reasons.append(f"agent {agent_id} matches {self.source.agent!r}")
        if self.source.kind is not None:
            reasons.append(f"its server is a {self.source.kind} server")
        if self.source.hints:
            declared = ", ".join(f"{k}={str(v).lower()}" for k, v in self.source.hints.items())
            reasons.append(f"its server declares {declared}")
        reasons.extend(condition.describe() for condition in self.every)
        if held is not None:
            reasons.append(held.describe())
        return f"rule {self.source.name} matched: " + ", ".join(reasons)

    def why_paths_kept_out(self, tool: str, params: dict[str, Any]) -> str | None:
        """Why this rule, which covers the call, does not let it through when a `within` of it
        fails on the call's paths: the path outside, or the one that cannot be judged."""
        outside = (
            condition.why_not(tool, params)
            for condition in self.every
            if isinstance(condition, _PathCondition)
        )
        why = next((reason for reason in outside if reason is not None), None)
        return None if why is None else f"rule {self.source.name} does not allow it: {why}"


# --- the engine ------------------------------------------------------------------------------


class PolicyEngine:
    """Decides each tool call at L0: allow, deny, or pass it to the supervisor or a human.

    Every call to decide() counts towards the rate limits and the loop detection, whatever was
    decided, so an agent that keeps calling while limited stays limited until it slows down.
    The config is read once, here; a changed policy needs a new engine. `server_folders` maps
    each MCP server to the folders it takes relative paths from and its kind (`ServerSite`);
    without it every server is taken to run in the project folder and to be of the kind each
    rule was written for. A rule with a `kind` covers only tools of servers of that kind.
    """

    def __init__(
        self,
        config: PolicyConfig,
        project_root: Path,
        clock: Callable[[], float] = time.monotonic,
        server_folders: ServerPlaces | None = None,
    ) -> None:
        self._clock = clock
        self._root = os.path.abspath(project_root)
        self._folders = ServerFolders(Path(self._root), server_folders)
        self._operators: dict[str, Test] = dict(_PLAIN_OPERATORS)
        self._rules = tuple(self._compile_rule(rule) for rule in config.rules)
        self._index = RuleIndex(self._rules, _rule_globs)
        self._covering: dict[tuple[str, str], tuple[_Rule, ...]] = {}
        self._limits = tuple((_compile_glob(limit.tool), limit) for limit in config.rate_limits)
        self._loop_detection = config.loop_detection
        self._limit_calls: dict[tuple[int, str], deque[float]] = {}
        self._recent_calls: deque[tuple[float, str]] = deque()
        self._recent_counts: Counter[str] = Counter()
        self._lock = threading.Lock()

    def fresh(self, clock: Callable[[], float] | None = None) -> PolicyEngine:
        """The same compiled rules with no call counted yet: a dry run decides each call as
        the first, without compiling the policy again (counting time by `clock`, if given)."""
        engine = copy.copy(self)
        engine._clock = clock or self._clock
        engine._covering = {}
        engine._limit_calls = {}
        engine._recent_calls = deque()
        engine._recent_counts = Counter()
        engine._lock = threading.Lock()
        return engine

    def decide(
        self,
        agent_id: str,
        tool: str,
        params: dict[str, Any],
        schema: Mapping[str, Any] | None = None,
        definition: ToolDefinition | None = None,
    ) -> PolicyDecision:
        """The decision on one call; `schema`, the tool's input schema when it is known, says
        which parameters make two calls the same one (see `call_key`); `definition`, what its
        server listed (its schema too, when `schema` is not given), meets rules' `hints`."""
        if schema is None and definition is not None:
            schema = definition.input_schema
        with self._folders.one_decision():
            key = self._loop_key(agent_id, tool, params, schema)
            with self._lock:
                now = self._clock()
                limited = self._count_rate_limits(agent_id, tool, now)
                looping = self._count_repeats(key, now)
            return (
                limited or looping or self._first_matching_rule(agent_id, tool, params, definition)
            )

    def _compile_rule(self, rule: PolicyRule) -> _Rule:
        when = rule.when or PolicyMatch()
        return _Rule(
            source=rule,
            agent=_compile_glob(rule.agent),
            tool=_compile_glob(rule.tool),
            every=tuple(self._compile_condition(c, rule.action) for c in when.all),
            some=tuple(self._compile_condition(c, rule.action) for c in when.any),
        )

    def _compile_condition(self, condition: PolicyCondition, action: str) -> _AnyCondition:
        keys = tuple(condition.param.split("."))
        if condition.op == "within":
            return _PathCondition(condition, keys, self._folders)
        if condition.op == "gives_only":
            return _OnlyParamsCondition(condition, keys)
        if condition.param == EVERY_PATH and condition.op in self._operators:
            return _AnyValueCondition(condition, self._operators[condition.op])
        if condition.op in ("read_only_command", "command_names"):
            return _CommandCondition(condition, keys, self._folders)
        if condition.op in PATH_TEXT_OPERATORS and is_path_name(keys[-1]):
            test = self._operators[condition.op]
            lets_through = action == "allow"
            return _PathPatternCondition(condition, keys, test, self._folders, lets_through)
        return _Condition(condition, keys, self._operators[condition.op])

    def _first_matching_rule(
        self,
        agent_id: str,
        tool: str,
        params: dict[str, Any],
        definition: ToolDefinition | None,
    ) -> PolicyDecision:
        kept_out: str | None = None  # why an allow rule before did not let the call through
        for rule in self._rules_covering(agent_id, tool):
            reason = rule.explain_match(agent_id, tool, params, definition)
            if reason is not None:
                if rule.source.action != "allow" and kept_out is not None:
                    reason = f"{reason}; {kept_out}"
                return PolicyDecision(
                    action=rule.source.action, rule=rule.source.name, reason=reason
                )
            if kept_out is None and rule.source.action == "allow" and rule.declared(definition):
                kept_out = rule.why_paths_kept_out(tool, params)
        reason = "no rule matched: denied by default"
        return PolicyDecision(action="deny", reason=f"{reason}; {kept_out}" if kept_out else reason)

    def _rules_covering(self, agent_id: str, tool: str) -> tuple[_Rule, ...]:
        """The rules whose globs match and whose kind (if they have one) is the tool's server's,
        in order, from the index (which looks only at rules that can match); remembered per
        (agent, tool) pair."""
        key = (agent_id, tool)
        rules = self._covering.get(key)
        if rules is None:
            if len(self._covering) >= COVERING_CACHE_SIZE:
                self._covering.clear()
            rules = tuple(
                rule
                for rule in self._index.covering(agent_id, tool)
                if rule.source.kind is None or self._folders.is_kind(tool, rule.source.kind)
            )
            self._covering[key] = rules
        return rules

    def _count_rate_limits(self, agent_id: str, tool: str, now: float) -> PolicyDecision | None:
        """Count the call against every limit on its tool; a deny for the first one exceeded."""
        exceeded: PolicyDecision | None = None
        for index, (tool_glob, limit) in enumerate(self._limits):
            if tool_glob.match(tool) is None:
                continue
            calls = self._limit_calls.setdefault((index, agent_id), deque())
            calls.append(now)
            while calls and calls[0] <= now - limit.per_seconds:
                calls.popleft()
            if exceeded is None and len(calls) > limit.max_calls:
                reason = (
                    f"rate limit: {len(calls)} calls of {limit.tool} in {limit.per_seconds:g} s "
                    f"(limit {limit.max_calls})"
                )
                exceeded = PolicyDecision(action="deny", reason=reason)
        return exceeded

    def _loop_key(
        self, agent_id: str, tool: str, params: dict[str, Any], schema: Mapping[str, Any] | None
    ) -> str | None:
        if not self._loop_detection:
            return None
        return call_key(agent_id, tool, params, schema, self._folders)

    def _count_repeats(self, key: str | None, now: float) -> PolicyDecision | None:
        """Count the call among recent identical ones (`key`: None when loops are not
        detected); a deny when it repeats too often."""
        if key is None:
            return None
        while self._recent_calls and self._recent_calls[0][0] <= now - LOOP_WINDOW_SECONDS:
            _, old = self._recent_calls.popleft()
            self._recent_counts[old] -= 1
            if not self._recent_counts[old]:
                del self._recent_counts[old]
        self._recent_calls.append((now, key))
        self._recent_counts[key] += 1
        repeats = self._recent_counts[key]
        if repeats < LOOP_REPEATS:
            return None
        reason = f"loop: the same call {repeats} times in {LOOP_WINDOW_SECONDS:g} s"
        return PolicyDecision(action="deny", reason=reason)


def _rule_globs(rule: _Rule) -> tuple[str, str]:
    return rule.source.agent, rule.source.tool


def conditions_hold(
    conditions: list[PolicyCondition],
    params: dict[str, Any],
    project_root: Path,
    tool: str = "*",
    server_folders: ServerPlaces | None = None,
) -> bool:
    """Whether every condition holds for a call of `tool` with these parameters (the `all` of a
    rule, on its own)."""
    rule = PolicyRule(name="scope", when=PolicyMatch(all=conditions), action="allow")
    config = PolicyConfig(rules=[rule], loop_detection=False)
    engine = PolicyEngine(config, project_root, server_folders=server_folders)
    return engine.decide("*", tool, params).action == "allow"


def call_key(
    agent_id: str,
    tool: str,
    params: Mapping[str, Any],
    schema: Mapping[str, Any] | None,
    folders: ServerFolders,
) -> str:
    """One text per distinct call, for the loop detection: agent, tool and the parameters the
    tool's schema declares (all of them when it is not known), as canonical JSON with each path
    replaced by where it leads. So a field the tool ignores, the order of the keys, and another
    spelling of the same file (`./a`, `a`, a link, a percent-escape, another Unicode form) make
    no new call; two files are two calls."""
    declared = declared_params(params, schema)
    found, _ = find_paths(declared, commands=False)  # a command line is text, as written
    places = {raw: folders.place_of(tool, raw) for _, raw in found}
    canonical = _with_places(declared, places)
    try:
        text = json.dumps(canonical, sort_keys=True, separators=(",", ":"), default=repr)
    except (TypeError, ValueError):  # keys of mixed types, circular data
        text = repr(canonical)
    return json.dumps([agent_id, tool, text])


def declared_params(value: Any, schema: Mapping[str, Any] | None) -> Any:
    """The value without the object fields its JSON schema does not declare (at every level
    the schema describes): what the tool reads of it. Fields a schema types as a whole
    (`additionalProperties` or `patternProperties` with a schema) are kept."""
    if not isinstance(schema, Mapping):
        return value
    properties = schema.get("properties")
    if isinstance(value, Mapping) and isinstance(properties, Mapping):
        typed_extras = isinstance(schema.get("additionalProperties"), Mapping) or bool(
            schema.get("patternProperties")
        )
        return {
            key: declared_params(item, properties.get(key))
            for key, item in value.items()
            if key in properties or typed_extras
        }
    items = schema.get("items")
    if isinstance(value, list) and isinstance(items, Mapping):
        return [declared_params(item, items) for item in value]
    return value


def _with_places(value: Any, places: Mapping[str, str]) -> Any:
    """The value with every text that is one of the paths (a value or a key) replaced by its
    place."""
    if isinstance(value, str):
        return {"place": places[value]} if value in places else value
    if isinstance(value, Mapping):
        return {
            places.get(key, key) if isinstance(key, str) else key: _with_places(item, places)
            for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [_with_places(item, places) for item in value]
    return value
