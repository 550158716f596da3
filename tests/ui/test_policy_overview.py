"""The Policy page leads with the policy in a plain sentence, derived from its rules and
following their edits, and its rules table can be filtered."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from foundry.agent.default_policy import default_policy
from foundry.agent.document import read_agent
from foundry.agent.models import PolicyConfig, PolicyRule
from foundry.agent.templates import create_agent, new_agent
from foundry.supervision.policy_summary import plain_summary, summarise_policy
from foundry.ui.editor import AgentEditor

from .conftest import save_screenshot

pytestmark = pytest.mark.usefixtures("gui_loop")


def test_the_careful_default_in_one_sentence() -> None:
    summary = plain_summary(summarise_policy(default_policy()))

    assert summary.startswith(
        "Reads inside the workspace run; reads outside it are denied; writes inside the "
        "workspace run; writes outside it are denied; shell commands ask you;"
    )
    assert summary.endswith("anything else asks you.")


def test_the_sentence_is_what_the_rules_decide_not_a_fixed_text() -> None:
    everything = PolicyConfig(rules=[PolicyRule(name="all-runs", action="allow")])
    nothing = PolicyConfig(rules=[])

    assert {clause.action for clause in summarise_policy(everything)} == {"allow"}
    denied = summarise_policy(nothing)
    assert {(clause.action, clause.rule) for clause in denied} == {("deny", None)}
    assert plain_summary(denied).endswith("anything else is denied.")


@pytest.fixture
def policy_page(qtbot: QtBot, tmp_path: Path) -> AgentEditor:
    path = tmp_path / "fresh"
    create_agent(path, new_agent("Fresh", "A policy to read"))
    editor = AgentEditor()
    qtbot.addWidget(editor)
    editor.resize(1280, 800)
    editor.show()
    qtbot.waitExposed(editor)
    editor.load(read_agent(path))
    editor.show_section("Policy")
    qtbot.waitUntil(lambda: "In short" in editor.policy.overview.summary.text(), timeout=10000)
    return editor


def test_the_summary_follows_an_edit_of_the_rules(qtbot: QtBot, policy_page: AgentEditor) -> None:
    section = policy_page.policy
    model = section.rules_model
    row = next(n for n, rule in enumerate(model.rows) if rule["name"] == "shell-tools-ask-a-person")

    model.setData(model.index(row, 5), "deny")

    summary = section.overview.summary
    qtbot.waitUntil(lambda: "shell commands are denied" in summary.text(), timeout=10000)
    assert "shell-tools-ask-a-person" in summary.toolTip()  # which rule says so


def test_the_rules_table_shows_only_the_rules_that_mention_what_is_typed(
    qtbot: QtBot, policy_page: AgentEditor, tmp_path: Path
) -> None:
    section = policy_page.policy
    overview, table, rows = section.overview, section.rules, section.rules_model.rows

    qtbot.keyClicks(overview.filter, "shell ask")

    shown = [number for number in range(len(rows)) if not table.isRowHidden(number)]
    assert shown and len(shown) < len(rows)
    for number in shown:
        text = " ".join(str(value) for value in rows[number].values()).lower()
        assert "shell" in text and "ask" in text
    assert overview.shown.text() == f"{len(shown)} of {len(rows)} rules"
    save_screenshot(policy_page, tmp_path, "policy-summary-filter.png")
    overview.filter.clear()
    assert not any(table.isRowHidden(number) for number in range(len(rows)))
    assert overview.shown.text() == f"{len(rows)} rules"
