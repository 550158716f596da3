"""The Supervisors page as forms beside the JSON, undo that says what it undoes, and an editor
that never drops what was typed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtWidgets import QScrollArea
from pytestqt.qtbot import QtBot

from foundry.agent.document import read_agent
from foundry.agent.models import Agent
from foundry.ui.bridge import EngineBridge
from foundry.ui.editor import AgentEditor

from .conftest import save_screenshot, shown_main_window
from .test_editor import make_agent, open_editor, problem_lines, save

pytestmark = pytest.mark.usefixtures("gui_loop")
ALT = Qt.KeyboardModifier.AltModifier
CTRL = Qt.KeyboardModifier.ControlModifier


def working(editor: AgentEditor) -> Agent:
    agent = editor.controller.working
    assert agent is not None
    return agent


def add_supervisor(editor: AgentEditor, kind: str) -> None:
    action = next(a for a in editor.supervisors.add_menu.actions() if a.data() == kind)
    action.trigger()


def json_entries(editor: AgentEditor) -> list[dict[str, object]]:
    data = json.loads(editor.supervisors.json.toPlainText())
    assert isinstance(data, list)
    return data


def test_a_guardian_added_and_edited_in_its_form_shows_in_the_json_and_is_saved(
    qtbot: QtBot, tmp_path: Path
) -> None:
    path = make_agent(tmp_path / "guarded")
    editor = open_editor(qtbot, path)
    editor.show_section("Supervisors")
    add_supervisor(editor, "guardian")
    assert [entry.type for entry in working(editor).supervisors] == ["policy", "guardian"]
    assert editor.supervisors.entries.currentRow() == 1
    form = editor.supervisors.forms.guardian
    assert editor.supervisors.forms.stack.currentWidget() is form
    form.mask_pii["phone"].setChecked(False)
    qtbot.keyClicks(form.block_keywords, "password")
    qtbot.keyClick(form.block_keywords, Qt.Key.Key_Return)
    qtbot.keyClicks(form.block_keywords, "secret")
    form.apply_to["request"].setChecked(False)
    entry = json_entries(editor)[1]
    assert entry["config"] == {
        "maskPii": ["email", "card", "national_id"],
        "blockKeywords": ["password", "secret"],
        "applyTo": ["response"],
    }
    save(qtbot, editor)
    saved = read_agent(path).agent
    assert saved is not None
    guardian = saved.supervisors[1].config
    assert guardian.block_keywords == ["password", "secret"]  # type: ignore[union-attr]
    assert guardian.mask_pii == ["email", "card", "national_id"]  # type: ignore[union-attr]


def test_an_agent_supervisor_form_keeps_fields_it_does_not_show(
    qtbot: QtBot, tmp_path: Path
) -> None:
    make_agent(tmp_path / "reviewer", "Reviewer")
    path = make_agent(tmp_path / "worker", "Worker")
    editor = open_editor(qtbot, path)
    editor.show_section("Supervisors")
    entry = {
        "type": "agent",
        "id": "review",
        "futureField": {"kept": True},
        "config": {"agentPath": "../reviewer", "tsagentOnly": 7},
    }
    editor.supervisors.json.setPlainText(json.dumps([entry]))
    qtbot.waitUntil(lambda: editor.supervisors.entries.item(0).text() == "review (agent)")
    form = editor.supervisors.forms.agent
    assert form.agent_path.text() == "../reviewer"
    form.allowed_actions["MODIFY_MESSAGES"].setChecked(True)
    form.fallback.setCurrentIndex(form.fallback.findData("block"))
    form.timeout.setValue(15)
    shown = json_entries(editor)[0]
    save_screenshot(editor, tmp_path, "supervisors-forms.png")
    assert shown["futureField"] == {"kept": True}
    config = shown["config"]
    assert isinstance(config, dict) and config["tsagentOnly"] == 7
    assert config["allowedActions"] == ["READ_ONLY", "MODIFY_MESSAGES"]
    assert config["fallbackBehavior"] == "block" and config["timeoutSeconds"] == 15
    save(qtbot, editor)
    on_disk = json.loads((path / "tsagent.json").read_text())["supervisors"][0]
    assert on_disk["futureField"] == {"kept": True} and on_disk["config"]["tsagentOnly"] == 7
    with qtbot.waitSignal(editor.open_agent_requested) as signal:
        form.open.click()
    assert signal.args == [(tmp_path / "reviewer").resolve()]


def test_the_chain_is_reordered_by_keys_and_by_dragging_and_undo_says_so(
    qtbot: QtBot, tmp_path: Path
) -> None:
    path = make_agent(tmp_path / "chain")
    editor = open_editor(qtbot, path)
    editor.show_section("Supervisors")
    add_supervisor(editor, "guardian")
    add_supervisor(editor, "architect")
    assert [e.type for e in working(editor).supervisors] == ["policy", "guardian", "architect"]
    editor.supervisors.entries.setFocus()
    qtbot.keyClick(editor.supervisors.entries, Qt.Key.Key_Up, ALT)
    assert [e.type for e in working(editor).supervisors] == ["policy", "architect", "guardian"]
    assert editor.undo_action.text() == "Undo: reorder the supervisors"
    model = editor.supervisors.entries.model()
    assert model.moveRow(QModelIndex(), 0, QModelIndex(), 3)  # a drag of the first to the end
    assert [e.type for e in working(editor).supervisors] == ["architect", "guardian", "policy"]
    assert [e["type"] for e in json_entries(editor)] == ["architect", "guardian", "policy"]
    editor.show_section("Agent")
    qtbot.keyClick(editor, Qt.Key.Key_Z, CTRL)
    assert editor.pages.currentWidget() is editor.supervisors  # undo shows what it changed
    assert [e.type for e in working(editor).supervisors] == ["policy", "architect", "guardian"]
    editor.supervisors.entries.setCurrentRow(2)
    editor.supervisors.remove.click()
    assert [e.type for e in working(editor).supervisors] == ["policy", "architect"]
    assert editor.undo_action.text() == "Undo: remove supervisor 'guardian'"


def test_invalid_supervisors_json_is_kept_marks_the_editor_unsaved_and_refuses_to_save(
    qtbot: QtBot, tmp_path: Path
) -> None:
    path = make_agent(tmp_path / "keep")
    before = (path / "tsagent.json").read_text()
    editor = open_editor(qtbot, path)
    editor.show_section("Supervisors")
    typed = '[{"type": "guardian", "id": "g", "config": {"blockKeywords": ["x"]}'  # no ] }
    editor.supervisors.json.setPlainText(typed)
    qtbot.waitUntil(lambda: any("not valid JSON" in line for line in problem_lines(editor)))
    assert editor.modified and editor.title.endswith(" *")
    editor.save_action.trigger()
    assert editor.status.text().startswith("Not saved: ")
    assert "Everything you typed is kept" in editor.status.text()
    assert editor.supervisors.json.toPlainText() == typed
    assert (path / "tsagent.json").read_text() == before
    editor.show_section("Settings")  # another page's edit and its undo keep the text too
    editor.settings.temperature.setValue(0.9)
    editor.undo_action.trigger()
    assert editor.supervisors.json.toPlainText() == typed
    save_screenshot(editor, tmp_path, "editor-no-lost-input.png")


def test_an_invalid_model_stays_in_its_field_flagged_and_the_save_waits_for_a_fix(
    qtbot: QtBot, tmp_path: Path
) -> None:
    path = make_agent(tmp_path / "model")
    editor = open_editor(qtbot, path)
    editor.show_section("Settings")
    field = editor.settings.model
    qtbot.keyClicks(field, "no colon here")
    assert editor.modified
    assert "border" in field.styleSheet() and field.toolTip()
    editor.save_action.trigger()
    assert editor.status.text().startswith("Not saved: settings.model")
    assert field.text() == "no colon here"
    field.clear()
    qtbot.keyClicks(field, "ollama:qwen2.5:7b")
    assert field.styleSheet() == ""
    save(qtbot, editor)
    saved = read_agent(path).agent
    assert saved is not None and saved.settings.model == "ollama:qwen2.5:7b"


def test_an_invalid_supervisor_id_stays_in_its_field_while_other_fields_are_edited(
    qtbot: QtBot, tmp_path: Path
) -> None:
    path = make_agent(tmp_path / "ids")
    editor = open_editor(qtbot, path)
    editor.show_section("Supervisors")
    add_supervisor(editor, "collection")
    forms = editor.supervisors.forms
    forms.id.selectAll()
    qtbot.keyClicks(forms.id, "not valid!")
    qtbot.keyClicks(forms.name, "Stats")
    assert forms.id.text() == "not valid!" and "border" in forms.id.styleSheet()
    assert working(editor).supervisors[1].name == "Stats"
    assert editor.modified
    editor.save_action.trigger()
    assert editor.status.text().startswith("Not saved: supervisors[1].id")


def test_a_broken_agent_opens_lists_every_problem_and_saves_only_once_fixed(
    qtbot: QtBot, tmp_path: Path
) -> None:
    path = make_agent(tmp_path / "broken")
    config = json.loads((path / "tsagent.json").read_text())
    config["settings"]["temperature"] = "hot"
    config["supervisors"].append({"type": "bogus", "id": "x"})
    (path / "tsagent.json").write_text(json.dumps(config, indent=2))
    (path / "rules").mkdir(exist_ok=True)
    broken_rule = path / "rules" / "bad.mdt"
    broken_rule.write_text('---\n{"name": "bad", "priorityLevel": "high"}---\ntext\n')
    rule_bytes = broken_rule.read_bytes()
    assert read_agent(path).agent is None  # it does not validate
    editor = open_editor(qtbot, path)
    assert editor.pages.isEnabled()
    qtbot.waitUntil(lambda: len(problem_lines(editor)) >= 4)
    lines = problem_lines(editor)
    assert any("bad.mdt" in line for line in lines)
    assert any("settings.temperature" in line for line in lines)
    assert any("Supervisors page, JSON" in line and "bogus" in line for line in lines)
    assert "bogus" in editor.supervisors.json.toPlainText()  # as read, to fix
    assert "border" in editor.settings.temperature.styleSheet()
    assert editor.modified
    editor.save_action.trigger()
    assert editor.status.text().startswith("Not saved: ")
    save_screenshot(editor, tmp_path, "editor-broken-agent.png")
    text = editor.supervisors.json.toPlainText().replace('"bogus"', '"guardian"')
    editor.supervisors.json.setPlainText(text)
    qtbot.waitUntil(lambda: len(working(editor).supervisors) == 2)
    editor.settings.temperature.setValue(0.4)
    save(qtbot, editor)
    saved = read_agent(path)
    assert [e.type for e in saved.agent.supervisors] == ["policy", "guardian"]  # type: ignore[union-attr]
    assert saved.agent.settings.temperature == 0.4  # type: ignore[union-attr]
    assert broken_rule.read_bytes() == rule_bytes  # the file it could not read is untouched


@pytest.mark.parametrize("size", [(1280, 800), (1440, 900)])
def test_each_supervisor_form_fits_its_pane_in_the_main_window(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path, size: tuple[int, int]
) -> None:
    from foundry.agent.templates import create_agent, new_agent

    window = shown_main_window(qtbot, bridge, size)
    editor = window.agent_created(create_agent(tmp_path / "fits", new_agent("Fits")))
    editor.show_section("Supervisors")
    for kind in ("guardian", "agent", "collection", "architect"):
        add_supervisor(editor, kind)
    pane = editor.supervisors.findChild(QScrollArea)
    assert pane is not None
    assert window.agent_panel.isVisible()  # the agent panel open beside the editor
    forms = editor.supervisors.forms
    for row, supervisor in enumerate(working(editor).supervisors):
        editor.supervisors.entries.setCurrentRow(row)
        form = forms.by_type[supervisor.type]
        qtbot.waitUntil(lambda form=form: forms.stack.currentWidget() is form)
        qtbot.wait(50)  # the layouts settle (they update in posted events)
        # each form fits its pane: no sideways scrolling, nothing cut off
        assert forms.minimumSizeHint().width() <= pane.viewport().width(), supervisor.type
        assert not pane.horizontalScrollBar().isVisible(), supervisor.type
        if supervisor.type == "agent":
            save_screenshot(window, tmp_path, "agent-supervisor-in-window.png")
    editor.supervisors.entries.setCurrentRow(0)
    save_screenshot(window, tmp_path, "supervisors-in-window.png")
    editor.controller.undo_stack.setClean()  # closing asks nothing
