"""The window as it was left: its size, place and docks, and its tabs (chats by session id,
editors by agent file, task runs by task id, the Approvals, Dashboards and Gateway views), saved
at close and restored at the next start."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QByteArray, QSettings
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QWidget

if TYPE_CHECKING:
    from foundry.ui.window.main_window import MainWindow

GEOMETRY = "window/geometry"
DOCKS = "window/docks"
TABS = "window/tabs"
CURRENT_TAB = "window/current_tab"
VIEWS = ("approvals", "dashboards", "gateway")

log = logging.getLogger(__name__)


def save_geometry(window: MainWindow, settings: QSettings) -> None:
    settings.setValue(GEOMETRY, window.saveGeometry())
    settings.setValue(DOCKS, window.saveState())


def restore_geometry(window: MainWindow, settings: QSettings) -> bool:
    """The size, place and docks saved last, kept on a screen that is there; False if none."""
    geometry = settings.value(GEOMETRY)
    if not isinstance(geometry, QByteArray) or not window.restoreGeometry(geometry):
        return False
    docks = settings.value(DOCKS)
    if isinstance(docks, QByteArray):
        window.restoreState(docks)
    keep_on_screen(window)
    return True


def keep_on_screen(window: QWidget) -> None:
    """A window whose middle is on no screen (one unplugged since) moves onto the primary one,
    no larger than it."""
    frame = window.frameGeometry()
    if QGuiApplication.screenAt(frame.center()) is not None:
        return
    screen = QGuiApplication.primaryScreen()
    if screen is None:
        return
    available = screen.availableGeometry()
    window.resize(min(window.width(), available.width()), min(window.height(), available.height()))
    frame = window.frameGeometry()
    frame.moveCenter(available.center())
    window.move(frame.topLeft())


def describe_tabs(window: MainWindow) -> list[tuple[QWidget, dict[str, str]]]:
    """Each tab `restore_tabs` can reopen, in order, with what it shows."""
    from foundry.ui.editor import AgentEditor

    views: dict[Any, str] = {
        window.inbox: "approvals",
        window.dashboards: "dashboards",
        window.gateway: "gateway",
    }
    sessions = {controller.view: controller.session_id for controller in window.controllers}
    runs = getattr(window, "task_runs", None)  # (none before the engine is attached)
    tasks = {c.view: task_id for task_id, c in runs.controllers.items()} if runs else {}
    described: list[tuple[QWidget, dict[str, str]]] = []
    for index in range(window.tabs.count()):
        widget = window.tabs.widget(index)
        if widget is None:
            continue
        if widget in sessions:
            described.append((widget, {"chat": sessions[widget]}))
        elif isinstance(widget, AgentEditor) and widget.controller.document is not None:
            described.append((widget, {"editor": str(widget.controller.document.path)}))
        elif widget in tasks:
            described.append((widget, {"task": tasks[widget]}))
        elif widget in views:
            described.append((widget, {"view": views[widget]}))
    return described


def save_tabs(window: MainWindow, settings: QSettings) -> None:
    described = describe_tabs(window)
    shown = window.tabs.currentWidget()
    current = next((n for n, (widget, _) in enumerate(described) if widget is shown), 0)
    settings.setValue(TABS, json.dumps([tab for _, tab in described]))
    settings.setValue(CURRENT_TAB, current)


def saved_tabs(settings: QSettings) -> list[dict[str, str]]:
    """The tabs saved last; none when the setting is missing or not what `save_tabs` writes."""
    try:
        tabs = json.loads(str(settings.value(TABS, "[]")))
    except ValueError:
        log.warning("Ignoring the saved tabs in %s: not JSON", settings.fileName())
        return []
    if not isinstance(tabs, list):
        return []
    return [tab for tab in tabs if isinstance(tab, dict) and len(tab) == 1]


async def restore_tabs(window: MainWindow, settings: QSettings) -> int:
    """Reopen the tabs saved last, in their order, and show the one shown then; the number of
    tabs reopened (a session or agent gone since is left out, and said)."""
    tabs = saved_tabs(settings)
    shown = _number(settings.value(CURRENT_TAB, 0))
    current = None
    for position, tab in enumerate(tabs):
        before = window.tabs.count()
        await _reopen(window, tab)
        if position == shown and window.tabs.count() > before:
            current = window.tabs.widget(window.tabs.count() - 1)
    if current is not None:
        window.tabs.setCurrentWidget(current)
    return window.tabs.count()


async def _reopen(window: MainWindow, tab: dict[str, str]) -> None:
    ((kind, target),) = tab.items()
    if kind == "chat" and isinstance(target, str):
        await window.reopen_session(target)
    elif kind == "editor" and isinstance(target, str):
        await window.edit_agent_at(Path(target))
    elif kind == "task" and isinstance(target, str):
        await window.task_runs.reopen(target)
    elif kind == "view" and target == "approvals":
        window.show_inbox()
    elif kind == "view" and target == "gateway":
        window.show_gateway()
    elif kind == "view" and target == "dashboards":
        await window.open_dashboards()


def _number(value: object) -> int:
    try:
        return int(str(value))
    except ValueError:
        return 0
