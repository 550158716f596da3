"""The rule index: it finds exactly the rules a scan of every rule would, in the same order."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from foundry.agent.models import PolicyCondition, PolicyConfig, PolicyMatch, PolicyRule
from foundry.supervision.policy import PolicyEngine
from foundry.supervision.rule_index import GlobKey, RuleIndex, glob_key


@dataclass(frozen=True)
class Globs:
    """A rule as the index sees it: an agent glob and a tool glob."""

    agent: str
    tool: str


def index_of(rules: list[Globs]) -> RuleIndex[Globs]:
    return RuleIndex(rules, lambda rule: (rule.agent, rule.tool))


def scan(rules: list[Globs], agent: str, tool: str) -> tuple[Globs, ...]:
    """What the index must give: every rule whose globs match, by a walk over all of them."""
    return tuple(
        rule
        for rule in rules
        if fnmatch.fnmatchcase(tool, rule.tool) and fnmatch.fnmatchcase(agent, rule.agent)
    )


# --- keys ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("glob", "key"),
    [
        ("files.read_file", GlobKey("exact", "files.read_file")),
        ("files.*", GlobKey("prefix", "files.")),
        ("*.read_file", GlobKey("suffix", ".read_file")),
        ("fs.*_file", GlobKey("suffix", "_file")),
        ("files.*e", GlobKey("prefix", "files.")),
        ("a?c", GlobKey("prefix", "a")),  # a tie goes to the prefix
        ("[ab]cd", GlobKey("suffix", "cd")),
        ("ab[*]", GlobKey("prefix", "ab")),
        ("[*]x", GlobKey("suffix", "x")),
        ("x]y*", GlobKey("prefix", "x]y")),
        ("*", None),
        ("*[ab]?", None),
        ("", GlobKey("exact", "")),
    ],
)
def test_a_glob_is_filed_under_its_longest_literal_end(glob: str, key: GlobKey | None) -> None:
    assert glob_key(glob) == key


def test_every_kind_of_glob_is_found_and_kept_in_rule_order() -> None:
    rules = [
        Globs("*", "*"),
        Globs("*", "files.read_file"),
        Globs("*", "files.*"),
        Globs("*", "*.read_file"),
        Globs("worker-*", "*"),
        Globs("worker-7", "*"),
        Globs("*", "web.*"),
        Globs("boss", "files.read_file"),
        Globs("*", "f?les.re[a-z]d_file"),
    ]
    found = index_of(rules).covering("worker-7", "files.read_file")
    assert found == scan(rules, "worker-7", "files.read_file")
    assert found == tuple(rules[index] for index in (0, 1, 2, 3, 4, 5, 8))


def test_a_name_shorter_than_every_key_finds_only_the_unindexed_rules() -> None:
    rules = [Globs("*", "service-number-one.*"), Globs("*", "*"), Globs("*", "*.suffix-long")]
    assert index_of(rules).covering("a", "x") == (rules[1],)


def test_an_empty_index_covers_nothing() -> None:
    assert index_of([]).covering("agent", "tool") == ()


def test_globs_match_case_sensitively() -> None:
    rules = [Globs("*", "Files.*"), Globs("*", "*.READ"), Globs("*", "files.read")]
    assert index_of(rules).covering("a", "files.read") == (rules[2],)


# --- the index is a scan, only faster ----------------------------------------------------------

GLOB_PIECES = st.sampled_from(
    ["a", "b", ".", "-", "*", "*", "?", "[ab]", "[!a]", "[a-b]", "[]a]", "[", "]", "!"]
)
NAME_PIECES = st.sampled_from(["a", "b", ".", "-", "[", "]", "!", "ab", "ba."])
globs = st.lists(GLOB_PIECES, max_size=6).map("".join)
names = st.lists(NAME_PIECES, max_size=6).map("".join)


@st.composite
def name_like(draw: st.DrawFn, glob: str) -> str:
    """A name made from a glob, its wildcards filled in, so that it often matches."""
    filled = []
    for char in glob:
        if char == "*":
            filled.append(draw(names))
        elif char in "?[]!":
            filled.append(draw(st.sampled_from("ab.-")))
        else:
            filled.append(char)
    return "".join(filled)


@st.composite
def rules_and_calls(draw: st.DrawFn) -> tuple[list[Globs], list[tuple[str, str]]]:
    rules = draw(st.lists(st.builds(Globs, agent=globs, tool=globs), max_size=40))
    calls = []
    for _ in range(draw(st.integers(1, 12))):
        if rules and draw(st.booleans()):
            rule = draw(st.sampled_from(rules))
            calls.append((draw(name_like(rule.agent)), draw(name_like(rule.tool))))
        else:
            calls.append((draw(names), draw(names)))
    return rules, calls


@settings(max_examples=400, deadline=None)
@given(rules_and_calls())
def test_the_index_covers_exactly_what_a_scan_of_every_rule_finds(
    case: tuple[list[Globs], list[tuple[str, str]]],
) -> None:
    rules, calls = case
    index = index_of(rules)
    for agent, tool in calls:
        assert index.covering(agent, tool) == scan(rules, agent, tool), (agent, tool)


# --- the engine decides as a first-match walk over every rule ------------------------------------


def first_match(rules: list[PolicyRule], agent: str, tool: str, params: dict[str, Any]) -> str:
    """The reference decision: the first rule, in order, whose globs and condition hold."""
    for rule in rules:
        if not fnmatch.fnmatchcase(tool, rule.tool):
            continue
        if not fnmatch.fnmatchcase(agent, rule.agent):
            continue
        if rule.when is None or params.get("n") == rule.when.all[0].value:
            return rule.name
    return "default-deny"


FIXTURE_REUSED = HealthCheck.function_scoped_fixture  # tmp_path only roots the engine


@st.composite
def policies_and_calls(
    draw: st.DrawFn,
) -> tuple[list[PolicyRule], list[tuple[str, str, dict[str, Any]]]]:
    raw_rules, raw_calls = draw(rules_and_calls())
    rules = []
    for number, raw in enumerate(raw_rules):
        needed = draw(st.one_of(st.none(), st.integers(0, 2)))
        when = None
        if needed is not None:
            when = PolicyMatch(all=[PolicyCondition(param="n", op="==", value=needed)])
        action = draw(st.sampled_from(["allow", "deny", "human", "supervisor"]))
        rules.append(
            PolicyRule(name=f"r{number}", agent=raw.agent, tool=raw.tool, when=when, action=action)
        )
    calls = [(agent, tool, {"n": draw(st.integers(0, 2))}) for agent, tool in raw_calls]
    return rules, calls


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(policies_and_calls())
def test_the_engine_decides_as_a_first_match_walk_over_every_rule(
    tmp_path: Path, case: tuple[list[PolicyRule], list[tuple[str, str, dict[str, Any]]]]
) -> None:
    rules, calls = case
    engine = PolicyEngine(PolicyConfig(rules=rules, loop_detection=False), tmp_path)
    for agent, tool, params in calls + calls:  # the second time from the remembered pairs
        decision = engine.decide(agent, tool, params)
        assert (decision.rule or "default-deny") == first_match(rules, agent, tool, params)


def test_a_thousand_exact_rules_find_the_one_named(tmp_path: Path) -> None:
    rules = [PolicyRule(name=f"r{n}", tool=f"svc{n}.run", action="deny") for n in range(1000)]
    rules.append(PolicyRule(name="rest", tool="*", action="human"))
    engine = PolicyEngine(PolicyConfig(rules=rules, loop_detection=False), tmp_path)
    assert engine.decide("a", "svc517.run", {}).rule == "r517"
    assert engine.decide("a", "svc517.runs", {}).rule == "rest"
