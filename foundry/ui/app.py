"""Starting the desktop app: the main window first, then the engine, loaded on a worker thread.

Importing the engine (the store, MCP, the model providers, the supervisors) takes most of a
start-up, so the window is shown before it: this module imports Qt, qasync and the window only,
and the rest is imported off the GUI thread while the window says that the engine is loading.
Once the first chat is ready, the dashboards are preloaded (pyqtgraph imported off the GUI
thread, the tab built and drawn hidden), so that View > Dashboards only shows them.
"""

from __future__ import annotations

import asyncio
import gc
import importlib
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import qasync
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication

from foundry.home import APP_ID, shipped_path
from foundry.logs import configure_logging, log_uncaught_exceptions
from foundry.ui.settings import use_foundry_settings
from foundry.ui.theme import apply_theme, theme_setting
from foundry.ui.window.main_window import WINDOW_PARTS, MainWindow

if TYPE_CHECKING:
    from foundry.runtime.engine import Engine

log = logging.getLogger(__name__)


def sample_agent() -> Path | None:
    """The sample assistant that ships with Foundry, opened on a first run."""
    candidate = shipped_path("agents", "assistant")
    return candidate if candidate.is_dir() else None


def app_icon() -> QIcon:
    """Foundry's icon at every size in resources/icons; empty when they are missing."""
    icon = QIcon()
    for path in sorted(shipped_path("resources", "icons").glob("foundry-*.png")):
        icon.addFile(str(path))
    return icon


def last_agent(window: MainWindow) -> Path | None:
    """The agent opened last (File > Open Recent lists the others), if it is still there."""
    return next(iter(window.recent.existing()), None)


def start_engine() -> Engine:
    """A started engine, and the window's parts imported: run on a worker thread."""
    from foundry.runtime.engine import Engine

    for module in WINDOW_PARTS:
        importlib.import_module(module)
    return Engine().start()


async def _main(window: MainWindow, agent: Path | None) -> None:
    window.show()
    try:
        engine = await asyncio.to_thread(start_engine)
    except Exception as error:  # said in the window, which stays until it is closed
        log.exception("The engine could not start")
        window.engine_failed(error)
        await window.closed.wait()
        return
    try:
        await _run_window(window, engine, agent)
    finally:
        engine.stop()


async def _run_window(window: MainWindow, engine: Engine, agent: Path | None) -> None:
    from foundry.ui.bridge import EngineBridge

    if window.closed.is_set():  # closed while the engine was loading
        return
    bridge = EngineBridge(engine)
    try:
        window.attach(bridge)
        restored = agent is None and await window.restore_tabs() > 0
        agent = agent or last_agent(window) or sample_agent()
        if agent is not None and not restored:
            await window.open_agent(agent)
        # What start-up allocated lives as long as the app: keep it out of the full
        # collections, which otherwise stall the GUI thread for 100 ms and more in the middle
        # of a reply.
        gc.freeze()
        if not window.closed.is_set():  # what View > Dashboards shows, made ready meanwhile
            # (pyqtgraph and the tab live as long as the app too: frozen once loaded)
            window.preload_dashboards().add_done_callback(lambda _: gc.freeze())
        await window.closed.wait()
    finally:
        bridge.close()


def run(agent: Path | None = None) -> int:
    app = QApplication.instance() or QApplication(sys.argv)
    assert isinstance(app, QApplication)
    app.setApplicationName("Foundry")
    app.setOrganizationName("Foundry")
    app.setDesktopFileName(APP_ID)
    app.setWindowIcon(app_icon())
    app.setQuitOnLastWindowClosed(False)  # the app ends when _main does: the engine stopped
    use_foundry_settings()
    apply_theme(theme_setting())
    configure_logging()
    log_uncaught_exceptions()
    window = MainWindow()
    with asyncio.Runner(loop_factory=lambda: qasync.QEventLoop(app)) as runner:
        runner.run(_main(window, agent))
    return 0
