"""From the inbox to a rule: an approval's call becomes a policy rule, open for review."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from foundry.ui.bridge import EngineBridge
from foundry.ui.editor import AgentEditor
from foundry.ui.session.view import SessionView

from .conftest import save_screenshot, shown_main_window
from .test_inbox import CTRL_SHIFT, asking_agent, key

pytestmark = pytest.mark.usefixtures("gui_loop")


def test_make_a_rule_from_an_approval_opens_the_policy_with_the_rule_above_the_one_that_asked(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    window = shown_main_window(qtbot, bridge, (1360, 860))
    agent = asking_agent(tmp_path / "asker")
    before = (agent / "tsagent.json").read_text()
    opening = asyncio.ensure_future(window.open_agent(agent))
    qtbot.waitUntil(opening.done, timeout=20000)
    session = window.tabs.currentWidget()
    assert isinstance(session, SessionView)
    session.input.setPlainText("What time is it in Tokyo?")
    window.controllers[0].send()
    qtbot.waitUntil(lambda: window.inbox_controller.pending_count == 1, timeout=20000)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    qtbot.keyClick(window, Qt.Key.Key_I, CTRL_SHIFT)
    qtbot.waitUntil(lambda: window.inbox.detail.record is not None)
    key(qtbot, window.inbox, Qt.Key.Key_R)
    qtbot.waitUntil(lambda: isinstance(window.tabs.currentWidget(), AgentEditor), timeout=10000)
    editor = window.tabs.currentWidget()
    assert isinstance(editor, AgentEditor)
    assert editor.pages.currentWidget() is editor.policy
    qtbot.waitUntil(lambda: "was made from the approval" in editor.policy.try_panel.verdict.text())
    config = editor.controller.policy.config
    assert config is not None
    assert [rule.name for rule in config.rules] == ["allow-time-get_current_time", "ask-for-time"]
    rule = config.rules[0]
    assert (rule.agent, rule.tool, rule.action, rule.when) == (
        "asker",
        "time.get_current_time",
        "allow",
        None,
    )
    assert editor.modified and (agent / "tsagent.json").read_text() == before  # not saved
    summary = editor.policy.try_panel.replay_summary
    qtbot.waitUntil(lambda: bool(summary.text()) and "…" not in summary.text(), timeout=10000)
    editor.policy.try_panel.try_tool.setText("time.get_current_time")
    editor.policy.try_panel.try_params.setPlainText('{"timezone": "Asia/Tokyo"}')
    editor.policy.try_panel.decide.click()
    qtbot.waitUntil(lambda: "decided in" in editor.policy.try_panel.verdict.text(), timeout=10000)
    verdict = editor.policy.try_panel.verdict.text()
    assert verdict.startswith("ALLOWED (decided at L0, rule 'allow-time-get_current_time')")
    save_screenshot(editor, tmp_path, "policy-rule-from-approval.png")
    window.tabs.setCurrentWidget(window.inbox)
    key(qtbot, window.inbox, Qt.Key.Key_A)  # the call waiting is still decided in the inbox
    qtbot.waitUntil(lambda: window.inbox_controller.pending_count == 0, timeout=20000)
