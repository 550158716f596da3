"""Damn Vulnerable MCP Server's challenges through the gateway, as bench/dvmcp.py scripts them:
with nobody answering no exploit reaches the client, poisoning, the rug pull and shadowing each
raise a warning and plain tools raise none, and tokens that come back are masked.

DVMCP is not part of Foundry: these run where DVMCP_DIR names a checkout of it and DVMCP_PYTHON
a Python with mcp<2 (see bench/dvmcp.py), and are skipped elsewhere."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bench.dvmcp import (
    CHALLENGES,
    HOW_TO_GET,
    Challenge,
    Outcome,
    due_warnings,
    problem_with,
    raised,
    run_challenge,
)

DVMCP = Path(os.environ["DVMCP_DIR"]) if os.environ.get("DVMCP_DIR") else None
PYTHON = os.environ.get("DVMCP_PYTHON")
PROBLEM = problem_with(DVMCP, PYTHON)

pytestmark = pytest.mark.skipif(
    PROBLEM is not None, reason=f"DVMCP is not here: {PROBLEM}. {HOW_TO_GET}"
)

DEFINITION_CONCERNS = {"definition-changed", "new-tool", "flagged-description", "shadowing"}
# the challenges whose tools' descriptions hold no instructions and whose names shadow nothing
PLAIN = {1, 3, 6, 7, 8, 9}


async def run(challenge: Challenge, folder: Path, approve: bool = False) -> Outcome:
    assert DVMCP is not None and PYTHON is not None
    return await run_challenge(challenge, DVMCP, PYTHON, approve, folder)


def challenge_labelled(label: str) -> Challenge:
    [challenge] = [challenge for challenge in CHALLENGES if challenge.label == label]
    return challenge


@pytest.mark.parametrize("challenge", CHALLENGES, ids=lambda c: f"challenge{c.label}")
async def test_with_nobody_answering_no_exploit_reaches_the_client(
    challenge: Challenge, tmp_path: Path
) -> None:
    outcome = await run(challenge, tmp_path)
    assert not outcome.reached, f"{sorted(outcome.reached)} reached the client"
    assert set(due_warnings(challenge, outcome)) <= raised(outcome), outcome.warnings
    if challenge.number in PLAIN:
        assert not raised(outcome) & DEFINITION_CONCERNS, outcome.warnings


async def test_tokens_a_person_let_through_reach_the_client_masked(tmp_path: Path) -> None:
    token_theft = challenge_labelled("7")
    outcome = await run(token_theft, tmp_path, approve=True)
    unmasked = outcome.reached & set(token_theft.secrets)  # not what a person let happen
    assert not unmasked, f"{sorted(unmasked)} reached the client unmasked"
    assert outcome.masked >= len(token_theft.secrets), "the tokens did not come back masked"


async def test_after_the_rug_pull_the_client_is_offered_what_was_pinned(tmp_path: Path) -> None:
    """While the changed definition waits for a person, the client keeps the one trusted: the
    poisoned description never reaches its model (tool_definitions.offered). What it is offered
    has not changed, so it need not be told."""
    outcome = await run(challenge_labelled("4"), tmp_path)
    assert not outcome.poisoned_listed, f"{outcome.poisoned_listed} offered as changed"
