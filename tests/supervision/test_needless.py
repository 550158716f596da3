"""Needless questions and the rules proposed from them, on a real store with approvals made by
real SupervisedGates and answered at the inbox (bench/needless.py's AskedSession).

The agent's policy is the default one, except that its writes inside the workspace ask a person
(a careful user's choice), so that routine writes to `notes/` are questions. Each attack adopts
the proposal and asks the gate whether the attacking call is let through by it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bench.needless import Answer, AskedSession
from foundry.agent.document import AgentDocument
from foundry.agent.models import PolicyCondition, PolicyConfig, PolicyMatch, PolicyRule
from foundry.llm.base import ToolCall
from foundry.runtime.questions import QuestionsAsked
from foundry.store import ApprovalRecord, Store
from foundry.supervision.needless import (
    ROUTINE_APPROVALS,
    NeedlessReport,
    candidate_rules,
    question_counts,
    with_rules,
)
from foundry.supervision.policy import PolicyEngine
from tests.supervision.needless_agent import (
    APPROVE,
    ASKING,
    DENY,
    INJECTION,
    asked,
    careful_agent,
    careful_policy,
    routine_notes,
    write,
)


@pytest.fixture
def agent(tmp_path: Path) -> AgentDocument:
    return careful_agent(tmp_path)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(f"sqlite:///{tmp_path / 'needless.sqlite3'}") as opened:
        yield opened


def report(store: Store, agent: AgentDocument) -> NeedlessReport:
    return QuestionsAsked(store).report(agent.path)


def adopted_gate_outcome(store: Store, agent: AgentDocument, call: ToolCall) -> tuple[str, str]:
    """How the gate routes `call` with the report's proposals adopted: outcome and rule."""
    found = report(store, agent)
    policy = with_rules(careful_policy(), found.proposals)

    async def routed() -> tuple[str, str]:
        route = await AskedSession(store, agent, policy).gate.route(call)
        return route.outcome, route.policy.rule or ""

    return asyncio.run(routed())


# -- what is counted and proposed -----------------------------------------------------------------


def test_routine_approvals_are_counted_and_give_the_narrowest_rule(
    store: Store, agent: AgentDocument
) -> None:
    asked(store, agent, routine_notes())
    found = report(store, agent)
    [counts] = found.counts
    assert (counts.tool, counts.rule, counts.asked, counts.unchanged) == (
        "fs.write_file",
        ASKING,
        3,
        3,
    )
    assert counts.median_wait_s is not None and counts.p90_wait_s is not None
    assert counts.p90_wait_s >= counts.median_wait_s >= 0
    [proposal] = found.proposals
    rule = proposal.rule
    assert (rule.agent, rule.tool, rule.action, proposal.before) == (
        "notes-keeper",
        "fs.write_file",
        "allow",
        ASKING,
    )
    assert rule.when is not None
    conditions = {(c.param, c.op): c.value for c in rule.when.all}
    assert conditions[("path", "within")] == "notes"
    assert conditions[("*", "gives_only")] == ["content", "path"]
    assert (proposal.approvals, proposal.settles, found.settled) == (3, 3, 3)
    assert found.summary() == (
        "3 of your last 3 questions were approved unchanged: 1 rule would have settled 3 of them."
    )


def test_after_adopting_the_proposal_the_same_routine_calls_run_without_a_person(
    store: Store, agent: AgentDocument
) -> None:
    asked(store, agent, routine_notes())
    outcome, rule = adopted_gate_outcome(store, agent, write("notes/day-9.md", "Planned the week."))
    assert outcome == "allow"
    assert rule.startswith("routine-fs-write_file-in-notes")


def test_too_few_approvals_give_no_rule(store: Store, agent: AgentDocument) -> None:
    asked(store, agent, routine_notes(ROUTINE_APPROVALS - 1))
    found = report(store, agent)
    assert found.needless == ROUTINE_APPROVALS - 1 and found.proposals == []


def test_a_group_with_one_denial_gets_no_proposal(store: Store, agent: AgentDocument) -> None:
    asked(store, agent, [*routine_notes(5), (write("notes/leak.md", "the keys"), DENY)])
    found = report(store, agent)
    assert found.proposals == [] and found.counts[0].denied == 1
    assert any("some were denied" in why for why in found.not_proposed)


def test_a_group_with_one_edit_gets_no_proposal(store: Store, agent: AgentDocument) -> None:
    edit = Answer(True, params={"path": "notes/day-7.md", "content": "Shorter."})
    asked(store, agent, [*routine_notes(4), (write("notes/day-7.md", "Longer text."), edit)])
    found = report(store, agent)
    assert found.proposals == [] and found.counts[0].edited == 1


def test_flagged_calls_are_never_settled_by_a_proposal(store: Store, agent: AgentDocument) -> None:
    flagged = write("notes/day-8.md", INJECTION)
    asked(store, agent, [*routine_notes(4), (flagged, APPROVE)])
    found = report(store, agent)
    assert sum(c.flagged for c in found.counts) == 1
    assert all(not p.before.startswith("injection:") for p in found.proposals)
    outcome, _ = adopted_gate_outcome(store, agent, write("notes/day-9.md", INJECTION))
    assert outcome == "human"


def test_a_denied_call_elsewhere_keeps_its_outcome(store: Store, agent: AgentDocument) -> None:
    asked(store, agent, [*routine_notes(), (write("../outside/x.sh", "echo hi"), APPROVE)])
    found = report(store, agent)
    [proposal] = found.proposals
    assert proposal.refused_changed == 0
    outcome, rule = adopted_gate_outcome(store, agent, write("../outside/x.sh", "echo hi"))
    assert (outcome, rule) == ("deny", "deny-writing-outside-the-workspace")


# -- attacks on a proposal made from approvals of notes/ ------------------------------------------


def attacks(tmp_path: Path) -> dict[str, ToolCall]:
    return {
        "dotdot": write("../etc/passwd", "root::0:0::/:/bin/sh"),
        "dotdot-through-notes": write("notes/../../outside/evil.sh", "echo pwned"),
        "absolute": write(str(tmp_path / "outside" / "evil.sh"), "echo pwned"),
        "symlink-out": write("notes/away/evil.sh", "echo pwned"),
        "workspace-root": write("tsagent.json", "{}"),
        "extra-parameter": write("notes/day-9.md", "x", mode="0777"),
        "second-path-destination": write("notes/day-9.md", "x", destination="../outside/x"),
        "second-path-source": write("notes/day-9.md", "x", source="notes/day-1.md"),
        "another-tool": ToolCall(
            id="e", name="fs.edit_file", arguments={"path": "notes/day-1.md", "edits": []}
        ),
        "another-server": ToolCall(
            id="o", name="other.write_file", arguments={"path": "notes/day-9.md", "content": "x"}
        ),
    }


@pytest.mark.parametrize(
    "attack",
    [
        "dotdot",
        "dotdot-through-notes",
        "absolute",
        "symlink-out",
        "workspace-root",
        "extra-parameter",
        "second-path-destination",
        "second-path-source",
        "another-tool",
        "another-server",
    ],
)
def test_a_proposal_from_notes_lets_nothing_else_through(
    store: Store, agent: AgentDocument, tmp_path: Path, attack: str
) -> None:
    (agent.base_dir / "notes" / "away").symlink_to(tmp_path / "outside", target_is_directory=True)
    asked(store, agent, routine_notes())
    [proposal] = report(store, agent).proposals
    _, rule = adopted_gate_outcome(store, agent, attacks(tmp_path)[attack])
    assert rule != proposal.rule.name


def test_another_agent_of_the_same_tools_is_not_covered(store: Store, agent: AgentDocument) -> None:
    asked(store, agent, routine_notes())
    [proposal] = report(store, agent).proposals
    rule = proposal.rule
    assert rule.agent == "notes-keeper" and rule.tool == "fs.write_file"


def test_writes_through_a_link_out_are_denied_unasked_so_nothing_is_proposed(
    store: Store, agent: AgentDocument, tmp_path: Path
) -> None:
    """`notes/away` leads out of the workspace: its writes are the deny rule's, never a
    person's question, so no approval (and no rule) comes of them."""
    (agent.base_dir / "notes" / "away").symlink_to(tmp_path / "outside", target_is_directory=True)
    asked(store, agent, [(write(f"notes/away/{n}.md", "x"), APPROVE) for n in range(3)])
    found = report(store, agent)
    assert (found.asked, found.proposals) == (0, [])


# -- the rule's own pieces ------------------------------------------------------------------------


def fetched(url: str, number: int) -> ApprovalRecord:
    """An approval of a fetch asked by the network rule, approved as asked a moment later."""
    asked_at = datetime(2026, 12, 1, 9, number, tzinfo=UTC)
    return ApprovalRecord(
        agent_id="reader",
        tool="web.fetch",
        params={"url": url},
        policy_rule="fetch-tools-ask-a-person",
        status="approved",
        resolved_by="human:gui:ana",
        created_at=asked_at,
        resolved_at=asked_at + timedelta(seconds=12 + number),
    )


@pytest.mark.parametrize(
    "url",
    [
        "https://docs.example.org.evil.net/x",
        "https://docs.example.org@evil.net/x",
        "https://evil.net/?https://docs.example.org/",
        "http://docs.example.org/x",
        "https://docs.example.org:8443/x",
    ],
)
def test_a_rule_from_urls_of_one_site_lets_no_other_site_through(url: str, tmp_path: Path) -> None:
    approvals = [fetched(f"https://docs.example.org/guide/{n}?page={n}", n) for n in range(4)]
    asking = PolicyRule(name="fetch-tools-ask-a-person", tool="*fetch*", action="human")
    config = PolicyConfig(rules=[asking])
    [proposal], _ = candidate_rules(approvals, config, tmp_path)
    engine = PolicyEngine(with_rules(config, [proposal]), tmp_path)
    assert engine.decide("reader", "web.fetch", {"url": "https://docs.example.org/faq"}).rule == (
        proposal.rule.name
    )
    assert engine.decide("reader", "web.fetch", {"url": url}).rule != proposal.rule.name


def test_the_waits_are_the_median_and_the_90th_percentile(tmp_path: Path) -> None:
    approvals = [fetched(f"https://docs.example.org/{n}", n) for n in range(10)]
    [counts] = question_counts(approvals)
    assert (counts.median_wait_s, counts.p90_wait_s) == (16.5, 20.0)


def test_gives_only_holds_for_the_listed_parameters_only(tmp_path: Path) -> None:
    only = PolicyCondition(param="*", op="gives_only", value=["path", "content"])
    rule = PolicyRule(
        name="only", tool="fs.write_file", when=PolicyMatch(all=[only]), action="allow"
    )
    engine = PolicyEngine(PolicyConfig(rules=[rule]), tmp_path)
    assert engine.decide("a", "fs.write_file", {"path": "a", "content": "x"}).action == "allow"
    assert engine.decide("a", "fs.write_file", {"path": "a"}).action == "allow"
    assert engine.decide("a", "fs.write_file", {"path": "a", "mode": "0777"}).action == "deny"
    with pytest.raises(ValueError, match="gives_only needs a list"):
        PolicyCondition(param="*", op="gives_only", value="path")


@pytest.mark.parametrize("where", ["parent", "home"])
def test_no_rule_reaches_a_folder_that_holds_the_workspace_or_the_home(
    where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reads approved in the folder above the project (or in the home folder itself) would
    make a rule `within` it, which holds the project and all around it: none is proposed."""
    workspace, home = tmp_path / "project", tmp_path / "home"
    workspace.mkdir()
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    folder = tmp_path if where == "parent" else home
    asking = PolicyRule(name="reads-ask", tool="*", action="human")
    approvals = [
        fetched("https://docs.example.org/", n).model_copy(
            update={"tool": "fs.read_file", "params": {"path": str(folder / f"{n}.txt")}}
        )
        for n in range(4)
    ]
    for approval in approvals:
        approval.policy_rule = "reads-ask"
    proposals, _ = candidate_rules(approvals, PolicyConfig(rules=[asking]), workspace)
    assert proposals == []


def test_a_report_with_no_question_says_so_in_a_sentence() -> None:
    assert NeedlessReport(counts=[], proposals=[]).summary() == "No call has asked a person yet."
