"""The complexity gate, plan parsing, smart retry and task-aware context: pure functions."""

from __future__ import annotations

import pytest

from foundry.orchestration import prompts
from foundry.orchestration.plan import Plan, ReplyNotUnderstood, classify, parse_reply
from foundry.orchestration.retry import Attempt, RetryRules, decide
from foundry.orchestration.taskfile import TaskSpec

RULES = RetryRules(
    max_iterations=5, rescue_after=3, repeated_error_limit=2, strict=False, can_rescue=True
)


def spec(goal: str, criteria: list, **fields: object) -> TaskSpec:  # type: ignore[type-arg]
    return TaskSpec.model_validate(
        {"name": "t", "goal": goal, "criteria": criteria, "operators": ["a"], **fields}
    )


@pytest.mark.parametrize(
    ("goal", "criteria", "expected"),
    [
        (
            "What time is it in Tokyo?",
            [{"text": "answer", "checks": [{"reply": ["Tokyo"]}]}],
            "trivial",
        ),
        ("Add greet to greetings.py", ["greet exists"], "simple"),
        ("Add greet and then document it", ["greet exists"], "moderate"),
        ("Write greet", ["greet exists", "it is tested"], "moderate"),
        ("Refactor the parser into modules", ["parser works"], "complex"),
        ("Write greet", ["a", "b", "c", "d"], "complex"),
    ],
)
def test_the_gate_routes_by_rules(goal: str, criteria: list, expected: str) -> None:  # type: ignore[type-arg]
    assert classify(spec(goal, criteria)) == expected


def test_a_plan_is_read_from_the_first_json_object_of_a_reply() -> None:
    plan = '{"understanding": "u", "complexity": 2, "confidence": 0.5, "operator_prompt": "p"}'
    text = f"Here is my plan: {plan} ok"
    assert parse_reply(text, Plan).operator_prompt == "p"
    with pytest.raises(ReplyNotUnderstood, match="no JSON object"):
        parse_reply("I would start by reading the files.", Plan)
    with pytest.raises(ReplyNotUnderstood, match="complexity"):
        parse_reply(
            '{"understanding": "u", "complexity": 9, "confidence": 0.5, "operator_prompt": "p"}',
            Plan,
        )


def test_smart_retry() -> None:
    near = Attempt("c: missing Hello", 60.0)
    other = Attempt("c: missing World", 55.0)
    assert decide([near], 1, RULES).approach == "fix"
    assert decide([other, near], 2, RULES).approach == "fix"
    assert decide([near, near], 2, RULES).approach == "change_approach"
    assert decide([near, near, near], 3, RULES).approach == "rescue"
    hopeless = [Attempt("error: x", 0.0), Attempt("error: y", 0.0)]
    assert decide(hopeless, 2, RULES).approach == "rescue"
    alone = RetryRules(5, 3, 2, strict=False, can_rescue=False)
    assert (decide(hopeless, 2, alone).retry, decide(hopeless, 2, alone).approach) == (
        False,
        "give_up",
    )
    strict = RetryRules(5, 3, 2, strict=True, can_rescue=True)
    assert decide([near], 1, strict).approach == "strict"
    assert decide([near] * 5, 1, RULES).approach == "give_up"


def test_task_aware_context_passes_on_only_what_the_task_refers_to() -> None:
    project = {
        "goal": "A shapes library",
        "completed": [{"id": f"t{n}", "summary": f"task {n}"} for n in range(8)],
        "queue": ["docs", "release", "tests", "bench"],
    }
    alone = spec("Add Circle.area", ["area works"], project=project)
    assert prompts.task_context(alone, "ws") == {"workspace": "ws"}
    full = prompts.task_context(alone, "ws", aware=False)
    assert len(full["completed"]) == 8 and full["goal"] == "A shapes library"
    extends = spec(
        "Extend the previous implementation with Square", ["square works"], project=project
    )
    context = prompts.task_context(extends, "ws")
    assert [t["id"] for t in context["completed"]] == ["t3", "t4", "t5", "t6", "t7"]
    assert "queue" not in context and "goal" not in context


def test_the_task_type_picks_the_guidance() -> None:
    assert prompts.task_type(spec("Write tests for parse", ["x"])) == "testing"
    assert prompts.task_type(spec("Update the README", ["x"])) == "documentation"
    assert prompts.task_type(spec("Refactor parse", ["x"])) == "refactoring"
    assert prompts.task_type(spec("Set the config for CI", ["x"])) == "configuration"
    assert prompts.task_type(spec("Add parse", ["x"])) == "implementation"
    documented = prompts.operator_prompt(spec("Update the README", ["x"]), {"workspace": "ws"})
    assert prompts.GUIDANCE["documentation"] in documented and "STATUS: done" in documented


def test_a_plan_shortens_the_timeouts_but_never_raises_them() -> None:
    from foundry.orchestration.runner import step_timeouts

    assert step_timeouts([5, 10, 30], 30) == [5, 10, 30]
    assert step_timeouts([5, 10, 30], 12) == [5, 10, 12]
    assert step_timeouts([5, 10, 30], 1) == [5, 5, 5]
    assert step_timeouts([5, 10, 30], 600) == [5, 10, 30]
