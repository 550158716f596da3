"""The window's tabs when there are many: titles narrow to a readable part with the whole title in
their tip, then scroll; the Approvals tab and its count stay whole, and the count is in the
status bar whichever tab is shown."""

from __future__ import annotations

import asyncio
from pathlib import Path

from PySide6.QtWidgets import QLabel, QToolButton, QWidget
from pytestqt.qtbot import QtBot

from foundry.ui.bridge import EngineBridge
from foundry.ui.window.main_window import MainWindow
from foundry.ui.window.tabs import LEAST_CHARACTERS

from ..runtime.conftest import write_agent
from .conftest import save_screenshot, shown_main_window

LONG_TITLE = "Summarise the quarterly report for the board"


def crowded_window(qtbot: QtBot, bridge: EngineBridge, tabs: int = 11) -> MainWindow:
    window = shown_main_window(qtbot, bridge, (1280, 800))
    for number in range(tabs):
        window.tabs.addTab(QWidget(), f"{LONG_TITLE} {number + 1}")
    window.show_inbox()
    window.approvals.controller.pending_changed.emit(3)
    return window


def test_the_approvals_tab_keeps_its_whole_title_and_count_among_a_dozen_tabs(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    window = crowded_window(qtbot, bridge)
    bar = window.tabs.tabBar()
    approvals = window.tabs.indexOf(window.inbox)

    assert bar.tabText(approvals) == "Approvals (3)"
    qtbot.waitUntil(lambda: bar.tabRect(approvals).width() >= bar.tabSizeHint(approvals).width())
    scrolls = [button for button in bar.findChildren(QToolButton) if button.isVisible()]
    assert scrolls  # the tabs that do not fit are scrolled to, not squeezed to "Ap…"
    save_screenshot(window, tmp_path, "window-many-tabs.png")
    window.close()


def test_a_crowded_tab_keeps_a_readable_part_of_its_title_and_tips_the_whole(
    qtbot: QtBot, bridge: EngineBridge
) -> None:
    window = crowded_window(qtbot, bridge)
    bar = window.tabs.tabBar()
    metrics = bar.fontMetrics()
    readable = metrics.horizontalAdvance(LONG_TITLE[:LEAST_CHARACTERS] + "…")

    assert all(bar.tabRect(index).width() > readable for index in range(bar.count()))
    assert bar.minimumTabSizeHint(0).width() < bar.tabSizeHint(0).width()  # it may narrow
    assert bar.tabToolTip(0) == ""  # no tip of its own: the bar tips its whole title
    window.close()


def test_the_status_bar_says_how_many_approvals_wait_and_opens_the_inbox(
    qtbot: QtBot, bridge: EngineBridge
) -> None:
    window = crowded_window(qtbot, bridge)
    waiting = window.approvals.waiting
    window.tabs.setCurrentIndex(0)

    assert isinstance(waiting, QLabel) and waiting.isVisible()
    assert "3 approvals waiting" in waiting.text()
    waiting.linkActivated.emit("inbox")
    assert window.tabs.currentWidget() is window.inbox
    window.approvals.controller.pending_changed.emit(1)
    assert "1 approval waiting" in waiting.text()
    window.approvals.controller.pending_changed.emit(0)
    assert not waiting.isVisible()
    window.close()


def test_a_chats_tab_takes_its_first_message_as_its_title_and_the_agent_in_its_tip(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    agent = write_agent(tmp_path / "helper", {"turns": [{"text": "Noon."}]}, servers={})
    window = shown_main_window(qtbot, bridge, (1280, 800))
    opening = asyncio.ensure_future(window.open_agent(agent))
    qtbot.waitUntil(opening.done, timeout=20000)
    chat = window.controllers[0]
    assert window.tabs.tabText(0) == "helper"

    chat.view.input.setPlainText("Summarise the quarterly report for the board, briefly please")
    chat.send()

    qtbot.waitUntil(lambda: window.tabs.tabText(0) != "helper", timeout=20000)
    assert window.tabs.tabText(0) == "Summarise the quarterly report…"  # cut for the bar
    assert window.tabs.tabToolTip(0) == (
        "Summarise the quarterly report for the board, briefly please — helper"
    )
    window.close()
