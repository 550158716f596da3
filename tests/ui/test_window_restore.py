"""A restart finds the window as it was left: its size and place (on a screen that is there) and
its tabs, the chats reopened by session id, the editors by agent file, the shown one shown."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint
from PySide6.QtGui import QGuiApplication
from pytestqt.qtbot import QtBot

from foundry.ui import app as foundry_app
from foundry.ui.bridge import EngineBridge
from foundry.ui.editor import AgentEditor
from foundry.ui.session.view import SessionView
from foundry.ui.settings import foundry_settings
from foundry.ui.window.main_window import MainWindow
from foundry.ui.window.restore import TABS

from ..runtime.conftest import write_agent
from .conftest import save_screenshot

FIRST_MESSAGE = "What time is it in Tokyo?"


def new_window(qtbot: QtBot, bridge: EngineBridge | None = None) -> MainWindow:
    window = MainWindow(bridge)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    return window


def wait_for(qtbot: QtBot, coroutine: object) -> object:
    task = asyncio.ensure_future(coroutine)  # type: ignore[arg-type]
    qtbot.waitUntil(task.done, timeout=30000)
    return task.result()


def test_the_window_opens_at_the_size_and_place_it_was_closed_at(qtbot: QtBot) -> None:
    window = new_window(qtbot)
    window.resize(700, 500)
    window.move(60, 40)
    qtbot.waitUntil(lambda: window.size().width() == 700)
    place = window.pos()
    window.close()

    again = new_window(qtbot)

    assert (again.width(), again.height()) == (700, 500)
    assert again.pos() == place


def test_a_window_left_on_a_screen_that_is_gone_opens_on_the_one_there(qtbot: QtBot) -> None:
    window = new_window(qtbot)
    window.resize(600, 400)
    window.move(9000, 7000)  # where a second monitor was
    window.close()

    again = new_window(qtbot)

    assert QGuiApplication.screenAt(again.frameGeometry().center()) is not None
    assert again.frameGeometry().contains(again.frameGeometry().center())
    assert again.pos() != QPoint(9000, 7000)


def test_a_restart_reopens_the_chats_and_editors_and_shows_the_tab_shown_then(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    agent = write_agent(tmp_path / "helper", {"turns": [{"text": "Noon."}]}, servers={})
    window = new_window(qtbot, bridge)
    wait_for(qtbot, window.open_agent(agent))
    chat = window.controllers[0]
    chat.view.input.setPlainText(FIRST_MESSAGE)
    chat.send()
    qtbot.waitUntil(
        lambda: ("assistant", "Noon.") in [(r.kind, r.text) for r in chat.view.conversation.rows],
        timeout=20000,
    )
    window.edit_agent()
    window.show_inbox()
    editor = window.tabs.widget(1)
    window.tabs.setCurrentWidget(editor)
    session_id = chat.session_id
    window.close()

    again = new_window(qtbot, bridge)
    assert wait_for(qtbot, again.restore_tabs()) == 3

    tabs = again.tabs
    assert isinstance(tabs.widget(0), SessionView) and again.controllers[0].session_id == session_id
    assert tabs.tabText(0) == FIRST_MESSAGE  # the session's title, not "helper (reopened)"
    reopened = tabs.widget(1)
    assert isinstance(reopened, AgentEditor) and reopened.controller.document is not None
    assert reopened.controller.document.path == agent
    assert tabs.widget(2) is again.inbox
    assert tabs.currentWidget() is reopened
    qtbot.waitUntil(lambda: again.agent is not None and again.agent.path == agent)
    assert again.statusBar().currentMessage() == ""  # not "Reopening the session…" left behind
    again.resize(1280, 800)  # the docs' size
    save_screenshot(again, tmp_path, "window-restored.png")
    again.close()


def test_a_saved_session_that_is_gone_is_left_out_and_the_rest_reopen(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    agent = write_agent(tmp_path / "helper", {"turns": [{"text": "Noon."}]}, servers={})
    foundry_settings().setValue(TABS, f'[{{"chat": "no-such-session"}}, {{"editor": "{agent}"}}]')
    window = new_window(qtbot, bridge)

    assert wait_for(qtbot, window.restore_tabs()) == 1

    assert isinstance(window.tabs.widget(0), AgentEditor)
    window.close()


def test_saved_tabs_that_are_not_what_the_window_writes_reopen_nothing(
    qtbot: QtBot, bridge: EngineBridge
) -> None:
    foundry_settings().setValue(TABS, "{not json")
    window = new_window(qtbot, bridge)

    assert wait_for(qtbot, window.restore_tabs()) == 0
    window.close()


def test_the_app_restarted_reopens_the_chat_it_left_instead_of_starting_another(
    qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(foundry_app.gc, "freeze", lambda: None)
    agent = write_agent(tmp_path / "helper", {"turns": [{"text": "Noon."}]}, servers={})
    first = MainWindow()
    qtbot.addWidget(first)
    running = asyncio.ensure_future(foundry_app._main(first, agent))
    qtbot.waitUntil(lambda: len(first.controllers) == 1, timeout=30000)
    session_id = first.controllers[0].session_id
    first.close()
    qtbot.waitUntil(running.done, timeout=30000)

    again = MainWindow()
    qtbot.addWidget(again)
    running = asyncio.ensure_future(foundry_app._main(again, None))
    qtbot.waitUntil(lambda: len(again.controllers) == 1, timeout=30000)
    qtbot.waitUntil(lambda: again.agent is not None, timeout=10000)

    assert again.controllers[0].session_id == session_id  # the same chat, not a new one
    assert again.tabs.count() == 1
    again.close()
    qtbot.waitUntil(running.done, timeout=30000)
    running.result()


def test_a_restart_reopens_a_task_runs_tab_and_says_when_a_run_is_gone(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    from foundry.ui.tasks.view import TaskView

    from ..orchestration.conftest import GREET_CODE, agent, task_file, write

    done = {"text": "Done: greetings.py has `greet`. STATUS: done"}
    agent(
        tmp_path / "agents" / "coder", [{"tool_calls": [write("greetings.py", GREET_CODE)]}, done]
    )
    path = task_file(tmp_path, limits={"interrogationRounds": 0, "stepTimeouts": [20]})
    window = new_window(qtbot, bridge)
    task_id = wait_for(qtbot, window.task_runs.run(path))
    view = window.tabs.currentWidget()
    assert isinstance(view, TaskView)
    qtbot.waitUntil(lambda: view.progress.summary.status == "succeeded", timeout=30000)
    window.close()

    again = new_window(qtbot, bridge)
    assert wait_for(qtbot, again.restore_tabs()) == 1
    assert isinstance(again.tabs.widget(0), TaskView)
    assert again.tabs.tabText(0) == "Task: greeting" and task_id in again.task_runs.controllers
    again.close()

    foundry_settings().setValue(TABS, '[{"task": "no-such-run"}]')
    gone = new_window(qtbot, bridge)
    assert wait_for(qtbot, gone.restore_tabs()) == 0
    assert "no-such-run is no longer stored" in gone.statusBar().currentMessage()
    gone.close()
