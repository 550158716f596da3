"""The editor's status line says where the save stands now, and a save refuses what `foundry
validate` refuses, with its message, keeping what was typed."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QComboBox, QWidget
from pytestqt.qtbot import QtBot

from foundry.agent.checks import validate_agent
from foundry.agent.document import read_agent, save_agent
from foundry.ui.editor import AgentEditor

from .conftest import save_screenshot
from .test_editor import make_agent, open_editor, save

pytestmark = pytest.mark.usefixtures("gui_loop")
CTRL = Qt.KeyboardModifier.ControlModifier


def rule_row(editor: AgentEditor, name: str) -> int:
    config = editor.controller.policy.config
    assert config is not None
    return [rule.name for rule in config.rules].index(name)


def supervisor_path(editor: AgentEditor, path: str) -> None:
    """Point the policy's L1 supervisor at `path` in the supervisors' JSON, as typed."""
    entries = json.loads(editor.supervisors.json.toPlainText())
    entries[0]["config"]["supervisorAgentPath"] = path
    editor.supervisors.json.setPlainText(json.dumps(entries, indent=2))


def test_a_save_refuses_a_supervisor_agent_that_is_not_there_as_validate_does(
    qtbot: QtBot, tmp_path: Path
) -> None:
    path = make_agent(tmp_path / "agent")
    before = (path / "tsagent.json").read_text()
    editor = open_editor(qtbot, path)
    editor.show_section("Supervisors")
    supervisor_path(editor, "../gone")
    qtbot.waitUntil(lambda: editor.modified)
    editor.save_action.trigger()
    qtbot.waitUntil(lambda: editor.status.text().startswith("Not saved: "), timeout=10000)
    qtbot.wait(200)  # (a save that went on would have written by now)

    assert (path / "tsagent.json").read_text() == before
    assert "no agent at '../gone'" in editor.status.text()
    assert "Everything you typed is kept" in editor.status.text()
    assert '"../gone"' in editor.supervisors.json.toPlainText() and editor.modified
    save_screenshot(editor, tmp_path, "editor-refused-save.png")
    # what validate says of the same agent written to disk is what the save said
    write_with_gone_supervisor(path)
    [problem] = validate_agent(path)
    assert f"{problem.field}: {problem.message}" in editor.status.text()


def write_with_gone_supervisor(path: Path) -> None:
    """Write the agent with its policy's supervisor agent at ../gone, as a script might."""
    document = read_agent(path)
    assert document.agent is not None
    agent = document.agent.model_copy(deep=True)
    agent.supervisors[0].config.supervisor_agent_path = "../gone"  # type: ignore[union-attr]
    save_agent(replace(document, agent=agent))


def test_the_refusal_goes_once_the_problem_is_fixed_and_the_save_then_says_saved(
    qtbot: QtBot, tmp_path: Path
) -> None:
    path = make_agent(tmp_path / "fixed")
    editor = open_editor(qtbot, path)
    editor.show_section("Supervisors")
    supervisor_path(editor, "../gone")
    editor.save_action.trigger()
    qtbot.waitUntil(lambda: editor.status.text().startswith("Not saved: "), timeout=10000)

    supervisor_path(editor, "")
    qtbot.waitUntil(lambda: not editor.status.text().startswith("Not saved"), timeout=10000)
    assert "Ctrl+S" in editor.status.text()
    save(qtbot, editor)
    assert editor.status.text() == f"Saved to {path}"
    editor.show_section("Settings")
    editor.settings.max_chat_turns.setValue(9)  # edited since: the line no longer says saved
    assert not editor.status.text().startswith("Saved")
    editor.undo_action.trigger()
    assert editor.status.text() == f"Saved to {path}"


def open_cell_editor(qtbot: QtBot, editor: AgentEditor, row: int, column: int) -> QWidget:
    table = editor.policy.rules
    index = editor.policy.rules_model.index(row, column)
    table.setCurrentIndex(index)
    table.edit(index)
    qtbot.waitUntil(lambda: QApplication.focusWidget() is not table)
    focused = QApplication.focusWidget()
    assert focused is not None
    return focused


def test_ctrl_s_while_a_policy_cell_is_being_edited_saves_what_the_cell_holds(
    qtbot: QtBot, tmp_path: Path
) -> None:
    path = make_agent(tmp_path / "cell")
    editor = open_editor(qtbot, path)
    editor.show_section("Policy")
    row = rule_row(editor, "current-time-is-routine")
    cell = open_cell_editor(qtbot, editor, row, 3)
    qtbot.keyClick(cell, Qt.Key.Key_A, CTRL)
    qtbot.keyClicks(cell, "clock.now")
    qtbot.keyClick(cell, Qt.Key.Key_S, CTRL)
    qtbot.waitUntil(lambda: editor.status.text().startswith("Saved to"), timeout=10000)
    saved = read_agent(path).agent
    assert saved is not None
    assert saved.supervisors[0].config.rules[row].tool == "clock.now"  # type: ignore[union-attr]
    assert not editor.modified


def test_ctrl_s_while_an_action_is_being_chosen_saves_the_choice(
    qtbot: QtBot, tmp_path: Path
) -> None:
    path = make_agent(tmp_path / "choice")
    editor = open_editor(qtbot, path)
    editor.show_section("Policy")
    row = rule_row(editor, "current-time-is-routine")
    cell = open_cell_editor(qtbot, editor, row, 5)
    assert isinstance(cell, QComboBox)
    cell.setCurrentText("human")
    qtbot.keyClick(cell, Qt.Key.Key_S, CTRL)
    qtbot.waitUntil(lambda: editor.status.text().startswith("Saved to"), timeout=10000)
    saved = read_agent(path).agent
    assert saved is not None
    assert saved.supervisors[0].config.rules[row].action == "human"  # type: ignore[union-attr]
