"""Starting the desktop app: Qt on the main thread driven by qasync, the engine on its own."""

from __future__ import annotations

import asyncio
import gc
import sys
from pathlib import Path

import qasync
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication

from foundry.home import APP_ID, shipped_path
from foundry.logs import configure_logging, log_uncaught_exceptions
from foundry.runtime.engine import Engine
from foundry.ui.bridge import EngineBridge
from foundry.ui.main_window import MainWindow


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


async def _main(window: MainWindow, agent: Path | None) -> None:
    window.show()
    if agent is not None:
        await window.open_agent(agent)
    # What start-up allocated lives as long as the app: keep it out of the full collections,
    # which otherwise stall the GUI thread for 100 ms and more in the middle of a reply.
    gc.freeze()
    await window.closed.wait()


def run(agent: Path | None = None) -> int:
    app = QApplication.instance() or QApplication(sys.argv)
    assert isinstance(app, QApplication)
    app.setApplicationName("Foundry")
    app.setOrganizationName("Foundry")
    app.setDesktopFileName(APP_ID)
    app.setWindowIcon(app_icon())
    configure_logging()
    log_uncaught_exceptions()
    engine = Engine().start()
    bridge = EngineBridge(engine)
    window = MainWindow(bridge)
    try:
        with asyncio.Runner(loop_factory=lambda: qasync.QEventLoop(app)) as runner:
            runner.run(_main(window, agent or last_agent(window) or sample_agent()))
    finally:
        bridge.close()
        engine.stop()
    return 0
