"""agent7's supervisor, unchanged, against `foundry serve`, as bench/agent7.py runs it: its
decisions are recorded as `supervisor:NAME`, traced at the supervisor level with its confidence
and counted at L1 by `foundry metrics export` and the dashboards' figures; what it escalates
waits for a person, whose decision counts as a person's.

agent7 is not part of Foundry: these run where AGENT7_DIR names a checkout of it and
AGENT7_PYTHON a Python with its supervisor's packages (see bench/agent7.py), and are skipped
elsewhere."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bench.agent7 import (
    DENY_CONFIDENCE,
    HOW_TO_GET,
    RESOLVER,
    problem_with,
    problems,
    run_bench,
)

AGENT7 = Path(os.environ["AGENT7_DIR"]) if os.environ.get("AGENT7_DIR") else None
PYTHON = os.environ.get("AGENT7_PYTHON")
PROBLEM = problem_with(AGENT7, PYTHON)

pytestmark = pytest.mark.skipif(
    PROBLEM is not None, reason=f"agent7 is not here: {PROBLEM}. {HOW_TO_GET}"
)


async def test_agent7s_decisions_are_a_supervisors_and_counted_at_l1(tmp_path: Path) -> None:
    assert AGENT7 is not None and PYTHON is not None

    outcome = await run_bench(AGENT7, PYTHON, tmp_path, writes=2)

    assert problems(outcome) == []
    by_agent7 = [d for d in outcome.decided if d.approval.resolved_by == RESOLVER]
    assert len(by_agent7) == 3  # two writes approved, the one under /etc denied
    denied = [d for d in by_agent7 if d.approval.status == "denied"]
    assert [d.trace.confidence for d in denied if d.trace] == [DENY_CONFIDENCE]
    assert outcome.figures["supervisor/allowed"] == 2
    assert outcome.figures["supervisor/denied"] == 1
    assert outcome.figures["human/denied"] == 1  # what agent7 escalated, a person denied
    assert outcome.exported["supervisor"] == 3
    assert not (tmp_path / "elsewhere" / "handover.md").exists()
    assert sorted(p.name for p in (tmp_path / "project" / "notes").iterdir()) == [
        "plan-1.md",
        "plan-2.md",
    ]
