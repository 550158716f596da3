"""What Undo and Redo say of an edit, and the page they show."""

from __future__ import annotations

from foundry.agent.models import Agent, PolicyRule
from foundry.agent.templates import new_agent
from foundry.ui.editor.edit_labels import edit_label, page_of


def agent_with_rules(*names: str) -> Agent:
    agent = new_agent("Labels", "")
    config = agent.supervisors[0].config
    config.rules = [PolicyRule(name=name, action="allow") for name in names]  # type: ignore[union-attr]
    return agent


def test_policy_rule_edits_name_the_rule_and_lead_to_the_policy_page() -> None:
    before = agent_with_rules("a", "b")
    rules = ("supervisors", 0, "config", "rules")
    assert edit_label(rules, before, agent_with_rules("new", "a", "b")) == "add rule 'new'"
    assert edit_label(rules, before, agent_with_rules("b")) == "delete rule 'a'"
    assert edit_label(rules, before, agent_with_rules("b", "a")) == "reorder the rules"
    assert edit_label((*rules, 1, "tool"), before, before) == "edit rule 'b'"
    loops = ("supervisors", 0, "config", "loopDetection")
    assert edit_label(loops, before, before) == "edit the policy's loop detection"
    assert page_of((*rules, 0, "name"), before) == "Policy"
    assert page_of(("supervisors", 0, "name"), before) == "Supervisors"


def test_other_edits_say_what_they_change() -> None:
    agent = agent_with_rules()
    assert edit_label(("settings", "maxChatTurns"), agent, agent) == "edit setting max chat turns"
    assert edit_label(("settings", "model"), agent, agent) == "edit the model"
    assert edit_label(("systemPrompt",), agent, agent) == "edit the system prompt"
    assert edit_label(("metadata", "name"), agent, agent) == "edit the agent's name"
    assert page_of(("mcpServers", "time", "command"), agent) == "Tools"
