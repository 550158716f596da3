"""A rule the agent writes to its own files is said in the chat and the timeline, and a bar
offers to undo it: Undo puts the file back; a rule a person changed since is left alone."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from pytestqt.qtbot import QtBot

from foundry.agent.document import load_agent
from foundry.session.events import ContextItemSaved, Event
from foundry.ui.bridge import EngineBridge
from foundry.ui.session.timeline import FILES, SUPERVISOR_ROLE, describe

from ..runtime.conftest import write_agent
from .conftest import save_screenshot
from .test_session_window import open_window, rows, send

OPEN = {"permissionRequired": False, "include": "always"}
SERVERS = {"rules": {"type": "internal", "tool": "rules", "serverToolDefaults": OPEN}}


def calling(tool: str, **arguments: str) -> dict[str, object]:
    return {"tool_calls": [{"name": tool, "arguments": arguments}]}


TURNS = {
    "turns": [
        calling("rules.updateRule", name="tone", text="Be curt."),
        calling("rules.createRule", name="tables", text="Tables."),
        {"text": "I changed my rules."},
    ]
}


def rules_on_disk(agent: Path) -> dict[str, str]:
    document = load_agent(agent).agent
    assert document is not None
    return {rule.name: rule.text.strip() for rule in document.rules}


def test_the_agents_saves_are_shown_and_undone_from_the_chat(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    agent = write_agent(tmp_path / "keeper", TURNS, SERVERS, rules={"tone": "manual"})
    _, view = open_window(qtbot, bridge, agent)
    send(qtbot, view, "Tidy your rules.")
    qtbot.waitUntil(lambda: ("assistant", "I changed my rules.") in rows(view), timeout=20000)
    qtbot.waitUntil(view.send.isEnabled, timeout=10000)
    bar = view.saves_bar
    assert bar.isVisible()
    assert bar.text.text() == (
        "The agent created the rule “tables” in its files. "
        "(1 earlier change can be undone after it.)"
    )
    notices = [text for kind, text in rows(view) if kind == "notice"]
    assert notices == [
        "The agent changed the rule “tone” in its files.",
        "The agent created the rule “tables” in its files.",
    ]
    timeline = view.timeline
    shown = [timeline.index(n).data(SUPERVISOR_ROLE) for n in range(timeline.rowCount())]
    assert shown.count(FILES) == 2
    save_screenshot(view, tmp_path, "undo-agent-save.png")

    bar.undo.click()
    qtbot.waitUntil(lambda: "tables" not in rules_on_disk(agent), timeout=10000)
    qtbot.waitUntil(lambda: "changed the rule “tone”" in bar.text.text(), timeout=10000)
    qtbot.waitUntil(bar.undo.isEnabled, timeout=10000)  # the first undo has returned
    bar.undo.click()
    qtbot.waitUntil(lambda: not bar.isVisible(), timeout=10000)
    assert rules_on_disk(agent) == {"tone": "Rule tone text."}
    assert [text for kind, text in rows(view) if kind == "notice"][-1].startswith("Undone: ")


def test_a_rule_a_person_changed_since_is_not_undone_and_the_chat_says_why(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    turns = {"turns": [TURNS["turns"][0], {"text": "Done."}]}
    agent = write_agent(tmp_path / "keeper", turns, SERVERS, rules={"tone": "manual"})
    _, view = open_window(qtbot, bridge, agent)
    send(qtbot, view, "Be curt.")
    qtbot.waitUntil(view.saves_bar.isVisible, timeout=20000)
    qtbot.waitUntil(view.send.isEnabled, timeout=10000)
    rule = agent / "rules" / "tone.mdt"
    rule.write_text(rule.read_text().replace("Be curt.", "Be kind."))

    view.saves_bar.undo.click()
    qtbot.waitUntil(lambda: view.status.text().startswith("Not undone:"), timeout=10000)
    assert "changed again after the agent saved it" in view.status.text()
    assert rules_on_disk(agent) == {"tone": "Be kind."}
    view.saves_bar.keep.click()
    assert not view.saves_bar.isVisible()


def test_an_include_mode_the_agent_set_is_offered_for_undo_too(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    servers = {
        **SERVERS,
        "tools": {"type": "internal", "tool": "tools", "serverToolDefaults": OPEN},
    }
    turns = {
        "turns": [
            calling("tools.setServerIncludeMode", name="rules", mode="manual"),
            {"text": "Done."},
        ]
    }
    agent = write_agent(tmp_path / "keeper", turns, servers)
    before = (agent / "tsagent.json").read_text()
    _, view = open_window(qtbot, bridge, agent)
    send(qtbot, view, "Hide your rule tools.")
    qtbot.waitUntil(view.saves_bar.isVisible, timeout=20000)
    qtbot.waitUntil(view.send.isEnabled, timeout=10000)
    assert view.saves_bar.text.text() == (
        "The agent set the tools of “rules” by default to be included “manual” in its files."
    )
    view.saves_bar.undo.click()
    qtbot.waitUntil(lambda: not view.saves_bar.isVisible(), timeout=10000)
    assert json.loads((agent / "tsagent.json").read_text()) == json.loads(before)


def test_the_timeline_files_a_supervisors_change_under_the_supervisor_not_the_files() -> None:
    def row(by: str) -> object:
        body = ContextItemSaved(item="rule", name="tone", value={"name": "tone"}, by=by)
        decision = describe(Event(session_id="s", seq=1, time=datetime.now(UTC), body=body))
        assert decision is not None
        return decision.supervisor

    assert row("supervisor:architect") == "architect"
    assert row("agent") == FILES
