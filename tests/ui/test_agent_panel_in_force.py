"""The Agent panel shows the agent as saved, and the tool servers of the chat shown that failed."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot

from foundry.ui.bridge import EngineBridge
from foundry.ui.editor import AgentEditor

from ..runtime.conftest import TIME_SERVER, write_agent
from .conftest import save_screenshot
from .test_editor import add_rule
from .test_session_window import open_window

RULES = {"be-brief": "always", "be-kind": "always", "cite": "manual"}


def test_the_agent_panel_follows_a_save_in_the_editor_for_its_chats_too(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    agent = write_agent(tmp_path / "ruled", {"turns": [{"text": "Hi."}]}, servers={}, rules=RULES)
    window, chat = open_window(qtbot, bridge, agent)
    assert "<b>Rules:</b> 3" in window.dock.panel.text()
    window.edit_agent()
    editor = window.tabs.currentWidget()
    assert isinstance(editor, AgentEditor)
    editor.show_section("Rules")
    add_rule(qtbot, editor, "say-thanks", "Thank the user.", "always")
    editor.controller.save()
    qtbot.waitUntil(lambda: "<b>Rules:</b> 4" in window.dock.panel.text(), timeout=20000)

    window.tabs.setCurrentWidget(chat)  # the chat's tab stands for the agent as saved too
    assert "<b>Rules:</b> 4" in window.dock.panel.text()
    window.resize(1280, 800)
    save_screenshot(window, tmp_path, "agent-panel-after-save.png")


def test_the_agent_panel_names_the_chats_tool_servers_that_failed(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    missing = dict(TIME_SERVER, command="foundry-no-such-command")
    agent = write_agent(
        tmp_path / "broken", {"turns": [{"text": "Hi."}]}, servers={"time": missing}
    )
    window, _ = open_window(qtbot, bridge, agent)
    qtbot.waitUntil(lambda: "did not start" in window.dock.panel.text(), timeout=20000)
    assert "foundry-no-such-command" in window.dock.panel.text()
    save_screenshot(window, tmp_path, "agent-panel-server-failed.png")


def test_the_agent_panel_follows_a_change_made_by_another_program(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    agent = write_agent(tmp_path / "outside", {"turns": [{"text": "Hi."}]}, servers={}, rules=RULES)
    window, chat = open_window(qtbot, bridge, agent)
    assert "<b>Rules:</b> 3" in window.dock.panel.text()
    (agent / "rules" / "say-thanks.mdt").write_text(
        '---\n{"name": "say-thanks", "include": "always"}---\nThank the user.\n'
    )  # written by a text editor while the chat is open
    qtbot.waitUntil(lambda: "<b>Rules:</b> 4" in window.dock.panel.text(), timeout=20000)
    assert chat.agent_bar.isVisible() and "saved rules" in chat.agent_bar.text.text()
