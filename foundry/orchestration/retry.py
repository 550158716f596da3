"""Smart retry: whether another attempt is worth it, and with which approach."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

Approach = Literal["fix", "change_approach", "strict", "rescue", "give_up"]


@dataclass(frozen=True)
class Attempt:
    """What one iteration left behind: what failed and how close it came."""

    signature: str  # the failing criteria and their missing evidence, or the operator's error
    best_score: float  # the highest score among the criteria that failed (0 for an error)


@dataclass(frozen=True)
class RetryChoice:
    retry: bool
    approach: Approach
    reason: str


@dataclass(frozen=True)
class RetryRules:
    max_iterations: int
    rescue_after: int
    repeated_error_limit: int
    strict: bool
    can_rescue: bool


def decide(attempts: Sequence[Attempt], failures_in_row: int, rules: RetryRules) -> RetryChoice:
    """After a failed iteration (the last of `attempts`), choose what happens next."""
    if len(attempts) >= rules.max_iterations:
        return RetryChoice(
            False, "give_up", f"the limit of {rules.max_iterations} iterations is reached"
        )
    last = attempts[-1]
    repeats = _trailing_repeats(attempts)
    hopeless = len(attempts) >= 2 and all(a.best_score == 0 for a in attempts[-2:])
    if failures_in_row >= rules.rescue_after and rules.can_rescue:
        return RetryChoice(True, "rescue", f"{failures_in_row} failed iterations in a row")
    if hopeless:
        if rules.can_rescue:
            return RetryChoice(
                True,
                "rescue",
                "no evidence at all in two attempts: retrying the same way is hopeless",
            )
        return RetryChoice(
            False, "give_up", "no evidence at all in two attempts and no one to rescue the task"
        )
    if repeats >= rules.repeated_error_limit:
        return RetryChoice(
            True, "change_approach", f"the same failure {repeats} times: {last.signature[:120]}"
        )
    if rules.strict or repeats >= 2:
        return RetryChoice(True, "strict", "strict mode: only what the failing criteria need")
    return RetryChoice(True, "fix", f"criteria still failing (best score {last.best_score:.0f})")


def _trailing_repeats(attempts: Sequence[Attempt]) -> int:
    count = 0
    for attempt in reversed(attempts):
        if attempt.signature != attempts[-1].signature:
            break
        count += 1
    return count
