"""The main window with a live session: streaming, supervisors, approvals, stop."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import shiboken6
from PySide6.QtCore import SIGNAL, QStringListModel, Qt
from PySide6.QtWidgets import QListView
from pytestqt.qtbot import QtBot

from foundry.runtime.engine import Engine
from foundry.store import Store
from foundry.ui.bridge import EngineBridge
from foundry.ui.session.view import (
    EMPTY_CONTEXT,
    EMPTY_TIMELINE,
    NO_CONTEXT,
    HintedListView,
    HintedListWidget,
    SessionView,
)
from foundry.ui.window.main_window import MainWindow

from ..killing import edited
from ..runtime.conftest import engine_over, write_agent
from ..supervision.test_agent_supervisor import write_supervisor
from .conftest import save_screenshot

GUARDIAN = {
    "type": "guardian",
    "id": "guardian",
    "name": "PII guardian",
    "config": {"blockKeywords": ["DROP TABLE"]},
}
REPLY = "Thanks! I will **not** share it. Here is a list:\n\n- one\n- two"


def open_window(qtbot: QtBot, bridge: EngineBridge, agent: Path) -> tuple[MainWindow, SessionView]:
    window = MainWindow(bridge)
    qtbot.addWidget(window)
    window.show()
    opening = asyncio.ensure_future(window.open_agent(agent))
    qtbot.waitUntil(lambda: window.tabs.count() == 1 and opening.done(), timeout=20000)
    view = window.tabs.currentWidget()
    assert isinstance(view, SessionView)
    return window, view


def send(qtbot: QtBot, view: SessionView, text: str) -> None:
    """Type the message and press Ctrl+Enter in the field, as a user would."""
    qtbot.keyClicks(view.input, text)
    qtbot.keyClick(view.input, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)


def rows(view: SessionView) -> list[tuple[str, str]]:
    return [(row.kind, row.text) for row in view.conversation.rows]


def test_a_reply_streams_in_and_the_supervisors_show_in_the_timeline(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    turns: dict[str, Any] = {"delay_s": 0.02, "turns": [{"text": REPLY}]}
    agent = write_agent(
        tmp_path / "demo", turns, servers={}, supervisors=[GUARDIAN], rules={"be-kind": "always"}
    )
    window, view = open_window(qtbot, bridge, agent)
    send(qtbot, view, "My email is ana@example.com")
    qtbot.waitUntil(lambda: any(row.streaming for row in view.conversation.rows), timeout=10000)
    qtbot.waitUntil(lambda: ("assistant", REPLY) in rows(view), timeout=10000)
    assert rows(view)[0] == ("user", "My email is [email]")

    # the last tokens and the reply's review arrive in separate events: wait for the review
    def reviewed() -> bool:
        return any(
            r.title.startswith("response · PII guardian · allow") for r in view.timeline.rows
        )

    qtbot.waitUntil(reviewed, timeout=5000)
    assert not any(row.streaming for row in view.conversation.rows)
    assert view.timeline.rows[0].title.startswith("request · PII guardian · modify")
    assert view.context.item(0).text().startswith("rule:be-kind  (always")
    qtbot.waitUntil(lambda: view.stats["turns"].text() == "1")
    assert view.send.isEnabled() and not view.stop.isEnabled()
    view.decisions.clicked.emit(view.timeline.index(0))
    assert view.messages.currentIndex().row() == 0  # the message the guardian acted on
    window.resize(1280, 760)
    qtbot.wait(100)
    save_screenshot(window, tmp_path, "session.png")


def ink(view: QListView) -> int:
    """How many pixels of the list's viewport differ from its background."""
    image = view.viewport().grab().toImage()
    background = image.pixel(1, 1)
    return sum(
        image.pixel(x, y) != background
        for x in range(0, image.width(), 2)
        for y in range(0, image.height(), 2)
    )


def test_a_new_chat_says_what_to_do_and_what_will_appear(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    agent = write_agent(tmp_path / "helper", {"turns": [{"text": "Hello."}]}, servers={})
    window, view = open_window(qtbot, bridge, agent)
    window.resize(1280, 800)
    qtbot.waitUntil(lambda: view.messages.viewport().width() > 300)

    assert ink(view.messages) > 0 and ink(view.decisions) > 0
    assert "Enter sends" in view.messages.hint and "supervisors" in EMPTY_TIMELINE
    save_screenshot(window, tmp_path, "empty-chat.png")


def test_the_context_tab_says_what_will_appear_and_when(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    agent = write_agent(tmp_path / "helper", {"turns": [{"text": "Hello."}]}, servers={})
    window, view = open_window(qtbot, bridge, agent)
    window.resize(1280, 800)
    view.panels.setCurrentIndex(view.panels.indexOf(view.context.parentWidget()))
    qtbot.waitUntil(lambda: view.context.viewport().width() > 200)

    assert view.context.count() == 0 and ink(view.context) > 0
    assert view.context.hint == EMPTY_CONTEXT
    assert "rules, references and tools" in EMPTY_CONTEXT and "send" in EMPTY_CONTEXT
    save_screenshot(window, tmp_path, "empty-context.png")
    send(qtbot, view, "Hi")  # an agent without rules, references or tools: none are chosen
    qtbot.waitUntil(lambda: ("assistant", "Hello.") in rows(view), timeout=10000)
    qtbot.waitUntil(lambda: view.context.hint == NO_CONTEXT, timeout=5000)
    window.resize(1440, 900)
    qtbot.waitUntil(lambda: view.context.viewport().width() > 250)
    assert view.context.count() == 0 and ink(view.context) > 0
    save_screenshot(window, tmp_path, "no-context.png")


def test_the_hint_goes_once_the_list_has_rows(qtbot: QtBot) -> None:
    listed = QStringListModel([""])  # a row that paints nothing itself
    view = HintedListView("Nothing yet.")
    qtbot.addWidget(view)
    view.resize(300, 200)
    view.setModel(listed)
    view.show()
    qtbot.waitExposed(view)
    assert ink(view) == 0
    listed.setStringList([])
    assert ink(view) > 0


def test_a_list_of_items_says_what_will_appear_while_it_is_empty(qtbot: QtBot) -> None:
    items = HintedListWidget("Nothing yet.")
    qtbot.addWidget(items)
    items.resize(300, 200)
    items.addItem("")  # a row that paints nothing itself
    items.show()
    qtbot.waitExposed(items)
    assert ink(items) == 0
    items.clear()
    assert ink(items) > 0


def test_tab_moves_from_the_message_to_the_buttons_and_panels(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    agent = write_agent(tmp_path / "helper", {"turns": [{"text": "Hello."}]}, servers={})
    window, view = open_window(qtbot, bridge, agent)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    view.input.setFocus()
    qtbot.keyClicks(view.input, "Hi")

    qtbot.keyClick(view.input, Qt.Key.Key_Tab)

    assert view.input.toPlainText() == "Hi"  # no tab character typed
    assert not view.input.hasFocus()  # a keyboard user is not kept in the field
    qtbot.keyClick(window.focusWidget(), Qt.Key.Key_Backtab)
    assert view.input.hasFocus()


def test_stop_keeps_what_was_written(qtbot: QtBot, bridge: EngineBridge, tmp_path: Path) -> None:
    long_text = " ".join(f"word{i}" for i in range(300))
    agent = write_agent(
        tmp_path / "slow", {"delay_s": 0.01, "turns": [{"text": long_text}]}, servers={}
    )
    _, view = open_window(qtbot, bridge, agent)
    send(qtbot, view, "talk")
    qtbot.waitUntil(
        lambda: view.stop.isEnabled() and len(view.conversation.rows) > 1, timeout=10000
    )
    view.stop.click()
    qtbot.waitUntil(lambda: view.send.isEnabled(), timeout=10000)
    reply = view.conversation.rows[-1]
    assert reply.kind == "assistant" and 0 < len(reply.text) < len(long_text)
    assert "Stopped" in view.status.text()
    save_screenshot(view, tmp_path, "stopped.png")


def test_a_pending_approval_is_answered_in_the_view(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    policy = {
        "type": "policy",
        "id": "policy",
        "config": {
            "rules": [{"name": "ask", "tool": "time.*", "action": "human"}],
            "loopDetection": False,
        },
    }
    call = {"name": "time.get_current_time", "arguments": {"timezone": "Asia/Tokyo"}}
    agent = write_agent(
        tmp_path / "ask",
        {"turns": [{"tool_calls": [call]}, {"text": "Done."}]},
        supervisors=[policy],
    )
    _, view = open_window(qtbot, bridge, agent)
    send(qtbot, view, "time in Tokyo?")
    qtbot.waitUntil(lambda: view.approval.isVisible(), timeout=20000)
    assert "time.get_current_time" in view.approval.text.text()
    save_screenshot(view, tmp_path, "approval.png")
    view.approval.approve.click()
    qtbot.waitUntil(lambda: ("assistant", "Done.") in rows(view), timeout=20000)
    tool_row = next(row for row in view.conversation.rows if row.kind == "tool")
    assert "Asia/Tokyo" in tool_row.text and "approved by human:gui:" in tool_row.detail
    assert not view.approval.isVisible()


def test_a_session_reopens_after_the_engine_is_restarted(qtbot: QtBot, tmp_path: Path) -> None:
    from foundry.runtime.engine import Engine
    from foundry.store import Store

    url = f"sqlite:///{tmp_path / 'restart.sqlite3'}"
    agent = write_agent(
        tmp_path / "again",
        {"turns": [{"text": "First answer."}]},
        servers={},
        supervisors=[GUARDIAN],
    )
    with Store.open(url) as store, Engine(store) as first:
        session_id = first.submit(first.open_session(agent)).result(30)
        first.submit(first.send(session_id, "mail me at a@b.co")).result(30)
    with window_reopening(qtbot, Engine(Store.open(url)), session_id) as window:
        view = window.tabs.currentWidget()
        assert isinstance(view, SessionView)
        assert rows(view) == [("user", "mail me at [email]"), ("assistant", "First answer.")]
        assert view.timeline.rows[0].title.startswith("request · PII guardian · modify")
        assert view.stats["turns"].text() == "1" and view.send.isEnabled()
        save_screenshot(window, tmp_path, "reopened.png")


@contextlib.contextmanager
def window_reopening(qtbot: QtBot, engine: Engine, session_id: str) -> Iterator[MainWindow]:
    """A window over `engine`, started, that has reopened the session; both stopped after,
    and the engine's store closed."""
    bridge = EngineBridge(engine.start())
    try:
        window = MainWindow(bridge)
        qtbot.addWidget(window)
        window.show()
        reopening = asyncio.ensure_future(window.reopen_session(session_id))
        qtbot.waitUntil(lambda: reopening.done() and window.tabs.count() == 1, timeout=20000)
        yield window
    finally:
        bridge.close()
        engine.stop()
        engine.store.close()


def test_a_turn_that_lacks_only_its_end_is_closed_on_reopening_without_waiting_for_trust(
    qtbot: QtBot, tmp_path: Path
) -> None:
    from foundry.agent.trust import TrustStore
    from foundry.session.events import TurnFinished

    database = tmp_path / "killed.sqlite3"
    url = f"sqlite:///{database}"
    agent = write_agent(tmp_path / "tools", {"turns": [{"text": "First answer."}]})
    with Store.open(url) as store, Engine(store) as first:
        session_id = first.submit(first.open_session(agent)).result(30)
        first.submit(first.send(session_id, "hello")).result(30)
    with edited(database) as connection:  # killed after the reply, before the end
        connection.execute("DELETE FROM events WHERE kind = 'turn_finished'")
    untrusted = TrustStore(tmp_path / "nothing-trusted.json")  # its time server: not trusted
    engine = Engine(Store.open(url), trust=untrusted)
    with window_reopening(qtbot, engine, session_id) as window:
        qtbot.waitUntil(lambda: not engine.session(session_id).needs_resume, timeout=20000)
        last = engine.submit(engine.events(session_id)).result()[-1]
        assert isinstance(last.body, TurnFinished) and last.body.reply == "First answer."
        assert "decide about the tools" not in window.statusBar().currentMessage()


def test_the_current_agent_opens_in_an_editor_tab(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    from foundry.ui.editor import AgentEditor

    agent = write_agent(
        tmp_path / "editable", {"turns": [{"text": "ok"}]}, servers={}, rules={"be-kind": "always"}
    )
    window, _ = open_window(qtbot, bridge, agent)
    window.edit_agent()
    editor = window.tabs.currentWidget()
    assert isinstance(editor, AgentEditor) and window.tabs.count() == 2
    window.edit_agent()  # a second request shows the same tab
    assert window.tabs.count() == 2
    save_screenshot(window, tmp_path, "editor-tab.png")


def test_the_reopen_dialog_lists_stored_sessions(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    from foundry.ui.session.picker import SessionPicker

    agent = write_agent(tmp_path / "listed", {"turns": [{"text": "ok"}]}, servers={})
    window, _ = open_window(qtbot, bridge, agent)
    window.choose_session()
    qtbot.waitUntil(lambda: bool(window.findChildren(SessionPicker)), timeout=10000)
    picker = window.findChildren(SessionPicker)[0]
    assert picker.sessions.count() == 1 and "listed" in picker.sessions.item(0).text()
    picker.reject()


def test_a_closed_chat_tab_is_deleted_and_follows_no_more_events(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    agent = write_agent(tmp_path / "demo", {"turns": [{"text": "hi"}]}, servers={})
    window, view = open_window(qtbot, bridge, agent)
    followers = bridge.receivers(SIGNAL("event_arrived(PyObject)"))
    window.close_tab(window.tabs.indexOf(view))
    assert not window.controllers and window.tabs.count() == 0
    assert bridge.receivers(SIGNAL("event_arrived(PyObject)")) == followers - 1
    qtbot.waitUntil(lambda: not shiboken6.isValid(view), timeout=2000)


def test_writing_ends_with_the_text_and_the_status_names_the_supervisor_at_work(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    def reviewer(name: str, words: int) -> list[dict[str, Any]]:
        allow = {"name": "supervised_allow_message", "arguments": {"reason": "fine"}}
        return [{"text": " ".join(["reading"] * words), "delay_s": 0.1, "tool_calls": [allow]}]

    write_supervisor(tmp_path / "checker", reviewer("checker", 15))
    write_supervisor(tmp_path / "architect", reviewer("architect", 30))
    supervisors = [
        {
            "type": "agent",
            "id": "checker",
            "name": "Reply checker",
            "config": {
                "agentPath": "../checker",
                "allowedActions": ["MODIFY_MESSAGES"],
                "applyTo": ["response"],
            },
        },
        {
            "type": "agent",
            "id": "architect",
            "name": "Architect",
            "config": {
                "agentPath": "../architect",
                "allowedActions": ["READ_ONLY", "MODIFY_CONTEXT"],
                "applyTo": ["response"],
            },
        },
    ]
    text = "Dear board, here it is."
    agent = write_agent(
        tmp_path / "demo", {"turns": [{"text": text}]}, servers={}, supervisors=supervisors
    )
    window, view = open_window(qtbot, bridge, agent)
    send(qtbot, view, "Write to the board.")
    # the text has ended while the checker (which may rewrite it) still holds the reply
    qtbot.waitUntil(lambda: "Reply checker reviewing…" in view.at_work.text(), timeout=10000)
    qtbot.waitUntil(lambda: ("assistant", text) in rows(view), timeout=10000)
    assert not any(row.streaming for row in view.conversation.rows)  # no "writing…"
    assert not view.send.isEnabled()
    save_screenshot(window, tmp_path, "session-supervisor-at-work.png")
    # stored and Send enabled again; the architect reviews after the reply
    qtbot.waitUntil(lambda: "Architect reviewing…" in view.at_work.text(), timeout=20000)
    assert view.send.isEnabled() and "Reply checker" not in view.at_work.text()
    qtbot.waitUntil(lambda: view.at_work.text() == "", timeout=20000)
    titles = [row.title for row in view.timeline.rows]
    assert any(t.startswith("response · Reply checker · allow") for t in titles)
    assert any(
        t.startswith("response · Architect · allow") and "after the reply" in t for t in titles
    )


def test_a_session_another_process_is_running_is_followed_not_resumed(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    words = " ".join(f"word{n}" for n in range(40))
    agent = write_agent(tmp_path / "slow", {"delay_s": 0.05, "turns": [{"text": words}]}, {})
    with engine_over(f"sqlite:///{tmp_path / 'ui.sqlite3'}") as other:  # the app's store
        session_id = other.submit(other.open_session(agent)).result()
        running = other.submit(other.send(session_id, "Write forty words."))
        store = bridge.engine.store
        qtbot.waitUntil(lambda: any(e.kind == "token" for e in store.events.list(session_id)))
        window = MainWindow(bridge)
        qtbot.addWidget(window)
        window.show()
        reopening = asyncio.ensure_future(window.reopen_session(session_id))
        qtbot.waitUntil(lambda: reopening.done() and window.tabs.count() == 1, timeout=20000)
        view = window.tabs.currentWidget()
        assert isinstance(view, SessionView)
        assert not view.send.isEnabled() and not view.stop.isEnabled()
        assert "Another Foundry process is running" in window.statusBar().currentMessage()
        qtbot.waitUntil(lambda: ("assistant", words) in rows(view), timeout=30000)
        qtbot.waitUntil(view.send.isEnabled, timeout=10000)
        assert running.result(30).reply == words
    replies = [m.content for m in store.messages.list(session_id) if m.role == "assistant"]
    assert replies == [words]  # stored once: the app followed the turn, it did not resume it
