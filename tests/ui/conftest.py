"""UI test setup: offscreen Qt, a qasync loop on the GUI thread, and an engine on a fresh store."""

from __future__ import annotations

import asyncio
import os
import time
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import qasync
import shiboken6
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from foundry.runtime.engine import Engine
from foundry.store import Store
from foundry.ui.bridge import EngineBridge
from foundry.ui.window.main_window import MainWindow

DOCS_SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


def save_screenshot(widget: QWidget, tmp_path: Path, name: str) -> Path:
    """Save a PNG of `widget` in the test's folder; with FOUNDRY_UPDATE_SCREENSHOTS=1, also
    refresh the copy in docs/screenshots that the README shows."""
    target = tmp_path / name
    assert widget.grab().save(str(target))
    if os.environ.get("FOUNDRY_UPDATE_SCREENSHOTS") == "1":
        DOCS_SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        assert widget.grab().save(str(DOCS_SCREENSHOTS / name))
    return target


def shown_main_window(qtbot: QtBot, bridge: EngineBridge, size: tuple[int, int]) -> MainWindow:
    """The app's main window, shown at `size` (width, height) on the offscreen screen."""
    window = MainWindow(bridge)
    qtbot.addWidget(window)
    window.resize(*size)
    window.show()
    qtbot.waitExposed(window)
    return window


@pytest.fixture(scope="session")
def gui_loop(qapp: QApplication) -> Iterator[asyncio.AbstractEventLoop]:
    """qasync's loop, running inside Qt's event processing (pytest-qt drives Qt)."""
    loop = qasync.QEventLoop(qapp, already_running=True)
    executor = qasync.QThreadExecutor(2)
    loop.set_default_executor(executor)
    asyncio.set_event_loop(loop)
    yield loop
    _cancel_left_over_tasks(qapp, loop)
    executor.shutdown(wait=True)


def _cancel_left_over_tasks(qapp: QApplication, loop: asyncio.AbstractEventLoop) -> None:
    """Cancel what tests left waiting (a window closed with unsaved edits still asks whether
    to save them) and let it end, so that nothing is destroyed pending at exit."""
    left = [task for task in asyncio.all_tasks(loop) if not task.done()]
    for task in left:
        task.cancel()
    asyncio.events._set_running_loop(loop)
    deadline = time.monotonic() + 5
    while any(not task.done() for task in left) and time.monotonic() < deadline:
        qapp.processEvents()
    asyncio.events._set_running_loop(None)


@pytest.fixture(autouse=True)
def gui_loop_running(gui_loop: asyncio.AbstractEventLoop) -> Iterator[None]:
    """The qasync loop counts as running during a UI test only, so that asyncio tests run
    after the UI tests (in one pytest session) can start loops of their own."""
    asyncio.events._set_running_loop(gui_loop)
    asyncio.set_event_loop(gui_loop)
    try:
        yield
        _stop_editors_left_open()
    finally:
        asyncio.events._set_running_loop(None)


# Every editor controller the UI tests made, to stop those left open. Not found by walking
# QApplication.allWidgets(): wrapping every widget there once met one being destroyed (after a
# dashboards test) and crashed the run with a segmentation fault.
_EDITORS: weakref.WeakSet[Any] = weakref.WeakSet()


@pytest.fixture(autouse=True, scope="session")
def _editors_followed() -> Iterator[None]:
    from foundry.ui.editor.controller import EditorController

    made = EditorController.__init__

    def following(self: EditorController, *args: Any, **kwargs: Any) -> None:
        made(self, *args, **kwargs)
        _EDITORS.add(self)

    EditorController.__init__ = following  # type: ignore[method-assign]
    yield
    EditorController.__init__ = made  # type: ignore[method-assign]


def _stop_editors_left_open() -> None:
    """An editor whose window did not close (it asks about unsaved edits) stops its checks:
    one due later would run in a test that has no loop."""
    for controller in list(_EDITORS):
        if shiboken6.isValid(controller):
            controller.close()


@pytest.fixture
def bridge(tmp_path: Path, gui_loop: asyncio.AbstractEventLoop) -> Iterator[EngineBridge]:
    store = Store.open(f"sqlite:///{tmp_path / 'ui.sqlite3'}")
    engine = Engine(store, retry_delays_s=(0.05,)).start()
    connected = EngineBridge(engine)
    yield connected
    _stop_editors_left_open()  # while their engine still runs what they stop
    connected.close()
    engine.stop()
    store.close()
