"""A chat shows what is in force: a save of its agent (the policy at its next call, the rest on
Restart chat), tool servers that failed, and a status line that says what the turn waits for."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from foundry.agent.document import read_agent
from foundry.session.events import ApprovalRequested, TurnFinished, TurnStarted
from foundry.ui.bridge import EngineBridge
from foundry.ui.editor import AgentEditor
from foundry.ui.session.chat_status import ChatStatus

from ..runtime.conftest import TIME_SERVER, write_agent
from .conftest import save_screenshot
from .test_session_window import open_window, rows, send

UTC_CALL = {"name": "time.get_current_time", "arguments": {"timezone": "UTC"}}


def policy(action: str) -> dict[str, Any]:
    rule = {"name": "time-is-routine", "tool": "time.*", "action": action}
    return {"type": "policy", "id": "tool-policy", "config": {"rules": [rule]}}


def test_the_status_line_follows_the_turn_and_names_the_approval_it_waits_for() -> None:
    status = ChatStatus()
    status.apply(TurnStarted())
    assert status.line() == "The agent is answering…"
    status.model_wait = "another chat is using it"
    assert status.line() == "Waiting for the model: another chat is using it."
    requested = ApprovalRequested(
        approval_id="a1", tool="files.write_file", level="L0", reason="writes ask"
    )
    status.apply(requested)
    assert status.line().startswith("Waiting for your approval: files.write_file")
    status.say("Included rule be-brief")  # an action's word does not hide what the turn waits for
    assert status.line().startswith("Waiting for your approval")
    status.apply(TurnFinished(reply="", model_calls=1, ended_by="reply"))
    assert status.line() == "Ready."


def test_a_chat_waiting_for_a_person_says_so_and_not_that_the_agent_is_answering(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    turns = {"turns": [{"tool_calls": [UTC_CALL]}, {"text": "Done."}]}
    agent = write_agent(tmp_path / "ask", turns, supervisors=[policy("human")])
    _, view = open_window(qtbot, bridge, agent)
    send(qtbot, view, "time?")
    qtbot.waitUntil(view.approval.isVisible, timeout=20000)
    assert view.status.text().startswith("Waiting for your approval: time.get_current_time")
    view.approval.approve.click()
    qtbot.waitUntil(lambda: view.status.text() == "Ready.", timeout=20000)


def test_a_policy_tightened_in_the_editor_asks_at_the_open_chats_next_call(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    call = {"tool_calls": [UTC_CALL]}
    turns = {"turns": [call, {"text": "Noon."}, call, {"text": "Still noon."}]}
    agent = write_agent(tmp_path / "timed", turns, supervisors=[policy("allow")])
    window, view = open_window(qtbot, bridge, agent)
    send(qtbot, view, "time?")
    qtbot.waitUntil(lambda: ("assistant", "Noon.") in rows(view), timeout=20000)

    editor = AgentEditor(bridge=bridge)
    qtbot.addWidget(editor)
    editor.load(read_agent(agent))
    editor.show_section("Policy")
    model = editor.policy.rules_model
    assert model.setData(model.index(0, 5), "human", Qt.ItemDataRole.EditRole)
    editor.controller.save()
    qtbot.waitUntil(lambda: "open chat follows it" in editor.status.text(), timeout=20000)

    send(qtbot, view, "and now?")
    qtbot.waitUntil(view.approval.isVisible, timeout=20000)
    assert view.status.text().startswith("Waiting for your approval: time.get_current_time")
    notices = [row.text for row in view.conversation.rows if row.kind == "notice"]
    assert notices == ["The agent was saved. This chat follows its policy from the next step."]
    assert not view.agent_bar.isVisible()  # nothing waits for a restart
    window.resize(1440, 900)
    save_screenshot(window, tmp_path, "chat-saved-policy-asks.png")
    view.approval.deny.click()
    qtbot.waitUntil(lambda: view.status.text() == "Ready.", timeout=20000)


def test_what_waits_for_a_restart_is_said_and_restart_chat_applies_it_keeping_the_chat(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    turns = {"turns": [{"text": "Hello."}, {"text": "Hello again."}]}
    agent = write_agent(tmp_path / "prompted", turns, servers={})
    window, view = open_window(qtbot, bridge, agent)
    window.resize(1280, 800)
    send(qtbot, view, "hi")
    qtbot.waitUntil(lambda: ("assistant", "Hello.") in rows(view), timeout=20000)
    (agent / "prompt.md").write_text("You are a brief test agent.")
    engine = bridge.engine
    applying = asyncio.ensure_future(bridge.call(engine.apply_saved_agent(agent)))
    qtbot.waitUntil(lambda: applying.done() and view.agent_bar.isVisible(), timeout=20000)
    assert "saved prompt" in view.agent_bar.text.text()
    assert any(
        row.kind == "notice" and "Restart chat" in row.text for row in view.conversation.rows
    )
    save_screenshot(window, tmp_path, "chat-restart-to-apply.png")

    view.agent_bar.restart.click()
    qtbot.waitUntil(lambda: view.status.text().startswith("Restarted"), timeout=20000)
    [controller] = window.chats.controllers
    chat = engine.session(controller.session_id)
    assert chat.agent.system_prompt == "You are a brief test agent."
    assert not view.agent_bar.isVisible()
    assert ("assistant", "Hello.") in rows(view)
    send(qtbot, view, "again")
    qtbot.waitUntil(lambda: ("assistant", "Hello again.") in rows(view), timeout=20000)


def test_tool_servers_that_fail_to_start_are_said_in_the_status_and_the_chat(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    missing = dict(TIME_SERVER, command="foundry-no-such-command")
    turns = {"turns": [{"text": "Hi."}]}
    agent = write_agent(tmp_path / "broken", turns, servers={"time": missing}, trusted=False)
    window, view = open_window(qtbot, bridge, agent)
    qtbot.waitUntil(view.trust.isVisible, timeout=20000)
    view.trust.trust.click()
    qtbot.waitUntil(lambda: "Tool server 'time' failed" in view.status.text(), timeout=20000)
    assert "Tools started" not in view.status.text()
    assert "foundry-no-such-command" in view.status.text()

    def said_in_the_chat() -> bool:
        errors = [row.text for row in view.conversation.rows if row.kind == "error"]
        return any("'time' failed" in text for text in errors)

    qtbot.waitUntil(said_in_the_chat, timeout=20000)
    qtbot.waitUntil(lambda: not view.trust.isVisible(), timeout=20000)
    save_screenshot(window, tmp_path, "chat-tool-server-failed.png")


def test_a_policy_tightened_on_the_files_page_asks_at_the_open_chats_next_call(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    call = {"tool_calls": [UTC_CALL]}
    turns = {"turns": [call, {"text": "Noon."}, call, {"text": "Still noon."}]}
    agent = write_agent(tmp_path / "typed", turns, supervisors=[policy("allow")])
    _, view = open_window(qtbot, bridge, agent)

    editor = AgentEditor(bridge=bridge)
    qtbot.addWidget(editor)
    editor.load(read_agent(agent))
    editor.show_section("Files")
    page = editor.raw_files
    qtbot.waitUntil(lambda: '"allow"' in page.text.toPlainText(), timeout=10000)
    tightened = page.text.toPlainText().replace('"allow"', '"human"')
    page.text.selectAll()
    page.text.insertPlainText(tightened)  # typed, as a person would
    page.save.click()
    qtbot.waitUntil(lambda: "open chat follows it" in editor.status.text(), timeout=20000)

    send(qtbot, view, "time?")
    qtbot.waitUntil(view.approval.isVisible, timeout=20000)
    view.approval.deny.click()
    qtbot.waitUntil(lambda: view.status.text() == "Ready.", timeout=20000)


def test_a_failed_turn_says_why_whichever_comes_first_its_end_or_its_error() -> None:
    for error_first in (True, False):
        status = ChatStatus()
        status.apply(TurnStarted())
        if error_first:
            status.failed("the server is down")
        status.apply(TurnFinished(reply="", model_calls=0, ended_by="error"))
        if not error_first:
            status.failed("the server is down")
        assert status.line() == "The model failed: the server is down"


def test_a_message_held_for_review_is_named_as_such() -> None:
    status = ChatStatus()
    status.apply(TurnStarted())
    held = ApprovalRequested(
        approval_id="r1", tool="supervision.review_request", level="supervisor", reason="odd"
    )
    status.apply(held)
    assert status.line().startswith(
        "Waiting for your approval: the message a supervisor holds for your review"
    )
