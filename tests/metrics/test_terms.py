"""The terms the figures of questions and of shadow verdicts are counted in."""

from __future__ import annotations

import pytest

from foundry.metrics.terms import question_outcome, shadow_agreement


@pytest.mark.parametrize(
    ("status", "edited", "flagged", "outcome"),
    [
        ("approved", False, False, "unchanged"),
        ("approved", True, False, "edited"),
        ("approved", False, True, "flagged"),  # a flagged question was never needless
        ("denied", False, False, "denied"),
        ("timed_out", False, True, "timed_out"),
    ],
)
def test_a_question_is_needless_only_when_approved_as_asked_and_unflagged(
    status: str, edited: bool, flagged: bool, outcome: str
) -> None:
    assert question_outcome(status, edited, flagged) == outcome


@pytest.mark.parametrize(
    ("shadow", "status", "edited", "agreement"),
    [
        ("approve", "approved", False, "agreed"),
        ("approve", "denied", False, "let_through"),
        ("approve", "approved", True, "let_through"),  # the call as asked did not run
        ("deny", "denied", False, "agreed"),
        ("deny", "approved", False, "denied_approved"),
        ("escalate", "approved", False, "escalated_approved"),
        ("escalate", "denied", False, "escalated_denied"),
        ("approve", "timed_out", False, None),
    ],
)
def test_a_shadow_verdict_is_compared_with_the_person_s_decision(
    shadow: str, status: str, edited: bool, agreement: str | None
) -> None:
    assert shadow_agreement(shadow, status, edited) == agreement
