"""Answers that only echo the sample task or repeat one sentence fail; real answers pass."""

from __future__ import annotations

from pathlib import Path

import pytest

from foundry.orchestration.taskfile import Check, Criterion, Thresholds
from foundry.orchestration.validation import (
    Checker,
    CriterionScore,
    ValidationCache,
    degeneracy,
    read_answer,
    validate,
)

GOAL = "Say which city is the capital of France and which river flows through it."
CRITERIA = [
    Criterion(text="the answer names Paris", checks=[Check(reply=["Paris"])]),
    Criterion(text="the answer names the Seine", checks=[Check(reply=["Seine"])]),
]
CRITERIA_ONLY = """I have checked the acceptance criteria:
- the answer names Paris
- the answer names the Seine
Both criteria are met.
STATUS: done"""
REPEATED = "Paris is the capital of France and the Seine flows through it. " * 15 + "\nSTATUS: done"
GOOD = """Paris is the capital of France, and the Seine flows through it.
STATUS: done"""
QUOTES_THEN_ANSWERS = """"The answer names Paris": the capital of France is Paris.
The answer names the Seine: the river that flows through Paris is the Seine.
STATUS: done"""
RESTATES_GOAL_THEN_ANSWERS = """Which city is the capital of France, which river flows through it?
The capital is Paris; the Seine runs through the city from east to west.
STATUS: done"""


async def scores_of(reply: str, tmp_path: Path) -> list[CriterionScore]:
    return await validate(
        CRITERIA, Checker(tmp_path), reply, Thresholds(), ValidationCache(), goal=GOAL
    )


async def test_an_answer_that_only_restates_the_criteria_fails(tmp_path: Path) -> None:
    scores = await scores_of(CRITERIA_ONLY, tmp_path)
    assert [s.level for s in scores] == ["fail", "fail"]


async def test_one_sentence_repeated_fails_and_says_so(tmp_path: Path) -> None:
    scores = await scores_of(REPEATED, tmp_path)
    assert [s.level for s in scores] == ["fail", "fail"]
    assert "the answer repeats one sentence 15 times" in scores[0].failed_details[0]
    assert scores[0].factors["claim"] == 0.0


@pytest.mark.parametrize("reply", [GOOD, QUOTES_THEN_ANSWERS, RESTATES_GOAL_THEN_ANSWERS])
async def test_a_real_answer_to_the_sample_task_passes(reply: str, tmp_path: Path) -> None:
    scores = await scores_of(reply, tmp_path)
    assert [s.level for s in scores] == ["pass", "pass"]


def test_a_criterion_echo_is_not_the_answers_own_words() -> None:
    answer = read_answer(CRITERIA_ONLY, GOAL, [c.text for c in CRITERIA])
    assert "Paris" not in answer.text
    assert answer.degenerate is None


def test_the_criteria_restated_together_are_still_an_echo() -> None:
    answer = read_answer("The answer names Paris and the Seine.", GOAL, [c.text for c in CRITERIA])
    assert answer.text == ""


def test_a_short_answer_is_not_degenerate() -> None:
    assert degeneracy("Paris. The Seine.\nSTATUS: done") is None


def test_an_answer_of_few_distinct_words_is_degenerate() -> None:
    assert degeneracy("Paris Seine " * 30) == "the answer uses only 2 distinct words in 60"


async def test_an_unchanged_answer_is_cached(tmp_path: Path) -> None:
    cache = ValidationCache()
    checker = Checker(tmp_path)
    await validate(CRITERIA, checker, GOOD, Thresholds(), cache, goal=GOAL)
    again = await validate(CRITERIA, checker, GOOD, Thresholds(), cache, goal=GOAL)
    assert all(s.cached for s in again)
