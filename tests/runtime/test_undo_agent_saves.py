"""A rule or reference the agent saves through tsagent's internal tools can be taken back by a
person: its files and the session get the item as it was, and nothing a person changed since
is overwritten."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from foundry.agent.document import load_agent
from foundry.runtime.engine import Engine, SessionNotFound
from foundry.runtime.internal_tools import UndoRefused
from foundry.session.events import ContextChanged, ContextItemSaved, Event, ToolSettingSaved
from tests.runtime.conftest import write_agent

OPEN = {"permissionRequired": False, "include": "always"}
SERVERS = {
    "rules": {"type": "internal", "tool": "rules", "serverToolDefaults": OPEN},
    "refs": {"type": "internal", "tool": "references", "serverToolDefaults": OPEN},
    "tools": {"type": "internal", "tool": "tools", "serverToolDefaults": OPEN},
}
RULES = {"tone": "manual", "style": "manual"}


def calling(tool: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": tool, "arguments": arguments}]}


def run_turn(engine: Engine, agent: Path, turns: list[dict[str, Any]]) -> tuple[str, list[Event]]:
    """A chat whose one turn makes the calls of `turns`; its id and its events."""
    (agent / "turns.json").write_text(json.dumps({"turns": [*turns, {"text": "Done."}]}))
    session_id = engine.submit(engine.open_session(agent)).result(60)
    engine.submit(engine.send(session_id, "go")).result(120)
    return session_id, events_of(engine, session_id)


def events_of(engine: Engine, session_id: str) -> list[Event]:
    return engine.submit(engine.events(session_id)).result(30)


def saves(events: list[Event], by: str = "agent") -> list[Event]:
    kinds = ContextItemSaved | ToolSettingSaved
    return [e for e in events if isinstance(e.body, kinds) and e.body.by == by]


def undo(engine: Engine, session_id: str, seq: int) -> None:
    engine.submit(engine.undo_agent_save(session_id, seq)).result(30)


def rules_on_disk(agent: Path) -> list[tuple[str, str]]:
    document = load_agent(agent).agent
    assert document is not None
    return [(rule.name, rule.text.strip()) for rule in document.rules]


def rule_files(agent: Path) -> dict[str, tuple[dict[str, object], str]]:
    """Each .mdt file's header, as fields, and its text."""
    files = {}
    for path in (agent / "rules").iterdir():
        header, text = path.read_text().removeprefix("---\n").split("---\n", 1)
        files[path.name] = (json.loads(header), text)
    return files


def rules_of_session(engine: Engine, session_id: str) -> list[tuple[str, str]]:
    return [(r.name, r.text.strip()) for r in engine.session(session_id).agent.rules]


def test_a_created_changed_and_deleted_rule_are_each_undone_in_the_files_and_the_session(
    engine: Engine, tmp_path: Path
) -> None:
    agent = write_agent(tmp_path / "keeper", {"turns": []}, SERVERS, rules=RULES)
    before = rules_on_disk(agent)
    files = rule_files(agent)
    session_id, events = run_turn(
        engine,
        agent,
        [
            calling("rules.createRule", name="tables", text="Always answer in tables."),
            calling("rules.updateRule", name="tone", text="Be curt."),
            calling("rules.deleteRule", name="style"),
        ],
    )
    created, changed, deleted = saves(events)
    assert dict(rules_on_disk(agent))["tone"] == "Be curt."

    for save in (deleted, changed, created):  # the latest first, as a person would
        undo(engine, session_id, save.seq)

    assert sorted(rules_on_disk(agent)) == sorted(before)
    assert rule_files(agent) == files  # each with the same fields, no more (its layout is ours)
    assert sorted(rules_of_session(engine, session_id)) == sorted(before)
    undone = [(e.body.name, e.body.undoes) for e in saves(events_of(engine, session_id), "user")]
    assert undone == [("style", deleted.seq), ("tone", changed.seq), ("tables", created.seq)]


def test_a_reference_the_agent_wrote_is_undone_too(engine: Engine, tmp_path: Path) -> None:
    agent = write_agent(tmp_path / "keeper", {"turns": []}, SERVERS)
    session_id, events = run_turn(
        engine, agent, [calling("refs.createReference", name="notes", text="Secret plans.")]
    )
    (save,) = saves(events)
    undo(engine, session_id, save.seq)
    document = load_agent(agent).agent
    assert document is not None and document.references == []
    assert engine.session(session_id).agent.references == []


def test_what_a_person_changed_after_the_agent_saved_is_not_overwritten(
    engine: Engine, tmp_path: Path
) -> None:
    agent = write_agent(tmp_path / "keeper", {"turns": []}, SERVERS, rules=RULES)
    session_id, events = run_turn(
        engine, agent, [calling("rules.updateRule", name="tone", text="Be curt.")]
    )
    (save,) = saves(events)
    edited = (agent / "rules" / "tone.mdt").read_text().replace("Be curt.", "Be kind, I mean it.")
    (agent / "rules" / "tone.mdt").write_text(edited)

    with pytest.raises(UndoRefused, match="changed again"):
        undo(engine, session_id, save.seq)
    assert (agent / "rules" / "tone.mdt").read_text() == edited
    assert saves(events_of(engine, session_id), "user") == []


def test_an_earlier_save_is_undone_only_after_the_later_one_of_the_same_rule(
    engine: Engine, tmp_path: Path
) -> None:
    agent = write_agent(tmp_path / "keeper", {"turns": []}, SERVERS, rules=RULES)
    session_id, events = run_turn(
        engine,
        agent,
        [
            calling("rules.updateRule", name="tone", text="Be curt."),
            calling("rules.updateRule", name="tone", text="Be very curt."),
        ],
    )
    first, second = saves(events)
    with pytest.raises(UndoRefused, match="changed again"):
        undo(engine, session_id, first.seq)
    undo(engine, session_id, second.seq)
    assert dict(rules_on_disk(agent))["tone"] == "Be curt."
    undo(engine, session_id, first.seq)
    assert dict(rules_on_disk(agent))["tone"] == "Rule tone text."


def test_only_the_agents_own_saves_are_undone_and_each_once(engine: Engine, tmp_path: Path) -> None:
    agent = write_agent(tmp_path / "keeper", {"turns": []}, SERVERS, rules=RULES)
    session_id, events = run_turn(
        engine,
        agent,
        [
            calling("rules.includeRule", name="tone"),
            calling("rules.createRule", name="tables", text="Tables."),
        ],
    )
    (save,) = saves(events)
    included = next(e for e in events if isinstance(e.body, ContextChanged))
    not_saves = [included.seq, events[-1].seq + 100, 0]
    for seq in not_saves:
        with pytest.raises(UndoRefused, match="Only a change the agent saved"):
            undo(engine, session_id, seq)

    undo(engine, session_id, save.seq)
    with pytest.raises(UndoRefused, match="undone already"):
        undo(engine, session_id, save.seq)
    (undone,) = saves(events_of(engine, session_id), "user")
    with pytest.raises(UndoRefused, match="Only a change the agent saved"):
        undo(engine, session_id, undone.seq)  # a person's save is theirs to change in the editor
    with pytest.raises(SessionNotFound):
        undo(engine, "no-such-session", save.seq)
    assert ("tables", "Tables.") not in rules_on_disk(agent)


def test_the_undo_is_replayed_when_the_session_is_reopened(engine: Engine, tmp_path: Path) -> None:
    agent = write_agent(tmp_path / "keeper", {"turns": []}, SERVERS, rules=RULES)
    session_id, events = run_turn(
        engine, agent, [calling("rules.createRule", name="tables", text="Tables.")]
    )
    (save,) = saves(events)
    undo(engine, session_id, save.seq)
    engine.submit(engine.close_session(session_id)).result(30)
    engine.submit(engine.reopen_session(session_id)).result(60)
    assert "tables" not in dict(rules_of_session(engine, session_id))


def servers_on_disk(agent: Path) -> dict[str, object]:
    return json.loads((agent / "tsagent.json").read_text())["mcpServers"]


def test_an_include_mode_the_agent_set_is_undone_to_what_was_there(
    engine: Engine, tmp_path: Path
) -> None:
    agent = write_agent(tmp_path / "keeper", {"turns": []}, SERVERS, rules=RULES)
    before = (agent / "tsagent.json").read_text()
    session_id, events = run_turn(
        engine,
        agent,
        [
            calling(
                "tools.setToolIncludeMode", serverName="rules", toolName="createRule", mode="agent"
            ),
            calling("tools.setServerIncludeMode", name="refs", mode="manual"),
        ],
    )
    tool_mode, server_mode = saves(events)
    assert (agent / "tsagent.json").read_text() != before
    undo(engine, session_id, server_mode.seq)
    undo(engine, session_id, tool_mode.seq)
    assert json.loads((agent / "tsagent.json").read_text()) == json.loads(before)
    (said,) = [e.body for e in events if e.seq == tool_mode.seq]
    assert said.sentence() == (
        "The agent set the tool “rules.createRule” to be included “agent” in its files."
    )


def test_an_include_mode_changed_again_since_is_left_alone(engine: Engine, tmp_path: Path) -> None:
    agent = write_agent(tmp_path / "keeper", {"turns": []}, SERVERS, rules=RULES)
    session_id, events = run_turn(
        engine, agent, [calling("tools.setServerIncludeMode", name="refs", mode="manual")]
    )
    (save,) = saves(events)
    config = json.loads((agent / "tsagent.json").read_text())
    config["mcpServers"]["refs"]["serverToolDefaults"]["include"] = "agent"
    (agent / "tsagent.json").write_text(json.dumps(config))
    with pytest.raises(UndoRefused, match="changed again"):
        undo(engine, session_id, save.seq)
    assert servers_on_disk(agent)["refs"]["serverToolDefaults"]["include"] == "agent"


def test_a_supervisors_change_to_the_chats_copy_is_said_as_such_and_not_offered_for_undo() -> None:
    changed = ContextItemSaved(
        item="rule", name="tone", value={"name": "tone"}, by="supervisor:architect"
    )
    assert changed.sentence() == (
        "Architect saved the rule “tone” for this chat (its files are as they were)."
    )
    assert not changed.undoable
