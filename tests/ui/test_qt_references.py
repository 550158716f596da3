"""Qt's Python binding keeps its references: no call takes one from None, True or False, and a
process that shows the dashboards exits cleanly.

PySide6 6.12.0 (shiboken6 6.12.0, an abi3 wheel) returns None, True and False from its calls
without a reference of their own on Python 3.11, where they are not immortal: every such call
takes one of theirs, until None is deallocated. `pytest -k dashboard tests/ui` ran its 25 tests
and aborted the interpreter at exit ("Fatal Python error: none_dealloc"); a longer session would
abort in use. pyproject.toml excludes that release."""

from __future__ import annotations

import asyncio
import gc
import os
import subprocess
import sys
from pathlib import Path

import PySide6
from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

REPO = Path(__file__).resolve().parents[2]
CALLS = 2000
REFRESHES = 300  # of the dashboards in the child: 45,000 calls that return None, and more


class _Pinged(QObject):
    ping = Signal()


def _references_to(value: object) -> int:
    gc.collect()
    return sys.getrefcount(value)


def test_a_qt_call_that_returns_none_or_a_bool_keeps_their_references(qtbot: QtBot) -> None:
    label = QLabel()
    qtbot.addWidget(label)
    pinged = _Pinged()
    pinged.ping.connect(lambda: None)
    label.setText("x")  # (whatever a first call keeps for later)
    pinged.ping.emit()
    before = _references_to(None)
    for _ in range(CALLS):
        label.setText("x")  # returns None
    assert _kept(before, _references_to(None)), f"PySide6 {PySide6.__version__} drops None's"
    before = _references_to(True)
    for _ in range(CALLS):
        pinged.ping.emit()  # returns True
    assert _kept(before, _references_to(True)), f"PySide6 {PySide6.__version__} drops True's"


def _kept(before: int, after: int) -> bool:
    """Whether the calls left the references be: the faulty release takes one per call. A few
    may come and go meanwhile with another thread's work (a worker an earlier test left
    idling between two tasks), never thousands."""
    return before - after < CALLS // 10


def test_a_process_that_shows_the_dashboards_exits_cleanly(tmp_path: Path) -> None:
    child = (
        "import sys; from tests.ui.test_qt_references import show_dashboards; "
        "show_dashboards(sys.argv[1])"
    )
    store = tmp_path / "metrics.sqlite3"
    environment = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run(
        [sys.executable, "-c", child, str(store)],
        cwd=REPO,
        env=environment,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, f"exit {done.returncode}:\n{done.stdout}\n{done.stderr[-3000:]}"
    assert "Fatal Python error" not in done.stderr
    assert done.stdout.strip() == f"shown {REFRESHES} times"


def show_dashboards(database: str) -> None:
    """The child: the dashboards of a store holding the fixture log, read and drawn again and
    again through the controller, as the app follows new events; then everything closed and the
    interpreter left to end as it does."""
    import qasync
    from PySide6.QtWidgets import QApplication

    from foundry.metrics import keep_aggregates
    from foundry.runtime.engine import Engine
    from foundry.store import Store
    from foundry.ui.bridge import EngineBridge
    from foundry.ui.dashboards import DashboardController, DashboardView
    from tests.metrics.fixture_log import full_log
    from tests.metrics.test_loader import write

    app = QApplication([])
    store = keep_aggregates(Store.open(f"sqlite:///{database}"))
    write(store, full_log())
    engine = Engine(store).start()
    bridge = EngineBridge(engine)
    view = DashboardView()
    controller = DashboardController(view, bridge)

    async def refresh_again_and_again() -> None:
        view.resize(1280, 1400)
        view.show()
        for _ in range(REFRESHES):
            await controller.refresh()
            view.grab()

    with asyncio.Runner(loop_factory=lambda: qasync.QEventLoop(app)) as runner:
        runner.run(refresh_again_and_again())
    controller.close()
    view.close()
    bridge.close()
    engine.stop()
    store.close()
    print(f"shown {REFRESHES} times")
