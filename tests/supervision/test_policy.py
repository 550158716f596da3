"""The L0 policy engine: operators, rule order, paths that try to escape, limits and loops."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from foundry.agent.models import (
    PolicyCondition,
    PolicyConfig,
    PolicyMatch,
    PolicyRule,
    RateLimit,
)
from foundry.supervision.policy import PolicyEngine, path_within


class FakeClock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder with an escaping symlink, a sibling `proj-evil` and a home outside."""
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    (tmp_path / "proj-evil").mkdir()
    (root / "escape").symlink_to(outside, target_is_directory=True)
    (root / "src-link").symlink_to(root / "src", target_is_directory=True)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return root


def condition(param: str, op: str, value: Any) -> PolicyCondition:
    return PolicyCondition.model_validate({"param": param, "op": op, "value": value})


def allow_when(
    project: Path,
    every: list[PolicyCondition] | None = None,
    some: list[PolicyCondition] | None = None,
) -> PolicyEngine:
    """An engine with one rule that allows any tool when its conditions hold; else no match."""
    when = PolicyMatch(all=every or [], any=some or [])
    rule = PolicyRule(name="only", tool="*", when=when, action="allow")
    return PolicyEngine(PolicyConfig(rules=[rule], loop_detection=False), project)


def allow_all(
    project: Path, clock: FakeClock, limits: list[RateLimit] | None = None, loops: bool = True
) -> PolicyEngine:
    rule = PolicyRule(name="everything", tool="*", action="allow")
    config = PolicyConfig(rules=[rule], rate_limits=limits or [], loop_detection=loops)
    return PolicyEngine(config, project, clock=clock)


# --- operators -------------------------------------------------------------------------------

OPERATOR_CASES = [
    ("==", 5, 5, True),
    ("==", 5, 6, False),
    ("==", 5, 5.0, True),
    ("==", "5", 5, False),
    ("==", True, 1, False),
    ("==", "main", "main", True),
    ("==", None, None, True),
    ("!=", 5, 6, True),
    ("!=", 5, 5, False),
    ("!=", "5", 5, True),
    ("!=", "x", None, True),
    ("<", 1, 2, True),
    ("<", 2, 1, False),
    ("<", 2, 2, False),
    ("<", 1.5, 2, True),
    ("<", "1", 2, False),
    ("<", None, 2, False),
    ("<", True, 2, False),
    ("<", "a", "b", True),
    ("<=", 2, 2, True),
    ("<=", 3, 2, False),
    ("<=", [1], 2, False),
    (">", 3, 2, True),
    (">", 2, 3, False),
    (">", "3", 2, False),
    (">", {"n": 3}, 2, False),
    (">=", 2, 2, True),
    (">=", 1, 2, False),
    (">=", 2, None, False),
    ("in", "a", ["a", "b"], True),
    ("in", "c", ["a", "b"], False),
    ("in", 1, [1.0, 2], True),
    ("in", 1, [True], False),
    ("in", "a", "abc", False),
    ("in", "a", None, False),
    ("contains", "hello world", "world", True),
    ("contains", "hello world", "moon", False),
    ("contains", ["a", "b"], "a", True),
    ("contains", ["a", "b"], "c", False),
    ("contains", "abc", 1, False),
    ("contains", 123, 2, False),
    ("contains", {"a": 1}, "a", False),
    ("starts_with", "src/main.py", "src/", True),
    ("starts_with", "lib/main.py", "src/", False),
    ("starts_with", 55, "5", False),
    ("starts_with", "abc", None, False),
    ("within", "src/a.py", ".", True),
    ("within", "../a.py", ".", False),
    ("within", 5, ".", False),
    ("within", "src/a.py", 5, False),
    ("within", ["src", "src/a.py"], ".", True),
    ("within", ["src", "/etc"], ".", False),
    ("within", [], ".", False),
    ("within", ["src", 5], ".", False),
]


@pytest.mark.parametrize(("op", "actual", "expected", "holds"), OPERATOR_CASES)
def test_operator_compares_the_param_with_the_value(
    project: Path, op: str, actual: Any, expected: Any, holds: bool
) -> None:
    engine = allow_when(project, [condition("p", op, expected)])
    decision = engine.decide("agent", "tool.x", {"p": actual})
    assert decision.action == ("allow" if holds else "deny")


@pytest.mark.parametrize(
    ("op", "value"),
    [
        ("==", None),
        ("!=", "x"),
        ("<", 1),
        ("<=", 1),
        (">", 1),
        (">=", 1),
        ("in", [None]),
        ("contains", "x"),
        ("starts_with", ""),
        ("within", "."),
    ],
)
def test_a_missing_param_makes_any_condition_false(project: Path, op: str, value: Any) -> None:
    engine = allow_when(project, [condition("p", op, value)])
    decision = engine.decide("agent", "tool.x", {"other": 1})
    assert decision.action == "deny"
    assert decision.rule is None


@pytest.mark.parametrize(
    ("params", "holds"),
    [
        ({"options": {"recursive": True}}, True),
        ({"options": {"recursive": False}}, False),
        ({"options": {"depth": 3}}, False),
        ({"options": "recursive"}, False),
        ({"options": None}, False),
        ({"options.recursive": True}, False),
        ({}, False),
    ],
)
def test_a_dotted_param_reaches_into_nested_params(
    project: Path, params: dict[str, Any], holds: bool
) -> None:
    engine = allow_when(project, [condition("options.recursive", "==", True)])
    assert engine.decide("agent", "tool.x", params).action == ("allow" if holds else "deny")


def test_deeply_nested_params_compare_numerically(project: Path) -> None:
    engine = allow_when(project, [condition("a.b.c", "<=", 10)])
    assert engine.decide("agent", "tool.x", {"a": {"b": {"c": 9.5}}}).action == "allow"
    assert engine.decide("agent", "tool.x", {"a": {"b": {"c": 11}}}).action == "deny"


# --- all / any -------------------------------------------------------------------------------

A_IS_1 = condition("a", "==", 1)
B_IS_2 = condition("b", "==", 2)
C_IS_3 = condition("c", "==", 3)


@pytest.mark.parametrize(
    ("every", "some", "params", "holds"),
    [
        ([A_IS_1, B_IS_2], [], {"a": 1, "b": 2}, True),
        ([A_IS_1, B_IS_2], [], {"a": 1, "b": 3}, False),
        ([A_IS_1, B_IS_2], [], {"a": 1}, False),
        ([], [A_IS_1, B_IS_2], {"a": 0, "b": 2}, True),
        ([], [A_IS_1, B_IS_2], {"a": 1}, True),
        ([], [A_IS_1, B_IS_2], {"a": 0, "b": 0}, False),
        ([], [A_IS_1, B_IS_2], {}, False),
        ([A_IS_1], [B_IS_2, C_IS_3], {"a": 1, "c": 3}, True),
        ([A_IS_1], [B_IS_2, C_IS_3], {"a": 1}, False),
        ([A_IS_1], [B_IS_2, C_IS_3], {"a": 0, "b": 2}, False),
        ([], [], {}, True),
        ([], [], {"anything": "at all"}, True),
    ],
)
def test_all_needs_every_condition_and_any_needs_one(
    project: Path,
    every: list[PolicyCondition],
    some: list[PolicyCondition],
    params: dict[str, Any],
    holds: bool,
) -> None:
    engine = allow_when(project, every, some)
    assert engine.decide("agent", "tool.x", params).action == ("allow" if holds else "deny")


def test_a_rule_without_when_matches_every_call_of_its_tool(project: Path) -> None:
    rule = PolicyRule(name="reads", tool="files.read_*", action="allow")
    engine = PolicyEngine(PolicyConfig(rules=[rule]), project)
    assert engine.decide("agent", "files.read_file", {"path": "/etc/passwd"}).action == "allow"
    assert engine.decide("agent", "files.write_file", {}).action == "deny"


# --- order, default and globs ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "action", "rule"),
    [
        ("files.delete_file", "deny", "no-file-tools"),
        ("files.read_file", "deny", "no-file-tools"),
        ("time.get_current_time", "allow", "time-is-fine"),
        ("web.fetch", "human", "the-rest"),
    ],
)
def test_the_first_matching_rule_wins(project: Path, tool: str, action: str, rule: str) -> None:
    rules = [
        PolicyRule(name="no-file-tools", tool="files.*", action="deny"),
        PolicyRule(name="time-is-fine", tool="time.*", action="allow"),
        PolicyRule(name="files-read", tool="files.read*", action="allow"),
        PolicyRule(name="the-rest", tool="*", action="human"),
    ]
    decision = PolicyEngine(PolicyConfig(rules=rules), project).decide("agent", tool, {})
    assert (decision.action, decision.rule) == (action, rule)


def test_a_later_rule_decides_when_an_earlier_ones_condition_fails(project: Path) -> None:
    inside = PolicyMatch(all=[condition("path", "within", ".")])
    rules = [
        PolicyRule(name="write-inside", tool="*.write*", when=inside, action="supervisor"),
        PolicyRule(name="write-anywhere", tool="*.write*", action="human"),
    ]
    engine = PolicyEngine(PolicyConfig(rules=rules), project)
    assert engine.decide("a", "files.write_file", {"path": "x"}).rule == "write-inside"
    assert engine.decide("a", "files.write_file", {"path": "/x"}).rule == "write-anywhere"


@pytest.mark.parametrize("rules", [[], [PolicyRule(name="time", tool="time.*", action="allow")]])
def test_no_matching_rule_denies(project: Path, rules: list[PolicyRule]) -> None:
    decision = PolicyEngine(PolicyConfig(rules=rules), project).decide("agent", "files.read", {})
    assert decision.action == "deny"
    assert decision.rule is None
    assert decision.reason == "no rule matched: denied by default"


def inside_or_ask(project: Path, then: str = "human") -> PolicyEngine:
    """Reads inside the project are allowed; any other read goes to `then`."""
    inside = PolicyMatch(all=[condition("path", "within", ".")])
    rules = [
        PolicyRule(name="read-inside", tool="*.read*", when=inside, action="allow"),
        PolicyRule(name="read-elsewhere", tool="*.read*", action=then),
    ]
    return PolicyEngine(PolicyConfig(rules=rules, loop_detection=False), project)


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("/etc/passwd", "path '/etc/passwd' resolves to /etc/passwd"),
        ("escape/secret.txt", "path 'escape/secret.txt' resolves to {outside}/secret.txt"),
        ("src/a\x00b", "path 'src/a\\x00b' cannot be judged: it holds a NUL"),
        ("/etc/password=hunter2", "path '/etc/password=[secret]' resolves to"),
    ],
)
@pytest.mark.parametrize("then", ["human", "deny"])
def test_a_call_an_allow_rule_kept_out_says_where_its_path_leads(
    project: Path, path: str, why: str, then: str
) -> None:
    """A person asked (or the client's model denied) learns why the rule that allows reads
    inside did not: a link that leads out, a path that cannot be judged (a password in the
    path stays masked)."""
    decision = inside_or_ask(project, then).decide("a", "files.read", {"path": path})
    assert (decision.action, decision.rule) == (then, "read-elsewhere")
    outside = project.parent / "outside"
    assert f"; rule read-inside does not allow it: {why.format(outside=outside)}" in decision.reason
    assert "hunter2" not in decision.reason


def test_a_call_no_rule_matches_says_why_the_allow_rule_did_not(project: Path) -> None:
    inside = PolicyMatch(all=[condition("path", "within", ".")])
    rule = PolicyRule(name="read-inside", tool="*", when=inside, action="allow")
    engine = PolicyEngine(PolicyConfig(rules=[rule], loop_detection=False), project)
    decision = engine.decide("a", "files.read", {"path": "../proj-evil/x"})
    assert (decision.action, decision.rule) == ("deny", None)
    assert decision.reason == (
        "no rule matched: denied by default; rule read-inside does not allow it: "
        f"path '../proj-evil/x' resolves to {project.parent / 'proj-evil' / 'x'}"
    )


def test_nothing_is_added_when_the_allow_rule_failed_on_something_else(project: Path) -> None:
    inside_and_small = PolicyMatch(
        all=[condition("path", "within", "."), condition("size", "<", 10)]
    )
    rules = [
        PolicyRule(name="small-inside", tool="*", when=inside_and_small, action="allow"),
        PolicyRule(name="ask", tool="*", action="human"),
    ]
    engine = PolicyEngine(PolicyConfig(rules=rules, loop_detection=False), project)
    decision = engine.decide("a", "files.write", {"path": "src/a.py", "size": 99})
    assert decision.rule == "ask"
    assert "does not allow it" not in decision.reason
    allowed = inside_or_ask(project).decide("a", "files.read", {"path": "src/a.py"})
    assert allowed.action == "allow"
    assert "does not allow it" not in allowed.reason


@pytest.mark.parametrize(
    ("agent_glob", "agent_id", "matches"),
    [
        ("*", "anyone", True),
        ("worker-*", "worker-1", True),
        ("worker-*", "boss", False),
        ("worker-*", "Worker-1", False),
        ("worker-?", "worker-12", False),
        ("[ab]ob", "bob", True),
        ("[ab]ob", "rob", False),
        ("[!b]ob", "rob", True),
        ("claude", "claude", True),
        ("claude", "claude-2", False),
    ],
)
def test_the_agent_glob_selects_which_agents_a_rule_covers(
    project: Path, agent_glob: str, agent_id: str, matches: bool
) -> None:
    rule = PolicyRule(name="some-agents", agent=agent_glob, tool="*", action="allow")
    decision = PolicyEngine(PolicyConfig(rules=[rule]), project).decide(agent_id, "t.x", {})
    assert decision.action == ("allow" if matches else "deny")


@pytest.mark.parametrize(
    ("tool_glob", "tool", "matches"),
    [
        ("files.*", "files.read_file", True),
        ("files.*", "filesystem.read_file", False),
        ("*.delete*", "files.delete_file", True),
        ("*.delete*", "files.undelete", False),
        ("files.read?", "files.reads", True),
        ("files.read?", "files.read", False),
        ("files.*", "FILES.read", False),
        ("files.read_file", "files.read_file", True),
    ],
)
def test_the_tool_glob_matches_case_sensitively(
    project: Path, tool_glob: str, tool: str, matches: bool
) -> None:
    rule = PolicyRule(name="some-tools", tool=tool_glob, action="allow")
    decision = PolicyEngine(PolicyConfig(rules=[rule]), project).decide("agent", tool, {})
    assert decision.action == ("allow" if matches else "deny")


def test_the_reason_names_the_rule_the_globs_and_the_conditions_that_held(project: Path) -> None:
    when = PolicyMatch(
        all=[condition("path", "within", "./workspace")],
        any=[condition("mode", "==", "a"), condition("size", "<", 100)],
    )
    rule = PolicyRule(name="small", agent="w*", tool="*.write*", when=when, action="supervisor")
    engine = PolicyEngine(PolicyConfig(rules=[rule]), project)
    decision = engine.decide("worker", "files.write_file", {"path": "workspace/a", "size": 5})
    assert decision.reason == (
        "rule small matched: tool files.write_file matches '*.write*', agent worker matches 'w*', "
        "path within './workspace', size < 100"
    )


# --- paths -----------------------------------------------------------------------------------


WITHIN_CASES = [
    (".", ".", True),
    ("", ".", True),
    ("src", ".", True),
    ("src/deep/nested/new_file.py", ".", True),
    ("./src/../README.md", ".", True),
    ("a/../b", ".", True),
    ("src/../../proj/x", ".", True),
    ("{tmp}/proj/x", ".", True),
    ("{tmp}/proj", ".", True),
    ("src-link/x", ".", True),
    ("src-link/x", "src", True),
    ("escape/../proj/x", ".", False),  # `..` after a symlink: the kernel and the text disagree
    ("../x", ".", False),
    ("a/../../x", ".", False),
    ("src/../../../x", ".", False),
    ("..", ".", False),
    ("/", ".", False),
    ("/etc/passwd", ".", False),
    ("{tmp}/outside/secret.txt", ".", False),
    ("{tmp}/proj-evil/x", ".", False),
    ("{tmp}/proj-evil", ".", False),
    ("../proj-evil/x", ".", False),
    ("~", ".", False),
    ("~/x", ".", False),
    ("escape", ".", False),
    ("escape/secret.txt", ".", False),
    ("escape/new_file", ".", False),
    ("src/x\x00", ".", False),
    ("workspace/a.md", "./workspace", True),
    ("workspace", "workspace", True),
    ("workspace/../a.md", "./workspace", False),
    ("workspace-evil/a.md", "./workspace", False),
    ("src/a.md", "./workspace", False),
    ("x", "{tmp}/outside", False),
    ("{tmp}/outside/x", "{tmp}/outside", True),
]


@pytest.mark.parametrize(("path", "container", "inside"), WITHIN_CASES)
def test_within_keeps_paths_inside_the_value_path(
    project: Path, path: str, container: str, inside: bool
) -> None:
    """`{tmp}` stands for the folder that holds the project (`proj`), `outside` and `proj-evil`."""
    path = path.format(tmp=project.parent)
    container = container.format(tmp=project.parent)
    engine = allow_when(project, [condition("path", "within", container)])
    decision = engine.decide("agent", "files.read_file", {"path": path})
    assert decision.action == ("allow" if inside else "deny")
    assert path_within(path, container, project) is inside


def test_within_resolves_relative_paths_against_the_project_not_the_working_folder(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path / "outside")
    engine = allow_when(project, [condition("path", "within", ".")])
    assert engine.decide("agent", "files.read_file", {"path": "secret.txt"}).action == "allow"
    assert not path_within(str(Path.cwd() / "secret.txt"), ".", project)


def test_within_follows_a_symlink_that_appears_after_the_engine_was_built(project: Path) -> None:
    engine = allow_when(project, [condition("path", "within", ".")])
    assert engine.decide("agent", "files.read_file", {"path": "later/x"}).action == "allow"
    (project / "later").symlink_to(project.parent / "outside", target_is_directory=True)
    assert engine.decide("agent", "files.read_file", {"path": "later/x"}).action == "deny"


def test_a_tilde_path_is_home_even_when_home_is_inside_the_project(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(project / "home"))
    assert path_within("~/notes.md", ".", project)
    assert not path_within("~/notes.md", "src", project)


# --- rate limits -----------------------------------------------------------------------------


def test_a_rate_limit_denies_the_call_that_exceeds_it(project: Path) -> None:
    clock = FakeClock()
    engine = allow_all(project, clock, [RateLimit(tool="time.*", max_calls=3, per_seconds=60)])
    actions = []
    for second in range(4):
        clock.now = float(second)
        actions.append(engine.decide("agent", "time.now", {"n": second}))
    assert [d.action for d in actions] == ["allow", "allow", "allow", "deny"]
    assert actions[-1].rule is None
    assert actions[-1].reason == "rate limit: 4 calls of time.* in 60 s (limit 3)"


def test_a_rate_limit_counts_per_agent_and_only_its_tools(project: Path) -> None:
    clock = FakeClock()
    engine = allow_all(project, clock, [RateLimit(tool="time.*", max_calls=1, per_seconds=60)])
    assert engine.decide("a", "time.now", {}).action == "allow"
    assert engine.decide("b", "time.now", {}).action == "allow"
    assert engine.decide("a", "files.read", {}).action == "allow"
    assert engine.decide("a", "time.later", {}).action == "deny"


@pytest.mark.parametrize(
    ("times", "last_action"),
    [
        ([0.0, 5.0, 9.9], "deny"),
        ([0.0, 5.0, 10.0], "allow"),
        ([0.0, 5.0, 15.1], "allow"),
        ([0.0, 9.0, 9.5], "deny"),
        ([0.0, 9.0, 10.01], "allow"),
    ],
)
def test_the_rate_window_slides(project: Path, times: list[float], last_action: str) -> None:
    clock = FakeClock()
    engine = allow_all(project, clock, [RateLimit(tool="*", max_calls=2, per_seconds=10)])
    decisions = []
    for index, moment in enumerate(times):
        clock.now = moment
        decisions.append(engine.decide("agent", "t.x", {"n": index}).action)
    assert decisions == ["allow", "allow", last_action]


def test_calls_denied_by_a_rate_limit_still_count(project: Path) -> None:
    clock = FakeClock()
    engine = allow_all(project, clock, [RateLimit(tool="*", max_calls=2, per_seconds=10)])
    for moment, expected in [
        (0, "allow"),
        (1, "allow"),
        (2, "deny"),
        (10.5, "deny"),
        (12.5, "allow"),
    ]:
        clock.now = moment
        assert engine.decide("agent", "t.x", {"at": moment}).action == expected, moment


def test_rate_limits_are_checked_before_the_rules(project: Path) -> None:
    clock = FakeClock()
    rule = PolicyRule(name="ask", tool="*", action="human")
    limit = RateLimit(tool="*", max_calls=1, per_seconds=1)
    engine = PolicyEngine(PolicyConfig(rules=[rule], rate_limits=[limit]), project, clock=clock)
    assert engine.decide("agent", "t.x", {}).action == "human"
    assert engine.decide("agent", "t.y", {}).action == "deny"


def test_the_first_exceeded_limit_is_reported(project: Path) -> None:
    clock = FakeClock()
    limits = [
        RateLimit(tool="*", max_calls=10, per_seconds=60),
        RateLimit(tool="time.*", max_calls=1, per_seconds=0.5),
    ]
    engine = allow_all(project, clock, limits)
    engine.decide("agent", "time.now", {})
    assert engine.decide("agent", "time.now", {"again": True}).reason == (
        "rate limit: 2 calls of time.* in 0.5 s (limit 1)"
    )


# --- loops -----------------------------------------------------------------------------------


def test_the_third_identical_call_within_ten_seconds_is_a_loop(project: Path) -> None:
    clock = FakeClock()
    engine = allow_all(project, clock)
    decisions = []
    for moment in (0.0, 4.0, 9.0):
        clock.now = moment
        decisions.append(engine.decide("agent", "files.read", {"path": "a", "n": 1}))
    assert [d.action for d in decisions] == ["allow", "allow", "deny"]
    assert decisions[-1].reason == "loop: the same call 3 times in 10 s"
    assert decisions[-1].rule is None


@pytest.mark.parametrize(
    ("calls", "last_action"),
    [
        ([("a", "t.x", {"p": 1, "q": 2}), ("a", "t.x", {"q": 2, "p": 1})], "deny"),
        ([("a", "t.x", {"p": 1}), ("a", "t.x", {"p": 2})], "allow"),
        ([("a", "t.x", {"p": 1}), ("b", "t.x", {"p": 1})], "allow"),
        ([("a", "t.x", {"p": 1}), ("a", "t.y", {"p": 1})], "allow"),
        ([("a", "t.x", {"p": {"n": [1]}}), ("a", "t.x", {"p": {"n": [1]}})], "deny"),
    ],
)
def test_a_loop_is_the_same_agent_tool_and_params(
    project: Path, calls: list[tuple[str, str, dict[str, Any]]], last_action: str
) -> None:
    engine = allow_all(project, FakeClock())
    first, second = calls
    engine.decide(*first)
    engine.decide(*first)
    assert engine.decide(*second).action == last_action


@pytest.mark.parametrize(
    ("times", "last_action"),
    [
        ([0.0, 5.0, 9.99], "deny"),
        ([0.0, 5.0, 10.0], "allow"),
        ([0.0, 5.0, 10.5], "allow"),
        ([0.0, 6.0, 12.0, 15.9], "deny"),
    ],
)
def test_the_loop_window_slides(project: Path, times: list[float], last_action: str) -> None:
    clock = FakeClock()
    engine = allow_all(project, clock)
    actions = []
    for moment in times:
        clock.now = moment
        actions.append(engine.decide("agent", "t.x", {}).action)
    assert actions[-1] == last_action


def test_loop_detection_can_be_turned_off(project: Path) -> None:
    engine = allow_all(project, FakeClock(), loops=False)
    assert {engine.decide("agent", "t.x", {}).action for _ in range(5)} == {"allow"}


def test_params_that_are_not_json_do_not_break_the_engine(project: Path) -> None:
    engine = allow_all(project, FakeClock())
    odd = {"when": object(), 1: "int key", "set": {1, 2}}
    assert engine.decide("agent", "t.x", odd).action == "allow"


def test_decisions_are_frozen_values(project: Path) -> None:
    decision = PolicyEngine(PolicyConfig(), project).decide("agent", "t.x", {})
    with pytest.raises(ValueError):
        decision.action = "allow"  # type: ignore[misc]


def test_decisions_stay_right_when_the_engine_forgets_remembered_pairs(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("foundry.supervision.policy.COVERING_CACHE_SIZE", 3)
    rules = [
        PolicyRule(name="workers-read", agent="worker-*", tool="files.read*", action="allow"),
        PolicyRule(name="the-rest", tool="*", action="human"),
    ]
    engine = PolicyEngine(PolicyConfig(rules=rules, loop_detection=False), project)
    for number in range(10):
        assert engine.decide(f"worker-{number}", "files.read", {}).rule == "workers-read"
        assert engine.decide(f"boss-{number}", "files.read", {}).rule == "the-rest"
        assert engine.decide(f"worker-{number}", "files.write", {}).rule == "the-rest"
