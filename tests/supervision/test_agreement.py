"""The agreement report on a known set of questions: counts, percentages, the safest threshold."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from foundry.cli.main import main
from foundry.store import ApprovalRecord, Store
from foundry.supervision.agreement import (
    ALL_TOOLS,
    Agreement,
    agreement_report,
    questions,
    report_lines,
    safest_threshold,
    shadow_cost,
)

L1 = "agent:supervisor"
AGENT7 = "supervisor:agent7"
# (supervisor, tool, decision, confidence, the person's status, edited params)
KNOWN = [
    (L1, "notes.add", "approve", 0.95, "approved", False),  # agreed
    (L1, "notes.add", "approve", 0.85, "denied", False),  # let through
    (L1, "notes.add", "approve", 0.70, "approved", True),  # let through (edited)
    (L1, "notes.add", "deny", 0.90, "denied", False),  # agreed
    (L1, "notes.add", "deny", 0.60, "approved", False),  # denied what was approved
    (L1, "notes.add", "escalate", 0.40, "approved", False),  # escalated what was approved
    (L1, "notes.add", "approve", 0.99, "approved", False),  # agreed
    (L1, "files.write", "escalate", 1.0, "denied", False),  # escalated, then denied
    (L1, "files.write", "approve", 0.99, "timed_out", False),  # no one decided: not counted
    (AGENT7, "files.write", "approve", 1.0, "denied", False),  # let through at 1.0
    (AGENT7, "files.write", "approve", 0.92, "approved", False),  # agreed
]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(f"sqlite:///{tmp_path / 'agreement.sqlite3'}") as opened:
        yield opened


def asked(store: Store, rows: list[tuple[Any, ...]], agent: str = "worker") -> None:
    for supervisor, tool, decision, confidence, status, edited in rows:
        approval = store.approvals.create(
            ApprovalRecord(agent_id=agent, tool=tool, params={"text": "a"}, level="L0")
        )
        verdict = {
            "decision": decision,
            "confidence": confidence,
            "reasoning": "why",
            "supervisor": supervisor,
            "seconds": 1.5 if supervisor == L1 else 0.0,
            "tokens": 120,
        }
        store.approvals.keep_shadow_verdict(approval.id, verdict)
        params = {"text": "b"} if edited else None
        store.approvals.resolve(approval.id, status, "human:ana", params=params)
    store.approvals.create(ApprovalRecord(agent_id=agent, tool="notes.add", params={}))  # none


def row(rows: list[Agreement], supervisor: str, tool: str) -> Agreement:
    [found] = [item for item in rows if (item.supervisor, item.tool) == (supervisor, tool)]
    return found


def test_the_figures_of_a_known_set(store: Store) -> None:
    asked(store, KNOWN)
    rows = agreement_report(questions(store.approvals.list()))

    assert [(item.supervisor, item.tool) for item in rows] == [
        (L1, ALL_TOOLS),
        (L1, "files.write"),
        (L1, "notes.add"),
        (AGENT7, ALL_TOOLS),
        (AGENT7, "files.write"),
    ]
    notes = row(rows, L1, "notes.add")
    assert (notes.verdicts, notes.agreed, notes.let_through, notes.held_back) == (7, 3, 2, 2)
    assert round(notes.percent, 1) == 42.9
    # the riskiest approval of a refused call was at 0.85: 0.86 lets none through, and settles
    # the three verdicts at or above it that agreed
    assert (notes.threshold.value, notes.threshold.settled) == (0.86, 3)
    everything = row(rows, L1, ALL_TOOLS)
    assert (everything.verdicts, everything.counts["escalated_denied"]) == (8, 1)
    assert everything.median_s == 1.5 and everything.median_tokens == 120
    agent7 = row(rows, AGENT7, "files.write")
    assert (agent7.verdicts, agent7.agreed, agent7.let_through) == (2, 1, 1)
    assert agent7.threshold.value is None
    assert agent7.median_s is None  # it judged in its own process


def test_the_safest_threshold_lies_strictly_above_the_riskiest_confidence(store: Store) -> None:
    asked(
        store,
        [
            (L1, "t", "approve", 0.29, "denied", False),
            (L1, "t", "approve", 0.29, "approved", False),
            (L1, "t", "approve", 0.30, "approved", False),
            (L1, "t", "deny", 0.50, "approved", False),
        ],
    )
    threshold = safest_threshold(questions(store.approvals.list()))
    assert (threshold.value, threshold.settled, threshold.wrongly_denied) == (0.3, 1, 1)


def test_with_nothing_let_through_any_threshold_is_safe(store: Store) -> None:
    asked(store, [(L1, "t", "approve", 0.5, "approved", False)])
    threshold = safest_threshold(questions(store.approvals.list()))
    assert (threshold.value, threshold.settled) == (0.0, 1)


def test_a_verdict_without_confidence_acts_at_any_threshold(store: Store) -> None:
    asked(store, [(AGENT7, "t", "approve", None, "denied", False)])
    assert safest_threshold(questions(store.approvals.list())).value is None


def test_only_the_agent_asked_for(store: Store) -> None:
    asked(store, KNOWN[:2], agent="worker")
    asked(store, KNOWN[2:4], agent="other")
    assert len(questions(store.approvals.list(), "other")) == 2


def test_the_cost_counts_only_verdicts_paid_for(store: Store) -> None:
    asked(store, KNOWN)
    count, median_s, median_tokens = shadow_cost(questions(store.approvals.list()))
    assert (count, median_s, median_tokens) == (8, 1.5, 120)


def test_the_printed_report_says_what_to_do_when_empty() -> None:
    [line] = report_lines([])
    assert "shadowMode" in line and "--shadow-supervisors" in line


def test_the_cli_prints_the_report_and_its_json(
    store: Store,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    asked(store, KNOWN)
    monkeypatch.setenv("FOUNDRY_DATABASE_URL", f"sqlite:///{tmp_path / 'agreement.sqlite3'}")
    assert main(["approvals", "agreement"]) == 0
    printed = capsys.readouterr().out
    assert "agent:supervisor" in printed and "supervisor:agent7" in printed
    assert "notes.add: 7 verdict(s), 43% agreed; let through 2 a person refused" in printed
    assert "safest threshold 0.86: it would have settled 3 of them" in printed
    assert "no safe threshold" in printed
    assert main(["approvals", "agreement", "--agent", "worker", "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    [notes] = [item for item in figures if item["tool"] == "notes.add"]
    assert (notes["agreement_percent"], notes["safest_threshold"]) == (42.9, 0.86)
    assert main(["approvals", "agreement", "--agent", "nobody"]) == 0
    assert "no shadow verdicts yet" in capsys.readouterr().out
