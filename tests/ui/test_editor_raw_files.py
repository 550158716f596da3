"""The editor's Files page: an agent whose files cannot be read opens there, at the problem's
line, and is repaired as text, saved with the same checks and safety as any save."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from foundry.agent.document import read_agent
from foundry.ui.editor import AgentEditor

from .conftest import save_screenshot
from .test_editor import open_editor

pytestmark = pytest.mark.usefixtures("gui_loop")
SAMPLE = Path(__file__).resolve().parents[2] / "agents" / "assistant"
CTRL = Qt.KeyboardModifier.ControlModifier


def broken_sample(agents: Path) -> tuple[Path, str]:
    """The copy of the sample assistant whose tsagent.json has a comma too many on line 10."""
    path = agents / "assistant"
    config = path / "tsagent.json"
    good = config.read_text()
    lines = good.splitlines(keepends=True)
    assert lines[9].strip() == '"maxChatTurns": 10,'
    lines[9] = lines[9].replace(",", ",,")
    config.write_text("".join(lines))
    return path, good


def files_page(editor: AgentEditor) -> bool:
    return editor.sections.currentItem().text() == "Files"


def shown_text(editor: AgentEditor) -> str:
    return editor.raw_files.text.toPlainText()


def test_a_broken_agent_opens_on_its_file_at_the_problem_and_is_repaired_there(
    qtbot: QtBot, tmp_path: Path, sample_agents: Path
) -> None:
    path, good = broken_sample(sample_agents)
    editor = open_editor(qtbot, path)
    page = editor.raw_files
    qtbot.waitUntil(lambda: shown_text(editor) != "", timeout=10000)

    assert files_page(editor) and page.file.currentText() == "tsagent.json"
    assert page.text.marked_lines() == [10]
    assert page.text.textCursor().blockNumber() == 9
    assert page.problem.text().startswith("line 10: invalid JSON: Expecting property name")
    assert page.problem.text().endswith("Fix it here, then save the file (Ctrl+S).")
    agent_item = editor.sections.item(0)
    assert not agent_item.flags() & Qt.ItemFlag.ItemIsEnabled
    assert "Files page" in agent_item.toolTip()
    assert page.isEnabled() and not page.text.isReadOnly()
    save_screenshot(editor, tmp_path, "editor-broken-agent-files.png")

    cursor = page.text.textCursor()  # the comma too many goes, as a person would remove it
    cursor.movePosition(cursor.MoveOperation.EndOfBlock)
    cursor.deletePreviousChar()
    page.text.setTextCursor(cursor)
    saved: list[Path] = []
    editor.saved.connect(saved.append)
    qtbot.keyClick(page.text, Qt.Key.Key_S, CTRL)

    qtbot.waitUntil(lambda: saved == [path], timeout=15000)
    assert (path / "tsagent.json").read_text() == good
    assert page.outcome.text() == "Saved tsagent.json: the agent can be used."
    assert editor.metadata.name.text() == "Supervised Assistant"
    assert agent_item.flags() & Qt.ItemFlag.ItemIsEnabled and editor.metadata.isEnabled()
    qtbot.waitUntil(lambda: page.text.marked_lines() == [], timeout=10000)
    qtbot.waitUntil(lambda: editor.problems.model.stringList() == [], timeout=10000)
    save_screenshot(editor, tmp_path, "editor-broken-agent-repaired.png")


def test_a_text_that_still_does_not_parse_is_not_saved_and_is_kept(
    qtbot: QtBot, tmp_path: Path, sample_agents: Path
) -> None:
    path, _ = broken_sample(sample_agents)
    before = (path / "tsagent.json").read_text()
    editor = open_editor(qtbot, path)
    page = editor.raw_files
    qtbot.waitUntil(lambda: shown_text(editor) != "", timeout=10000)
    text = shown_text(editor).replace('"version"', "version", 1)
    page.text.selectAll()
    page.text.insertPlainText(text)  # typed: the text is modified
    page.save.click()

    qtbot.waitUntil(lambda: page.problem.text().startswith("Not saved: line 5"), timeout=15000)
    assert page.text.marked_lines() == [5]
    assert "version" in shown_text(editor) and page.outcome.text().startswith("Not saved.")
    assert (path / "tsagent.json").read_text() == before


def test_the_text_is_read_only_while_the_form_has_edits_not_saved(
    qtbot: QtBot, sample_agents: Path
) -> None:
    path = sample_agents / "assistant"  # with its supervisors' agents: it can be saved
    editor = open_editor(qtbot, path)
    page = editor.raw_files
    qtbot.waitUntil(lambda: shown_text(editor) != "", timeout=10000)
    assert not files_page(editor)  # a usable agent opens on its form
    editor.settings.max_chat_turns.setValue(7)
    assert page.text.isReadOnly()
    assert page.problem.text().startswith("The form has edits not saved")
    editor.undo_action.trigger()
    qtbot.waitUntil(lambda: not page.text.isReadOnly())

    editor.settings.max_chat_turns.setValue(8)  # Ctrl+S in the read-only text saves the form
    editor.show_section("Files")
    page.text.setFocus()
    qtbot.keyClick(page.text, Qt.Key.Key_S, CTRL)
    qtbot.waitUntil(lambda: not editor.modified, timeout=15000)
    assert '"maxChatTurns": 8' in (path / "tsagent.json").read_text()
    qtbot.waitUntil(lambda: '"maxChatTurns": 8' in shown_text(editor), timeout=10000)


def test_the_files_page_follows_a_repair_made_on_disk(qtbot: QtBot, sample_agents: Path) -> None:
    path, good = broken_sample(sample_agents)
    editor = open_editor(qtbot, path)
    page = editor.raw_files
    qtbot.waitUntil(lambda: page.text.marked_lines() == [10], timeout=10000)
    (path / "tsagent.json").write_text(good)
    qtbot.waitUntil(lambda: page.text.marked_lines() == [], timeout=15000)
    qtbot.waitUntil(lambda: editor.metadata.name.text() == "Supervised Assistant", timeout=15000)
    assert shown_text(editor) == good
    assert read_agent(path).agent is not None


def test_a_file_broken_on_disk_while_shown_keeps_the_form_and_is_fixed_on_the_files_page(
    qtbot: QtBot, tmp_path: Path
) -> None:
    path = tmp_path / "assistant"
    shutil.copytree(SAMPLE, path)
    good = (path / "tsagent.json").read_text()
    editor = open_editor(qtbot, path)
    page = editor.raw_files
    qtbot.waitUntil(lambda: shown_text(editor) != "", timeout=10000)
    (path / "tsagent.json").write_text(good.replace('"maxChatTurns": 10,', '"maxChatTurns": 10,,'))

    qtbot.waitUntil(lambda: page.text.marked_lines() == [10], timeout=15000)
    assert not files_page(editor) and editor.metadata.isEnabled()  # the form as last read
    assert editor.metadata.name.text() == "Supervised Assistant"
    editor.show_section("Files")
    page.text.selectAll()
    page.text.insertPlainText(good)
    page.save.click()
    qtbot.waitUntil(lambda: page.outcome.text().startswith("Saved tsagent.json"), timeout=15000)
    assert (path / "tsagent.json").read_text() == good
    qtbot.waitUntil(lambda: not editor.disk_bar.isVisible(), timeout=10000)


def test_a_syntax_problem_double_clicked_in_the_problems_panel_goes_to_its_line(
    qtbot: QtBot, sample_agents: Path
) -> None:
    path, _ = broken_sample(sample_agents)
    rule = path / "rules" / "broken.mdt"
    rule.write_text("---\nname: [broken\n---\nText.\n")  # a rule whose header does not parse
    (path / "tsagent.json").write_text((path / "tsagent.json").read_text().replace(",,", ","))
    editor = open_editor(qtbot, path)
    page = editor.raw_files
    qtbot.waitUntil(
        lambda: any("broken.mdt" in line for line in editor.problems.model.stringList()),
        timeout=10000,
    )
    assert not files_page(editor)  # the agent can be used: its form shows
    [shown] = [p for p in editor.problems.problems if "broken.mdt" in p.text]
    editor.problems.activated.emit(shown)
    qtbot.waitUntil(lambda: page.file.currentText() == "rules/broken.mdt", timeout=10000)
    [problem] = [p for p in read_agent(path).problems if p.file == rule]
    assert problem.line is not None
    qtbot.waitUntil(lambda: files_page(editor), timeout=10000)  # the page follows the file
    qtbot.waitUntil(lambda: page.text.marked_lines() == [problem.line], timeout=10000)
