"""The main window's agent files: clone, recent agents across runs, drag and drop, and opening a
supervisor's agent in the editor."""

from __future__ import annotations

import asyncio
import html
import json
import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from foundry.agent import validate_agent
from foundry.agent.clone import clone_agent
from foundry.agent.document import AgentFormat, read_agent
from foundry.agent.problems import AgentError
from foundry.ui.bridge import EngineBridge
from foundry.ui.editor import AgentEditor, CloneAgentDialog
from foundry.ui.recent import RecentAgents
from foundry.ui.window.main_window import MainWindow

from ..runtime.conftest import write_agent
from .conftest import save_screenshot

TURNS = {"turns": [{"text": "Hello."}]}


def agent_at(path: Path) -> Path:
    return write_agent(path, TURNS, servers={})


def new_window(qtbot: QtBot, bridge: EngineBridge) -> MainWindow:
    window = MainWindow(bridge)
    qtbot.addWidget(window)
    window.show()
    return window


def open_in(qtbot: QtBot, window: MainWindow, path: Path) -> None:
    opening = asyncio.ensure_future(window.open_agent(path))
    qtbot.waitUntil(opening.done, timeout=20000)
    assert window.agent is not None and window.agent.path == path


def test_clone_copies_the_agent_under_a_new_name_and_opens_it(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    source = agent_at(tmp_path / "agents" / "helper")
    window = new_window(qtbot, bridge)
    open_in(qtbot, window, source)
    window.clone_agent()
    dialog = window.findChild(CloneAgentDialog)
    assert dialog is not None and dialog.name.text() == "helper copy"
    assert dialog.target() == tmp_path / "agents" / "helper-copy"
    dialog.name.setText("Night Helper")
    save_screenshot(dialog, tmp_path, "clone-dialog.png")
    dialog.submit()
    clone = tmp_path / "agents" / "night-helper"
    qtbot.waitUntil(lambda: window.agent is not None and window.agent.path == clone, timeout=20000)
    assert window.agent is not None and window.agent.agent is not None
    assert window.agent.agent.metadata.name == "Night Helper"
    assert (clone / "turns.json").read_text() == (source / "turns.json").read_text()
    assert json.loads((source / "tsagent.json").read_text())["metadata"]["name"] == "helper"
    assert window.windowTitle() == "Night Helper — Foundry"
    qtbot.waitUntil(lambda: window.tabs.count() == 2, timeout=20000)  # a chat with the clone


def test_a_clone_to_a_yaml_file_and_onto_an_existing_agent(tmp_path: Path) -> None:
    source = agent_at(tmp_path / "helper")
    document = clone_agent(source, tmp_path / "helper.yaml", "Helper in one file")
    assert document.format is AgentFormat.YAML and document.agent is not None
    assert document.agent.metadata.name == "Helper in one file"
    assert document.agent.settings.model == "scripted:turns.json"
    with pytest.raises(AgentError, match="already holds an agent"):
        clone_agent(source, source, "again")


def test_recent_agents_are_remembered_across_runs_and_reopened(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    first, second = agent_at(tmp_path / "first"), agent_at(tmp_path / "second")
    window = new_window(qtbot, bridge)
    open_in(qtbot, window, first)
    open_in(qtbot, window, second)
    qtbot.waitUntil(lambda: len(RecentAgents.load().paths) == 2, timeout=5000)
    assert RecentAgents.load().paths == [second.resolve(), first.resolve()]
    window.close()
    later = new_window(qtbot, bridge)  # a new run reads the list from the data folder
    later.recent_menu.aboutToShow.emit()
    labels = [action.text() for action in later.recent_menu.actions()]
    assert labels == ["&1 second", "&2 first"]
    later.recent_menu.actions()[1].trigger()
    qtbot.waitUntil(lambda: later.agent is not None and later.agent.path == first.resolve())
    qtbot.waitUntil(lambda: RecentAgents.load().paths[0] == first.resolve(), timeout=5000)
    qtbot.waitUntil(lambda: later.tabs.count() == 1, timeout=20000)


def test_an_agent_folder_dropped_on_the_window_opens(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    folder = agent_at(tmp_path / "dropped")
    (tmp_path / "notes.txt").write_text("not an agent")
    window = new_window(qtbot, bridge)
    assert drop_on(window, folder).isAccepted()
    qtbot.waitUntil(lambda: window.agent is not None and window.agent.path == folder, timeout=20000)
    qtbot.waitUntil(lambda: window.tabs.count() == 1, timeout=20000)  # a chat with it started


def drag_is_accepted(window: MainWindow, path: Path) -> bool:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    enter = QDragEnterEvent(
        window.rect().center(),  # a QPoint (PySide6 6.11 takes no QPointF here)
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    enter.ignore()
    QApplication.sendEvent(window, enter)
    return enter.isAccepted()


def drop_on(window: MainWindow, path: Path) -> QDropEvent:
    """`path` dragged onto the window and dropped there."""
    assert drag_is_accepted(window, path)
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    drop = QDropEvent(
        QPointF(200, 200),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    QApplication.sendEvent(window, drop)
    return drop


def test_a_folder_dropped_that_is_not_an_agent_is_said_to_be_none(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    folder = tmp_path / "photos"
    folder.mkdir()
    (tmp_path / "notes.txt").write_text("not an agent")
    window = new_window(qtbot, bridge)

    drop_on(window, folder)  # taken, so that the drop can say why
    assert window.statusBar().currentMessage() == (
        f"This folder is not an agent: no tsagent.json in {folder}. Drop an agent's folder or "
        "its .yaml file."
    )
    drop_on(window, tmp_path / "notes.txt")
    assert window.statusBar().currentMessage().startswith("notes.txt is not an agent: ")
    assert window.agent is None and window.tabs.count() == 0


def test_open_recent_lists_the_agents_names_and_tells_the_same_names_apart(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    first = agent_at(tmp_path / "work" / "helper")
    second = agent_at(tmp_path / "home" / "helper")
    other = agent_at(tmp_path / "mail-agent")
    for path, name in ((first, "Helper"), (second, "Helper"), (other, "Mail & Calendar")):
        config = json.loads((path / "tsagent.json").read_text())
        config["metadata"]["name"] = name
        (path / "tsagent.json").write_text(json.dumps(config))
    window = new_window(qtbot, bridge)
    for path in (first, second, other):
        open_in(qtbot, window, path)
    qtbot.waitUntil(lambda: len(RecentAgents.load().paths) == 3, timeout=5000)
    window.close()

    later = new_window(qtbot, bridge)
    later.recent_menu.aboutToShow.emit()
    labels = [action.text() for action in later.recent_menu.actions()]
    assert labels == ["&1 Mail && Calendar", "&2 Helper — home/helper", "&3 Helper — work/helper"]
    assert later.recent_menu.actions()[0].toolTip() == str(other.resolve())


def test_a_list_of_recent_agents_from_before_names_were_kept_still_opens(tmp_path: Path) -> None:
    agent = agent_at(tmp_path / "old")
    file = tmp_path / "recent-agents.json"
    file.write_text(json.dumps([str(agent)]))

    recent = RecentAgents.load(file)

    assert recent.paths == [agent] and recent.label(agent, recent.paths) == "old"


def test_a_supervisors_agent_opens_in_its_own_editor_tab(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    worker = agent_at(tmp_path / "worker")
    watcher = agent_at(tmp_path / "watcher")
    window = new_window(qtbot, bridge)
    open_in(qtbot, window, worker)
    window.edit_agent()
    editor = window.tabs.currentWidget()
    assert isinstance(editor, AgentEditor)
    editor.open_agent_requested.emit(watcher)
    qtbot.waitUntil(
        lambda: (
            isinstance(window.tabs.currentWidget(), AgentEditor)
            and window.tabs.currentWidget() is not editor
        ),
        timeout=10000,
    )
    opened = window.tabs.currentWidget()
    assert isinstance(opened, AgentEditor) and opened.controller.document is not None
    assert opened.controller.document.path == watcher
    assert window.agent is not None and window.agent.path == watcher  # the panel follows the tab
    window.tabs.setCurrentIndex(0)  # the chat
    assert window.agent is not None and window.agent.path == worker
    assert read_agent(watcher).agent is not None


def test_an_agent_that_validate_rejects_shows_its_problems_instead_of_a_chat(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    lost = {"type": "agent", "id": "lost", "config": {"agentPath": "../gone"}}
    path = write_agent(tmp_path / "worker", TURNS, servers={}, supervisors=[lost])
    window = new_window(qtbot, bridge)
    opening = asyncio.ensure_future(window.open_agent(path))
    qtbot.waitUntil(opening.done, timeout=20000)
    assert window.agent is None and window.tabs.count() == 0
    [problem] = validate_agent(path)
    assert html.escape(str(problem)) in window.agent_panel.text()
    assert "1 problem, listed in the Agent panel" in window.statusBar().currentMessage()
    save_screenshot(window, tmp_path, "agent-problems.png")


def test_chat_tabs_are_named_after_their_agent_and_the_agent_panel_follows_the_tab(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    worker = agent_at(tmp_path / "worker")
    long_name = agent_at(tmp_path / ("a-very-long-agent-name-" * 6).rstrip("-"))
    window = new_window(qtbot, bridge)
    window.resize(1280, 800)
    open_in(qtbot, window, worker)
    open_in(qtbot, window, long_name)
    starting = asyncio.ensure_future(window.start_chat())  # a second chat with the same agent
    qtbot.waitUntil(starting.done, timeout=20000)
    titles = [window.tabs.tabText(i) for i in range(window.tabs.count())]
    assert titles[0] == "worker"
    assert titles[1] == long_name.name[:31] + "…" and titles[2].endswith("…")
    assert window.tabs.tabToolTip(2) == f"{long_name.name} 2"
    assert window.width() == 1280
    window.tabs.setCurrentIndex(0)
    assert window.windowTitle() == "worker — Foundry"
    assert "<h3>worker</h3>" in window.agent_panel.text()
    window.tabs.setCurrentIndex(1)
    assert window.agent is not None and window.agent.path == long_name


def test_an_editor_tab_is_told_apart_from_the_chat_tab_of_its_agent(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    window = new_window(qtbot, bridge)
    open_in(qtbot, window, agent_at(tmp_path / "worker"))
    window.edit_agent()
    editor = window.tabs.currentWidget()
    assert isinstance(editor, AgentEditor)

    assert [window.tabs.tabText(i) for i in range(window.tabs.count())] == [
        "worker",
        "Edit: worker",
    ]
    assert window.tabs.tabToolTip(1) == f"Edit: worker\n{tmp_path / 'worker'}"
    editor.metadata.description.setPlainText("Changed.")  # an unsaved edit: the title follows
    qtbot.waitUntil(lambda: window.tabs.tabText(1) == "Edit: worker *")
    editor.undo_action.trigger()
    qtbot.waitUntil(lambda: window.tabs.tabText(1) == "Edit: worker")


def test_two_open_agents_of_one_name_are_told_apart_by_their_folder(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    window = new_window(qtbot, bridge)
    first = window.editors.open_editor(read_agent(agent_at(tmp_path / "live" / "worker")))
    window.editors.open_editor(read_agent(agent_at(tmp_path / "copy" / "worker")))

    def labels() -> list[str]:
        return [window.tabs.tabText(i) for i in range(window.tabs.count())]

    assert labels() == ["Edit: worker (live)", "Edit: worker (copy)"]
    first.metadata.description.setPlainText("Changed.")  # the unsaved mark stays at the end
    qtbot.waitUntil(lambda: labels()[0] == "Edit: worker (live) *")
    first.undo_action.trigger()
    qtbot.waitUntil(lambda: labels()[0] == "Edit: worker (live)")

    window.tabs.tabCloseRequested.emit(0)  # no folder is needed once the name is alone
    qtbot.waitUntil(lambda: labels() == ["Edit: worker"])

    long_name = "supervised-assistant-of-the-team"  # cut in its name, never in its folder
    for folder in ("live", "copy"):
        window.editors.open_editor(read_agent(agent_at(tmp_path / folder / long_name)))
    assert labels()[1:] == ["Edit: supervised-assista… (live)", "Edit: supervised-assista… (copy)"]
    assert window.tabs.tabToolTip(2).startswith(f"Edit: {long_name} (copy)\n")


def test_closing_the_window_stops_its_editors_watching_and_checking(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    """An editor's check due when the window closes never runs (its timer would fire in
    whatever runs next, with no loop to check on)."""
    window = new_window(qtbot, bridge)
    open_in(qtbot, window, agent_at(tmp_path / "worker"))
    window.edit_agent()
    editor = window.tabs.currentWidget()
    assert isinstance(editor, AgentEditor)
    editor.controller.problems_changed()  # a check due, as after any edit or reload
    assert editor.controller._check_timer.isActive()
    window.close()
    assert not editor.controller._check_timer.isActive()


def test_ctrl_w_closes_the_current_tab(qtbot: QtBot, bridge: EngineBridge, tmp_path: Path) -> None:
    window = new_window(qtbot, bridge)
    open_in(qtbot, window, agent_at(tmp_path / "worker"))
    window.edit_agent()
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    assert window.tabs.count() == 2

    qtbot.keyClick(window.tabs.currentWidget(), Qt.Key.Key_W, Qt.KeyboardModifier.ControlModifier)

    assert [window.tabs.tabText(i) for i in range(window.tabs.count())] == ["worker"]
    qtbot.keyClick(window.tabs.currentWidget(), Qt.Key.Key_W, Qt.KeyboardModifier.ControlModifier)
    assert window.tabs.count() == 0


def test_an_agent_that_is_not_there_offers_no_editor_to_fix_it(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    path = agent_at(tmp_path / "gone")
    window = new_window(qtbot, bridge)
    open_in(qtbot, window, path)
    shutil.rmtree(path)

    starting = asyncio.ensure_future(window.start_chat())  # New Chat with the deleted agent
    qtbot.waitUntil(starting.done, timeout=20000)

    assert "the folder does not exist" in window.agent_panel.text()
    assert "Open it in the editor" not in window.agent_panel.text()  # an editor of nothing
    assert "Open another agent" in window.agent_panel.text()
    window.edit_agent()  # Ctrl+E
    assert not any(
        isinstance(window.tabs.widget(i), AgentEditor) for i in range(window.tabs.count())
    )


def test_new_agent_opens_its_editor_on_its_name_and_its_policy_leads_with_a_summary(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    from foundry.agent.templates import create_agent, new_agent

    window = new_window(qtbot, bridge)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    document = create_agent(tmp_path / "fresh", new_agent("Fresh", "made just now"))
    editor = window.agent_created(document)
    assert window.tabs.currentWidget() is editor
    assert editor.pages.currentWidget() is editor.metadata  # its name, not 300 rules
    qtbot.waitUntil(editor.metadata.name.hasFocus)
    assert editor.metadata.name.selectedText() == "Fresh"
    assert window.agent is not None and window.agent.path == document.path
    editor.show_section("Policy")
    assert editor.policy.rules_model.rowCount() > 50  # the careful default, as a table
    summary = editor.policy.overview.summary
    qtbot.waitUntil(lambda: "In short" in summary.text(), timeout=10000)
    assert "Reads inside the workspace run; reads outside it are denied" in summary.text()


def test_an_agent_with_problems_opens_in_the_editor_from_the_agent_panel(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    bad = {"type": "bogus", "id": "x"}
    path = write_agent(tmp_path / "broken", TURNS, servers={}, supervisors=[bad])
    window = new_window(qtbot, bridge)
    opening = asyncio.ensure_future(window.open_agent(path))
    qtbot.waitUntil(opening.done, timeout=20000)
    assert "Open it in the editor to fix it" in window.agent_panel.text()
    window.agent_panel.linkActivated.emit("edit")
    qtbot.waitUntil(lambda: isinstance(window.tabs.currentWidget(), AgentEditor), timeout=10000)
    editor = window.tabs.currentWidget()
    assert isinstance(editor, AgentEditor) and editor.pages.isEnabled()
    qtbot.waitUntil(lambda: any("bogus" in line for line in editor.problems.model.stringList()))
    qtbot.waitUntil(lambda: editor.problems.list.height() > 60)  # opened unfolded, room for them
    assert editor.pages.height() > 300


def test_help_lists_the_keyboard_shortcuts_and_says_what_foundry_is(
    qtbot: QtBot, bridge: EngineBridge
) -> None:
    import foundry

    window = new_window(qtbot, bridge)
    dialog = window.show_shortcuts()
    table = dialog.table  # type: ignore[attr-defined]
    rows = [
        tuple(table.item(row, column).text() for column in range(3))
        for row in range(table.rowCount())
    ]
    assert ("File menu", "Ctrl+Shift+N", "New Agent…") in rows
    assert ("View menu", "Ctrl+Shift+I", "Approvals") in rows
    assert ("Approvals", "R", "Make a policy rule from the approval") in rows
    window_keys = [keys for where, keys, _ in rows if where.endswith("menu")]
    assert len(window_keys) == len(set(window_keys))  # no window key does two things
    assert "Ctrl+Shift+R" not in window_keys  # the editor's New rule takes no window key
    dialog.close()
    about = window.show_about()
    assert f"Foundry {foundry.__version__}" in about.text()  # type: ignore[attr-defined]
    about.close()


def test_a_chat_says_in_the_log_when_its_input_is_ready(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    worker = agent_at(tmp_path / "worker")
    window = new_window(qtbot, bridge)
    with caplog.at_level("INFO", logger="foundry.ui.window.chats"):
        open_in(qtbot, window, worker)
    ready = [
        record.getMessage() for record in caplog.records if "ready for input" in record.message
    ]
    view = window.tabs.currentWidget()
    assert len(ready) == 1 and f"(agent {worker})" in ready[0]
    assert view.input.isEnabled() and view.input.hasFocus()
