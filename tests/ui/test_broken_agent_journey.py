"""A broken agent, fixed in the app or on disk, can be used at once; New Chat never does nothing:
it starts a chat or says why not."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from foundry.ui.bridge import EngineBridge
from foundry.ui.editor import AgentEditor
from foundry.ui.session.view import SessionView
from foundry.ui.window.main_window import MainWindow

from ..runtime.conftest import write_agent
from .conftest import save_screenshot, shown_main_window

pytestmark = pytest.mark.usefixtures("gui_loop")
TURNS = {"turns": [{"text": "Hello."}]}
CTRL = Qt.KeyboardModifier.ControlModifier


def broken_agent(path: Path) -> tuple[Path, str]:
    """An agent whose tsagent.json has a comma too many; its good text."""
    write_agent(path, TURNS, servers={})
    config = path / "tsagent.json"
    good = config.read_text()
    config.write_text(good.replace('"metadata":', '"metadata":,', 1))
    return path, good


def opened(qtbot: QtBot, window: MainWindow, path: Path) -> None:
    opening = asyncio.ensure_future(window.open_agent(path))
    qtbot.waitUntil(opening.done, timeout=20000)


def chat_tabs(window: MainWindow) -> int:
    tabs = window.tabs
    return sum(isinstance(tabs.widget(i), SessionView) for i in range(tabs.count()))


def status(window: MainWindow) -> str:
    return window.statusBar().currentMessage()


def test_new_chat_without_an_agent_says_to_open_one(qtbot: QtBot, bridge: EngineBridge) -> None:
    window = shown_main_window(qtbot, bridge, (1280, 800))
    window.new_chat()
    assert status(window) == "New Chat needs an agent: open one first (Ctrl+O)."


def test_new_chat_with_a_broken_agent_says_why_and_starts_once_it_is_repaired_on_disk(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    path, good = broken_agent(tmp_path / "worker")
    window = shown_main_window(qtbot, bridge, (1280, 800))
    opened(qtbot, window, path)
    assert window.agent is None and window.broken_agent == path

    window.statusBar().clearMessage()
    window.new_chat()
    qtbot.waitUntil(lambda: status(window).startswith("No chat started"), timeout=20000)
    assert status(window) == (
        "No chat started: worker cannot be used (1 problem, in the Agent panel). Fix it in the "
        "editor (Ctrl+E)."
    )
    assert "invalid JSON" in window.agent_panel.text()
    assert chat_tabs(window) == 0

    (path / "tsagent.json").write_text(good)  # repaired with another program
    window.new_chat()
    qtbot.waitUntil(lambda: chat_tabs(window) == 1, timeout=30000)
    assert window.agent is not None and window.agent.path == path


def test_a_broken_agent_repaired_in_the_editor_is_the_current_agent_at_once(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    path, good = broken_agent(tmp_path / "worker")
    window = shown_main_window(qtbot, bridge, (1440, 900))
    opened(qtbot, window, path)
    window.edit_agent()  # Ctrl+E, as the Agent panel's link offers
    qtbot.waitUntil(lambda: isinstance(window.tabs.currentWidget(), AgentEditor), timeout=10000)
    editor = window.tabs.currentWidget()
    assert isinstance(editor, AgentEditor)
    page = editor.raw_files
    qtbot.waitUntil(lambda: page.text.marked_lines() == [1], timeout=10000)
    save_screenshot(window, tmp_path, "broken-agent-in-the-window.png")

    page.text.selectAll()
    page.text.insertPlainText(good)
    qtbot.keyClick(page.text, Qt.Key.Key_S, CTRL)
    qtbot.waitUntil(lambda: window.agent is not None, timeout=20000)

    assert window.agent is not None and window.agent.path == path
    assert window.broken_agent is None
    assert (
        "worker" in window.agent_panel.text() and "cannot be used" not in window.agent_panel.text()
    )
    assert status(window) == "worker can be used now: New Chat (Ctrl+N) starts a chat with it."
    window.new_chat()
    qtbot.waitUntil(lambda: chat_tabs(window) == 1, timeout=30000)
