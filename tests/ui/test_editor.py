"""The agent editor: rules, supervisors JSON, problems, undo, saving and changes on disk."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QToolButton
from pytestqt.qtbot import QtBot

from foundry.agent.document import read_agent
from foundry.agent.models import IncludeMode
from foundry.agent.templates import create_agent, new_agent
from foundry.ui.bridge import EngineBridge
from foundry.ui.editor import AgentEditor, CreateAgentDialog

from .conftest import save_screenshot

pytestmark = pytest.mark.usefixtures("gui_loop")
CTRL = Qt.KeyboardModifier.ControlModifier
CTRL_SHIFT = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier


def make_agent(path: Path, name: str = "Demo") -> Path:
    create_agent(path, new_agent(name, "An agent for the editor tests"))
    return path


def open_editor(qtbot: QtBot, path: Path, bridge: EngineBridge | None = None) -> AgentEditor:
    editor = AgentEditor(bridge=bridge)
    qtbot.addWidget(editor)
    editor.resize(1280, 800)
    editor.show()
    qtbot.waitExposed(editor)
    editor.activateWindow()
    qtbot.waitUntil(editor.isActiveWindow)  # window shortcuts (Ctrl+S, Ctrl+Z) need it
    editor.load(read_agent(path))
    return editor


def screenshot(editor: AgentEditor, path: Path) -> None:
    assert editor.grab().save(str(path / "editor.png"))  # the test's folder only


def save(qtbot: QtBot, editor: AgentEditor) -> None:
    editor.save_action.trigger()
    qtbot.waitUntil(lambda: not editor.modified, timeout=10000)


def problem_lines(editor: AgentEditor) -> list[str]:
    return editor.problems.model.stringList()


def add_rule(qtbot: QtBot, editor: AgentEditor, name: str, text: str, include: str) -> None:
    rules = editor.rules
    rules.new.click()
    rules.name.selectAll()
    qtbot.keyClicks(rules.name, name)
    qtbot.keyClicks(rules.text.source, text)
    rules.include.setCurrentIndex(rules.include.findData(include))


def test_a_rule_added_in_the_editor_is_saved_in_its_own_file(qtbot: QtBot, tmp_path: Path) -> None:
    path = make_agent(tmp_path / "demo")
    editor = open_editor(qtbot, path)
    editor.show_section("Rules")
    add_rule(qtbot, editor, "be-brief", "Answer in **three** sentences or fewer.", "always")
    add_rule(qtbot, editor, "cite-sources", "Name the reference you used.", "agent")
    editor.rules.priority.setValue(100)
    assert editor.modified and editor.title == "Demo *"
    assert editor.rules.model.rowCount() == 2
    assert editor.rules.model.index(0, 0).data() == "cite-sources"  # lower priority first
    save(qtbot, editor)
    assert editor.title == "Demo"
    rule = read_agent(path).agent.rule("be-brief")  # type: ignore[union-attr]
    assert rule is not None and rule.include is IncludeMode.ALWAYS
    assert rule.text == "Answer in **three** sentences or fewer."
    assert '"name": "be-brief"' in (path / "rules" / "be-brief.mdt").read_text()
    editor.rules.table.selectRow(1)
    assert editor.rules.name.text() == "be-brief"
    qtbot.wait(50)
    save_screenshot(editor, tmp_path, "editor.png")  # and docs/screenshots when asked


def test_ctrl_s_saves_the_system_prompt(qtbot: QtBot, tmp_path: Path) -> None:
    path = make_agent(tmp_path / "prompt")
    editor = open_editor(qtbot, path)
    source = editor.prompt.editor.source
    source.selectAll()
    qtbot.keyClicks(source, "# Helper")
    qtbot.keyClick(source, Qt.Key.Key_Return)
    qtbot.keyClick(source, Qt.Key.Key_Return)
    qtbot.keyClicks(source, "Be *kind*.")
    assert "Helper" in editor.prompt.editor.preview.toPlainText()
    qtbot.keyClick(source, Qt.Key.Key_S, CTRL)
    qtbot.waitUntil(lambda: not editor.modified, timeout=10000)
    assert (path / "prompt.md").read_text() == "# Helper\n\nBe *kind*."
    screenshot(editor, tmp_path)


def test_supervisors_json_problems_show_with_their_line_and_clear_when_fixed(
    qtbot: QtBot, tmp_path: Path
) -> None:
    path = make_agent(tmp_path / "sup")
    editor = open_editor(qtbot, path)
    editor.show_section("Supervisors")
    text = editor.supervisors.json
    text.setPlainText('[\n  {"type": "guardian", "id": "g"},\n  {"type": "bogus", "id": "x"}\n]')
    qtbot.waitUntil(lambda: any("bogus" in line for line in problem_lines(editor)))
    bogus = next(line for line in problem_lines(editor) if "bogus" in line)
    # the line is the JSON box's, and the panel says so (it is not line 3 of tsagent.json)
    assert bogus.startswith("Supervisors page, JSON: line 3: supervisors[1]: unknown type 'bogus'")
    assert editor.supervisors.problems_model.stringList()[0].startswith("line 3:")
    assert editor.problems.list.isVisible() and editor.problems.list.height() > 60
    editor.show_section("Agent")
    row = problem_lines(editor).index(bogus)
    editor.problems.list.activated.emit(editor.problems.model.index(row))
    assert editor.pages.currentWidget() is editor.supervisors
    assert text.textCursor().blockNumber() == 2 and text.hasFocus()
    assert len(text.extraSelections()) == 1
    text.setPlainText('[{"type": }]')
    qtbot.waitUntil(lambda: any("not valid JSON" in line for line in problem_lines(editor)))
    assert "line 1, column 11" in editor.supervisors.problems_model.stringList()[0]
    screenshot(editor, tmp_path)
    text.setPlainText('[{"type": "guardian", "id": "g", "config": {"blockKeywords": ["x"]}}]')
    qtbot.waitUntil(lambda: problem_lines(editor) == [])
    assert not editor.problems.list.isVisible()  # the pages get the room back
    assert editor.problems.height() == editor.problems.title.sizeHint().height()
    assert text.extraSelections() == []
    assert editor.controller.working is not None
    assert [entry.id for entry in editor.controller.working.supervisors] == ["g"]
    save(qtbot, editor)
    saved = read_agent(path).agent
    assert saved is not None and saved.supervisors[0].type == "guardian"


def test_open_supervisor_agent_asks_for_the_path_of_the_entry_under_the_cursor(
    qtbot: QtBot, tmp_path: Path
) -> None:
    make_agent(tmp_path / "watcher", "Watcher")
    path = make_agent(tmp_path / "worker", "Worker")
    editor = open_editor(qtbot, path)
    editor.show_section("Supervisors")
    entry = '[{"type": "agent", "id": "w", "config": {"agentPath": "../watcher"}}]'
    editor.supervisors.json.setPlainText(entry)
    qtbot.waitUntil(lambda: editor.supervisors.entries.item(0).text() == "w (agent)")
    with qtbot.waitSignal(editor.open_agent_requested) as signal:
        editor.supervisors.open_agent.click()
    assert signal.args == [(tmp_path / "watcher").resolve()]
    screenshot(editor, tmp_path)


def test_undo_and_redo_of_a_settings_change(qtbot: QtBot, tmp_path: Path) -> None:
    path = make_agent(tmp_path / "undo")
    editor = open_editor(qtbot, path)
    editor.show_section("Settings")
    changes: list[bool] = []
    editor.modified_changed.connect(changes.append)
    editor.settings.temperature.setValue(0.9)
    assert editor.modified and editor.title.endswith(" *")
    editor.undo_action.trigger()
    assert editor.settings.temperature.value() == pytest.approx(0.5)
    assert not editor.modified and editor.title == "Demo"
    editor.redo_action.trigger()
    assert editor.settings.temperature.value() == pytest.approx(0.9)
    assert editor.controller.working is not None
    assert editor.controller.working.settings.temperature == pytest.approx(0.9)
    assert changes == [True, False, True]
    model = editor.settings.model
    model.setFocus()
    qtbot.keyClicks(model, "ollama:qwen2.5")  # typing in one field is one undo step
    assert editor.controller.working.settings.model == "ollama:qwen2.5"
    qtbot.keyClick(model, Qt.Key.Key_Z, CTRL)
    assert model.text() == "" and editor.controller.working.settings.model is None
    qtbot.keyClick(model, Qt.Key.Key_Z, CTRL_SHIFT)
    assert model.text() == "ollama:qwen2.5"
    screenshot(editor, tmp_path)


def test_an_invalid_value_is_listed_and_not_applied(qtbot: QtBot, tmp_path: Path) -> None:
    path = make_agent(tmp_path / "bad")
    editor = open_editor(qtbot, path)
    editor.show_section("Settings")
    qtbot.keyClicks(editor.settings.model, "no-colon")
    qtbot.waitUntil(lambda: any("provider:model" in line for line in problem_lines(editor)))
    assert editor.controller.working is not None
    assert editor.controller.working.settings.model is None
    screenshot(editor, tmp_path)


def test_a_change_on_disk_reloads_when_nothing_is_unsaved(qtbot: QtBot, tmp_path: Path) -> None:
    path = make_agent(tmp_path / "disk")
    editor = open_editor(qtbot, path)
    (path / "prompt.md").write_text("Written by another program.")
    qtbot.waitUntil(
        lambda: editor.prompt.editor.source.toPlainText() == "Written by another program.",
        timeout=10000,
    )
    assert not editor.modified and not editor.disk_bar.isVisible()
    screenshot(editor, tmp_path)


def test_a_closed_editor_no_longer_watches_its_files_or_checks_them(
    qtbot: QtBot, tmp_path: Path
) -> None:
    path = make_agent(tmp_path / "closed")
    editor = open_editor(qtbot, path)
    editor.close()
    with qtbot.assertNotEmitted(editor.controller.disk.changed, wait=1000):
        (path / "prompt.md").write_text("Written after the editor closed.")
    assert not editor.controller._check_timer.isActive()


def test_a_change_on_disk_with_unsaved_edits_asks_first(qtbot: QtBot, tmp_path: Path) -> None:
    path = make_agent(tmp_path / "ask")
    editor = open_editor(qtbot, path)
    editor.settings.max_chat_turns.setValue(7)
    (path / "prompt.md").write_text("Changed elsewhere.")
    qtbot.waitUntil(editor.disk_bar.isVisible, timeout=10000)
    assert editor.controller.working is not None
    assert editor.controller.working.settings.max_chat_turns == 7
    screenshot(editor, tmp_path)
    editor.disk_bar.reload.click()
    qtbot.waitUntil(lambda: editor.prompt.editor.source.toPlainText() == "Changed elsewhere.")
    assert editor.settings.max_chat_turns.value() == 20 and not editor.modified


@pytest.mark.parametrize(
    ("broken", "said"),
    [
        ('{"metadata": {"name": "Demo"', "tsagent.json:1:29: invalid JSON"),
        ('{"metadata": {"name": "Demo"}, "settings": "fast"}', "tsagent.json: settings: must be"),
    ],
    ids=["not-json", "a-field"],
)
def test_a_broken_file_on_disk_keeps_the_agent_shown_and_says_what_is_wrong(
    qtbot: QtBot, tmp_path: Path, broken: str, said: str
) -> None:
    path = make_agent(tmp_path / "fragile")
    editor = open_editor(qtbot, path)
    prompt = editor.prompt.editor.source.toPlainText()
    good = (path / "tsagent.json").read_text()
    (path / "tsagent.json").write_text(broken)  # no unsaved edits in the editor

    qtbot.waitUntil(editor.disk_bar.isVisible, timeout=10000)
    assert said in editor.disk_bar.text.text() and not editor.disk_bar.reload.isVisible()
    assert (
        editor.status.text().startswith("Not reloaded") and "Reloaded" not in editor.status.text()
    )
    qtbot.waitUntil(lambda: any(line.startswith(said) for line in problem_lines(editor)))
    assert editor.pages.isEnabled() and editor.prompt.editor.source.toPlainText() == prompt
    assert editor.metadata.name.text() == "Demo" and not editor.modified
    editor.resize(1280, 800)
    assert editor.grab().save(str(tmp_path / "broken-1280.png"))
    editor.resize(1440, 900)
    assert editor.grab().save(str(tmp_path / "broken-1440.png"))
    editor.save_action.trigger()  # nothing edited: writing would replace the broken file
    qtbot.waitUntil(lambda: editor.status.text().startswith("Not saved"))
    qtbot.wait(300)
    assert (path / "tsagent.json").read_text() == broken

    (path / "tsagent.json").write_text(good)  # mended: the bar and the problem go
    qtbot.waitUntil(lambda: not editor.disk_bar.isVisible(), timeout=10000)
    qtbot.waitUntil(lambda: not any(line.startswith(said) for line in problem_lines(editor)))
    assert editor.pages.isEnabled() and not editor.modified


def test_reload_over_a_broken_file_keeps_the_edits_shown(qtbot: QtBot, tmp_path: Path) -> None:
    path = make_agent(tmp_path / "fragile")
    editor = open_editor(qtbot, path)
    editor.settings.max_chat_turns.setValue(7)  # an unsaved edit
    (path / "tsagent.json").write_text("{")
    qtbot.waitUntil(editor.disk_bar.isVisible, timeout=10000)
    editor.disk_bar.reload.click()  # drop my edits for what is on disk: it cannot be read
    qtbot.waitUntil(lambda: editor.status.text().startswith("Not reloaded"))
    assert "invalid JSON" in editor.disk_bar.text.text()
    assert editor.pages.isEnabled() and editor.settings.max_chat_turns.value() == 7
    assert (path / "tsagent.json").read_text() == "{"


def test_an_agent_deleted_on_disk_stays_shown_and_is_said_to_be_gone(
    qtbot: QtBot, tmp_path: Path
) -> None:
    path = make_agent(tmp_path / "doomed")
    editor = open_editor(qtbot, path)
    editor.settings.max_chat_turns.setValue(7)  # an unsaved edit
    prompt = editor.prompt.editor.source.toPlainText()
    shutil.copytree(path, tmp_path / "copy")
    shutil.rmtree(path)

    qtbot.waitUntil(editor.disk_bar.isVisible, timeout=10000)
    assert "deleted" in editor.disk_bar.text.text() and str(path) in editor.disk_bar.text.text()
    assert not editor.disk_bar.reload.isVisible()  # nothing to reload: it would empty the editor
    assert editor.pages.isEnabled() and editor.prompt.editor.source.toPlainText() == prompt
    assert editor.settings.max_chat_turns.value() == 7 and editor.modified
    screenshot(editor, tmp_path)
    editor.save_action.trigger()  # refused, said so: nothing is there to write into
    qtbot.waitUntil(lambda: editor.status.text().startswith("Not saved"))
    assert "deleted" in editor.status.text() and editor.modified and not path.exists()
    assert editor.pages.isEnabled() and editor.settings.max_chat_turns.value() == 7

    shutil.copytree(tmp_path / "copy", path)  # back as it was: the bar goes, the edit stays
    qtbot.waitUntil(lambda: not editor.disk_bar.isVisible(), timeout=10000)
    assert editor.settings.max_chat_turns.value() == 7 and editor.modified


def test_the_new_agent_dialog_creates_an_agent_folder(qtbot: QtBot, tmp_path: Path) -> None:
    dialog = CreateAgentDialog(folder=tmp_path)
    qtbot.addWidget(dialog)
    dialog.open()
    qtbot.keyClicks(dialog.name, "Helper Bot")
    with qtbot.waitSignal(dialog.created, timeout=10000) as signal:
        dialog.submit()
    document = signal.args[0]
    assert document.path == tmp_path / "helper-bot"
    assert document.agent is not None and document.agent.metadata.name == "Helper Bot"
    assert [entry.type for entry in document.agent.supervisors] == ["policy"]
    assert not dialog.isVisible()
    editor = open_editor(qtbot, document.path)
    screenshot(editor, tmp_path)


def test_the_new_agent_dialog_can_leave_the_policy_out(qtbot: QtBot, tmp_path: Path) -> None:
    dialog = CreateAgentDialog(folder=tmp_path)
    qtbot.addWidget(dialog)
    dialog.open()
    qtbot.keyClicks(dialog.name, "Bare")
    dialog.policy.setChecked(False)
    with qtbot.waitSignal(dialog.created, timeout=10000) as signal:
        dialog.submit()
    assert signal.args[0].agent.supervisors == []


def test_a_very_long_agent_name_is_shortened_and_never_widens_the_editor(
    qtbot: QtBot, tmp_path: Path
) -> None:
    long_name = "A" + "very-long-name-" * 22  # 331 characters
    path = make_agent(tmp_path / "long", long_name)
    editor = open_editor(qtbot, path)
    assert editor.minimumSizeHint().width() < 1000
    assert editor.width() == 1280
    heading = editor.heading
    assert heading.full_text() == long_name and heading.text().endswith("…")
    assert heading.toolTip() == long_name
    assert editor.save_action.isEnabled()
    button = next(
        b for b in editor.findChildren(QToolButton) if b.defaultAction() is editor.save_action
    )
    assert button.geometry().right() <= editor.width()


def test_an_invalid_rule_name_stays_flagged_while_the_rule_text_is_edited(
    qtbot: QtBot, tmp_path: Path
) -> None:
    path = make_agent(tmp_path / "rule-name")
    editor = open_editor(qtbot, path)
    editor.show_section("Rules")
    add_rule(qtbot, editor, "has space", "Be brief.", "always")
    assert editor.rules.name.text() == "has space"
    assert "border" in editor.rules.name.styleSheet()
    assert editor.modified
    editor.save_action.trigger()
    assert editor.status.text().startswith("Not saved: rules[0].name")
    editor.rules.name.selectAll()
    qtbot.keyClicks(editor.rules.name, "be-brief")
    assert editor.rules.name.styleSheet() == ""
    save(qtbot, editor)
    assert (path / "rules" / "be-brief.mdt").exists()
