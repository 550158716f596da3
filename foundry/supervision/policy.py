"""The L0 policy engine: rate limits, loop detection, then ordered first-match-wins rules."""

from __future__ import annotations

import fnmatch
import json
import operator
import os
import re
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from foundry.agent.models import (
    PolicyCondition,
    PolicyConfig,
    PolicyMatch,
    PolicyRule,
)

PolicyAction = Literal["allow", "deny", "supervisor", "human"]

LOOP_REPEATS = 3
LOOP_WINDOW_SECONDS = 10.0
COVERING_CACHE_SIZE = 4096  # (agent, tool) pairs whose covering rules are remembered


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


def _resolve_path(path: str, root: str) -> str:
    """The real absolute path: `~` expanded, relative to root, `..` folded, symlinks followed."""
    joined = os.path.join(root, os.path.expanduser(path))
    return os.path.normcase(os.path.realpath(joined))


def path_within(path: str, container: str, project_root: Path | str) -> bool:
    """Whether path lies inside (or is) container, both relative to project_root when relative.

    Neither needs to exist. `..`, `~`, absolute paths and symlinks (followed as far as they
    exist) are resolved first, so none of them lets a path escape; `/proj-evil` is not in `/proj`.
    """
    root = os.path.abspath(project_root)
    try:
        inner = _resolve_path(path, root)
        outer = _resolve_path(container, root)
        return os.path.commonpath([inner, outer]) == outer
    except (OSError, ValueError):  # a NUL byte, paths on different drives
        return False


def _within(root: str) -> Test:
    """The `within` test for one project: the param's path lies inside the value's path."""

    def test(actual: Any, expected: Any) -> bool:
        if not isinstance(actual, str) or not isinstance(expected, str):
            return False
        return path_within(actual, expected, root)

    return test


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

    def holds(self, params: dict[str, Any]) -> bool:
        actual = _lookup(params, self.keys)
        return actual is not _MISSING and self.test(actual, self.source.value)

    def describe(self) -> str:
        return f"{self.source.param} {self.source.op} {self.source.value!r}"


@dataclass(frozen=True, slots=True)
class _Rule:
    source: PolicyRule
    agent: re.Pattern[str]
    tool: re.Pattern[str]
    every: tuple[_Condition, ...]
    some: tuple[_Condition, ...]

    def covers(self, agent_id: str, tool: str) -> bool:
        """Whether the rule's agent and tool globs match; its conditions are not looked at."""
        return self.tool.match(tool) is not None and self.agent.match(agent_id) is not None

    def explain_match(self, agent_id: str, tool: str, params: dict[str, Any]) -> str | None:
        """Why this rule, which covers the call, matches its params, or None when it does not."""
        if not all(condition.holds(params) for condition in self.every):
            return None
        held = next((condition for condition in self.some if condition.holds(params)), None)
        if self.some and held is None:
            return None
        reasons = [f"tool {tool} matches {self.source.tool!r}"]
        if self.source.agent != "*":
            reasons.append(f"agent {agent_id} matches {self.source.agent!r}")
        reasons.extend(condition.describe() for condition in self.every)
        if held is not None:
            reasons.append(held.describe())
        return f"rule {self.source.name} matched: " + ", ".join(reasons)


# --- the engine ------------------------------------------------------------------------------


class PolicyEngine:
    """Decides each tool call at L0: allow, deny, or pass it to the supervisor or a human.

    Every call to decide() counts towards the rate limits and the loop detection, whatever was
    decided, so an agent that keeps calling while limited stays limited until it slows down.
    The config is read once, here; a changed policy needs a new engine.
    """

    def __init__(
        self,
        config: PolicyConfig,
        project_root: Path,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._clock = clock
        self._operators: dict[str, Test] = {
            **_PLAIN_OPERATORS,
            "within": _within(os.path.abspath(project_root)),
        }
        self._rules = tuple(self._compile_rule(rule) for rule in config.rules)
        self._covering: dict[tuple[str, str], tuple[_Rule, ...]] = {}
        self._limits = tuple((_compile_glob(limit.tool), limit) for limit in config.rate_limits)
        self._loop_detection = config.loop_detection
        self._limit_calls: dict[tuple[int, str], deque[float]] = {}
        self._recent_calls: deque[tuple[float, str]] = deque()
        self._recent_counts: Counter[str] = Counter()
        self._lock = threading.Lock()

    def decide(self, agent_id: str, tool: str, params: dict[str, Any]) -> PolicyDecision:
        with self._lock:
            now = self._clock()
            limited = self._count_rate_limits(agent_id, tool, now)
            looping = self._count_repeats(agent_id, tool, params, now)
        return limited or looping or self._first_matching_rule(agent_id, tool, params)

    def _compile_rule(self, rule: PolicyRule) -> _Rule:
        when = rule.when or PolicyMatch()
        return _Rule(
            source=rule,
            agent=_compile_glob(rule.agent),
            tool=_compile_glob(rule.tool),
            every=tuple(self._compile_condition(condition) for condition in when.all),
            some=tuple(self._compile_condition(condition) for condition in when.any),
        )

    def _compile_condition(self, condition: PolicyCondition) -> _Condition:
        keys = tuple(condition.param.split("."))
        return _Condition(condition, keys, self._operators[condition.op])

    def _first_matching_rule(
        self, agent_id: str, tool: str, params: dict[str, Any]
    ) -> PolicyDecision:
        for rule in self._rules_covering(agent_id, tool):
            reason = rule.explain_match(agent_id, tool, params)
            if reason is not None:
                return PolicyDecision(
                    action=rule.source.action, rule=rule.source.name, reason=reason
                )
        return PolicyDecision(action="deny", reason="no rule matched: denied by default")

    def _rules_covering(self, agent_id: str, tool: str) -> tuple[_Rule, ...]:
        """The rules whose globs match, in order; remembered per (agent, tool) pair."""
        key = (agent_id, tool)
        rules = self._covering.get(key)
        if rules is None:
            if len(self._covering) >= COVERING_CACHE_SIZE:
                self._covering.clear()
            rules = tuple(rule for rule in self._rules if rule.covers(agent_id, tool))
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

    def _count_repeats(
        self, agent_id: str, tool: str, params: dict[str, Any], now: float
    ) -> PolicyDecision | None:
        """Count the call among recent identical ones; a deny when it repeats too often."""
        if not self._loop_detection:
            return None
        while self._recent_calls and self._recent_calls[0][0] <= now - LOOP_WINDOW_SECONDS:
            _, old = self._recent_calls.popleft()
            self._recent_counts[old] -= 1
            if not self._recent_counts[old]:
                del self._recent_counts[old]
        key = _call_key(agent_id, tool, params)
        self._recent_calls.append((now, key))
        self._recent_counts[key] += 1
        repeats = self._recent_counts[key]
        if repeats < LOOP_REPEATS:
            return None
        reason = f"loop: the same call {repeats} times in {LOOP_WINDOW_SECONDS:g} s"
        return PolicyDecision(action="deny", reason=reason)


def conditions_hold(
    conditions: list[PolicyCondition], params: dict[str, Any], project_root: Path
) -> bool:
    """Whether every condition holds for these parameters (the `all` of a rule, on its own)."""
    rule = PolicyRule(name="scope", when=PolicyMatch(all=conditions), action="allow")
    engine = PolicyEngine(PolicyConfig(rules=[rule], loop_detection=False), project_root)
    return engine.decide("*", "*", params).action == "allow"


def _call_key(agent_id: str, tool: str, params: dict[str, Any]) -> str:
    """One text per distinct call: agent, tool and the params as canonical JSON."""
    try:
        text = json.dumps(params, sort_keys=True, separators=(",", ":"), default=repr)
    except (TypeError, ValueError):  # keys of mixed types, circular data
        text = repr(params)
    return json.dumps([agent_id, tool, text])


# --- the default policy ----------------------------------------------------------------------

PROJECT = "."
READ_TOOLS = ("*.read*", "*.list*", "*.get*", "*.search*")
WRITE_TOOLS = ("*.write*", "*.edit*", "*.create*")
MOVE_TOOLS = "*.move*"
DELETE_TOOLS = "*.delete*"
OUTWARD_TOOLS = (
    "*fetch*",
    "*http*",
    "*shell*",
    "*exec*",
    "*run_command*",
    "*mail*",
    "*send*",
    "*sql*",
    "*query*",
    "*deploy*",
)
PATH_PARAMS = ("path", "source", "destination")


def _inside_project(param: str) -> PolicyCondition:
    return PolicyCondition(param=param, op="within", value=PROJECT)


def _given(param: str) -> PolicyCondition:
    """True when the call passes the param at all (any value but null)."""
    return PolicyCondition(param=param, op="!=", value=None)


def _rule(
    name: str,
    tool: str,
    action: PolicyAction,
    every: Sequence[PolicyCondition] = (),
    some: Sequence[PolicyCondition] = (),
) -> PolicyRule:
    when = PolicyMatch(all=list(every), any=list(some)) if every or some else None
    return PolicyRule(name=name, tool=tool, when=when, action=action)


def _verb(glob: str) -> str:
    """The word of a tool glob, for rule names: `*.read*` → `read`."""
    return glob.strip("*.")


def default_policy() -> PolicyConfig:
    """The policy a careful user would keep; first match wins, in this order:

    1. `time-tools`: time.* is harmless → allow.
    2. `outward-<word>`: tools that reach the network, a shell, mail, a database or a deployment
       (*fetch*, *http*, *shell*, *exec*, *run_command*, *mail*, *send*, *sql*, *query*,
       *deploy*) → a human, whatever their params.
    3. `read-inside-project-<verb>`: *.read*, *.list*, *.get*, *.search* with `path` inside the
       project → allow.
    4. `write-inside-project-<verb>`: *.write*, *.edit*, *.create* with `path` inside the project,
       and `move-inside-project`: *.move* with `source` and `destination` inside → the supervisor.
    5. `delete-inside-project`: *.delete* with `path` inside the project → a human.
    6. `outside-project-<verb>`: the same file tools given a `path`, `source` or `destination`
       that did not pass the rules above (so it lies outside the project) → deny.
    7. `ask-a-human`: everything else → a human.
    """
    touches_a_path = [_given(param) for param in PATH_PARAMS]
    file_tools = (*READ_TOOLS, *WRITE_TOOLS, MOVE_TOOLS, DELETE_TOOLS)
    rules = [
        _rule("time-tools", "time.*", "allow"),
        *(_rule(f"outward-{_verb(glob)}", glob, "human") for glob in OUTWARD_TOOLS),
        *(
            _rule(f"read-inside-project-{_verb(glob)}", glob, "allow", [_inside_project("path")])
            for glob in READ_TOOLS
        ),
        *(
            _rule(
                f"write-inside-project-{_verb(glob)}", glob, "supervisor", [_inside_project("path")]
            )
            for glob in WRITE_TOOLS
        ),
        _rule(
            "move-inside-project",
            MOVE_TOOLS,
            "supervisor",
            [_inside_project("source"), _inside_project("destination")],
        ),
        _rule("delete-inside-project", DELETE_TOOLS, "human", [_inside_project("path")]),
        *(
            _rule(f"outside-project-{_verb(glob)}", glob, "deny", some=touches_a_path)
            for glob in file_tools
        ),
        _rule("ask-a-human", "*", "human"),
    ]
    return PolicyConfig(rules=rules, loop_detection=True)
