"""Start-up: the main window is shown before the engine is imported, says that it is loading and
offers nothing that needs the engine until it is there."""

from __future__ import annotations

import ast
import asyncio
import inspect
import json
import os
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from PySide6.QtGui import QAction
from pytestqt.qtbot import QtBot

from foundry.runtime.engine import Engine
from foundry.store import StoreError
from foundry.ui import app as foundry_app
from foundry.ui import window as window_package
from foundry.ui.bridge import EngineBridge
from foundry.ui.window.main_window import LOADING, NO_AGENT, WINDOW_PARTS, MainWindow

from ..conftest import REPO
from ..runtime.conftest import write_agent
from .conftest import save_screenshot
from .test_main_window_agents import drag_is_accepted

IMPORTS_OF_APP = """
import json, sys
import foundry.ui.app
print(json.dumps(sorted(sys.modules)))
"""
LOADED_AFTER_THE_WINDOW = ("sqlalchemy", "alembic", "mcp", "ollama", "httpx", "pydantic")
LOADED_AFTER_THE_WINDOW += ("fastapi", "xllamacpp", "foundry.runtime", "foundry.store")
LOADED_AFTER_THE_WINDOW += ("foundry.agent", "foundry.session", "foundry.tools")


NEEDING_NO_ENGINE = ["&Quit", "&Keyboard Shortcuts", "&About Foundry"]  # Help needs none


def actions_of(window: MainWindow) -> dict[str, QAction]:
    menus = [action.menu() for action in window.menuBar().actions()]
    return {
        action.text(): action
        for menu in menus
        if menu is not None
        for action in menu.actions()
        if action.text() and action.menu() is None
    }


def modules_imported_by(code: str) -> list[str]:
    """The modules a fresh Python process holds once it has run `code` (which prints them)."""
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    imported: list[str] = json.loads(done.stdout)
    return imported


def test_importing_the_app_leaves_the_engine_for_later() -> None:
    imported = modules_imported_by(IMPORTS_OF_APP)

    assert "PySide6.QtWidgets" in imported and "foundry.ui.window.main_window" in imported
    early = [name for name in imported if name.startswith(LOADED_AFTER_THE_WINDOW)]
    assert early == []


IMPORTS_OF_APP_AND_ENGINE = """
import importlib, json, sys
from foundry.runtime.engine import Engine
from foundry.ui.window.main_window import WINDOW_PARTS
for module in WINDOW_PARTS:
    importlib.import_module(module)
print(json.dumps(sorted(sys.modules)))
"""


def test_the_ollama_client_is_imported_only_once_ollama_is_named() -> None:
    """httpx and the Ollama client (5 MiB, more where httpx's command line is installed) are not
    in the app's memory when no agent uses Ollama."""
    imported = modules_imported_by(IMPORTS_OF_APP_AND_ENGINE)

    assert "foundry.ui.editor.provider_probe" in imported  # the test reads what it means to
    client = [name for name in imported if name == "httpx" or name.startswith(("httpx.", "ollama"))]
    assert client == []


def test_every_module_the_window_imports_late_is_imported_with_the_engine() -> None:
    parts = Path(inspect.getfile(window_package)).parent.glob("*.py")
    trees = [ast.parse(part.read_text(encoding="utf-8")) for part in parts]
    functions = [
        node
        for tree in trees
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]
    late = {
        node.module
        for function in functions
        for node in ast.walk(function)
        if isinstance(node, ast.ImportFrom) and node.module
    }

    assert late  # the test reads the imports it means to
    assert late <= set(WINDOW_PARTS)


def test_the_window_offers_nothing_that_needs_the_engine_until_it_is_attached(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    agent = write_agent(tmp_path / "helper", {"turns": [{"text": "Hello."}]}, servers={})
    window = MainWindow()
    qtbot.addWidget(window)
    window.show()

    assert window.agent_panel.text() == LOADING
    assert window.statusBar().currentMessage() == LOADING and window.progress.isVisible()
    enabled = [text for text, action in actions_of(window).items() if action.isEnabled()]
    assert enabled == NEEDING_NO_ENGINE
    assert not drag_is_accepted(window, agent)
    save_screenshot(window, tmp_path, "window-loading.png")

    window.attach(bridge)

    assert window.agent_panel.text() == NO_AGENT and not window.progress.isVisible()
    assert all(action.isEnabled() for action in actions_of(window).values())
    assert "Open &Recent" in [
        action.text() for action in window.menuBar().actions()[0].menu().actions()
    ]
    assert drag_is_accepted(window, agent)


@dataclass
class HeldEngine:
    """The app's engine, started only once `release` is set."""

    release: threading.Event = field(default_factory=threading.Event)
    started: list[Engine] = field(default_factory=list)


@pytest.fixture
def held_engine(monkeypatch: pytest.MonkeyPatch) -> HeldEngine:
    held = HeldEngine()
    real_start = foundry_app.start_engine

    def start_when_released() -> Engine:
        assert held.release.wait(30)
        held.started.append(real_start())
        return held.started[0]

    monkeypatch.setattr(foundry_app, "start_engine", start_when_released)
    return held


def test_start_up_shows_the_window_then_opens_the_agent_once_the_engine_is_there(
    qtbot: QtBot, held_engine: HeldEngine, tmp_path: Path
) -> None:
    agent = write_agent(tmp_path / "helper", {"turns": [{"text": "Hello."}]}, servers={})
    window = MainWindow()
    qtbot.addWidget(window)
    running = asyncio.ensure_future(foundry_app._main(window, agent))
    qtbot.waitUntil(window.isVisible, timeout=5000)
    qtbot.wait(50)

    assert not window.engine_ready and window.agent_panel.text() == LOADING

    held_engine.release.set()
    qtbot.waitUntil(lambda: window.tabs.count() == 1, timeout=30000)
    assert window.engine_ready and window.windowTitle() == "helper — Foundry"
    window.close()
    qtbot.waitUntil(running.done, timeout=30000)
    running.result()
    assert not held_engine.started[0]._thread.is_alive()  # stopped with the window


def test_an_engine_that_cannot_start_is_said_in_the_window(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse() -> Engine:
        raise StoreError("the database was written by a newer Foundry (revision 9999)")

    monkeypatch.setattr(foundry_app, "start_engine", refuse)
    window = MainWindow()
    qtbot.addWidget(window)
    running = asyncio.ensure_future(foundry_app._main(window, None))
    qtbot.waitUntil(lambda: "could not start" in window.statusBar().currentMessage(), timeout=5000)

    assert "newer Foundry (revision 9999)" in window.agent_panel.text()
    assert not window.progress.isVisible()
    enabled = [text for text, action in actions_of(window).items() if action.isEnabled()]
    assert enabled == NEEDING_NO_ENGINE
    window.close()
    qtbot.waitUntil(running.done, timeout=5000)


def test_a_window_closed_while_the_engine_loads_opens_nothing_and_stops_it(
    qtbot: QtBot, held_engine: HeldEngine, tmp_path: Path
) -> None:
    agent = write_agent(tmp_path / "helper", {"turns": [{"text": "Hello."}]}, servers={})
    window = MainWindow()
    qtbot.addWidget(window)
    running = asyncio.ensure_future(foundry_app._main(window, agent))
    qtbot.waitUntil(window.isVisible, timeout=5000)

    window.close()
    held_engine.release.set()
    qtbot.waitUntil(running.done, timeout=30000)

    running.result()
    assert not window.engine_ready and window.tabs.count() == 0
    assert not held_engine.started[0]._thread.is_alive()
