"""Closing an editor tab, or the window, with unsaved edits asks first and loses nothing."""

from __future__ import annotations

import asyncio
from pathlib import Path

from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from foundry.agent.templates import create_agent, new_agent
from foundry.ui.bridge import EngineBridge
from foundry.ui.editor import AgentEditor
from foundry.ui.unsaved import UnsavedQuestion
from foundry.ui.window.main_window import MainWindow


def window_with_edited_agent(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> tuple[MainWindow, AgentEditor, Path]:
    path = tmp_path / "demo"
    create_agent(path, new_agent("Demo", "An agent with unsaved edits"))
    window = MainWindow(bridge)
    qtbot.addWidget(window)
    window.show()
    opening = asyncio.ensure_future(window.edit_agent_at(path))
    qtbot.waitUntil(lambda: opening.done() and isinstance(window.tabs.currentWidget(), AgentEditor))
    editor = window.tabs.currentWidget()
    assert isinstance(editor, AgentEditor)
    editor.settings.max_chat_turns.setValue(17)
    qtbot.waitUntil(lambda: editor.modified)
    return window, editor, path


def question(qtbot: QtBot, window: MainWindow) -> UnsavedQuestion:
    qtbot.waitUntil(lambda: any(q.isVisible() for q in window.findChildren(UnsavedQuestion)))
    return next(q for q in window.findChildren(UnsavedQuestion) if q.isVisible())


def test_closing_an_edited_tab_asks_and_cancel_keeps_it(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    window, editor, path = window_with_edited_agent(qtbot, bridge, tmp_path)
    window.close_tab(window.tabs.indexOf(editor))
    asked = question(qtbot, window)
    assert "Demo has unsaved edits" in asked.text()
    asked.button(QMessageBox.StandardButton.Cancel).click()
    qtbot.wait(50)
    assert window.tabs.indexOf(editor) >= 0 and editor.modified

    window.close_tab(window.tabs.indexOf(editor))
    question(qtbot, window).button(QMessageBox.StandardButton.Discard).click()
    # (the closed editor is deleted: compared by identity, not handed to Qt)
    qtbot.waitUntil(
        lambda: all(window.tabs.widget(i) is not editor for i in range(window.tabs.count()))
    )
    assert '"maxChatTurns": 17' not in (path / "tsagent.json").read_text()


def test_closing_the_window_saves_first_when_asked(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    window, _, path = window_with_edited_agent(qtbot, bridge, tmp_path)
    window.close()
    assert window.isVisible()  # not yet: the question comes first
    question(qtbot, window).button(QMessageBox.StandardButton.Save).click()
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=10000)
    assert '"maxChatTurns": 17' in (path / "tsagent.json").read_text()


def test_saving_before_closing_waits_for_the_save_only(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    _, editor, path = window_with_edited_agent(qtbot, bridge, tmp_path)
    never = asyncio.Event()
    trying_a_tool = editor.controller.spawn(never.wait())  # e.g. a tool being tried, or a server
    saving = asyncio.ensure_future(editor.controller.save_and_wait())
    qtbot.waitUntil(saving.done, timeout=5000)
    assert saving.result() is True and '"maxChatTurns": 17' in (path / "tsagent.json").read_text()
    assert not trying_a_tool.done()
    trying_a_tool.cancel()


def test_closing_the_window_stops_what_its_tabs_run(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    window, editor, _ = window_with_edited_agent(qtbot, bridge, tmp_path)
    starting_a_server = editor.controller.spawn(asyncio.Event().wait())
    showing = asyncio.ensure_future(
        window.task_runs.show("no-such-task", tmp_path / "task.yaml", "Task", "a goal")
    )
    qtbot.waitUntil(showing.done, timeout=5000)
    task = showing.result()
    window.close()
    question(qtbot, window).button(QMessageBox.StandardButton.Discard).click()
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=10000)
    qtbot.waitUntil(starting_a_server.cancelled, timeout=2000)
    assert not window.task_runs.controllers and not task._timer.isActive()
