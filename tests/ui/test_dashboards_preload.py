"""The dashboards made ready ahead of View > Dashboards: preloaded by the app once its first chat
is ready, shared with an opening that comes while it runs, and a failure reported, not lost."""

from __future__ import annotations

import asyncio
import logging
import threading
from pathlib import Path
from types import ModuleType

import pytest
from PySide6.QtCore import QEvent, QObject
from pytestqt.qtbot import QtBot

from foundry.metrics import keep_aggregates
from foundry.orchestration.events import CriterionScored
from foundry.session.events import Event
from foundry.store import Store
from foundry.ui import app as foundry_app
from foundry.ui.bridge import EngineBridge
from foundry.ui.dashboards.chart import Chart
from foundry.ui.window import preloads
from foundry.ui.window.main_window import MainWindow

from ..metrics.fixture_log import DOCS_TASK, at, full_log
from ..metrics.test_loader import write
from ..runtime.conftest import write_agent
from .test_dashboards import bars, heights, wait_for


class Imports:
    """Counts the imports of the dashboards; each waits for `release` and fails while `failing`."""

    def __init__(self) -> None:
        self.count = 0
        self.release = threading.Event()
        self.release.set()
        self.failing = 0
        self._import = preloads.import_dashboards

    def __call__(self) -> ModuleType:
        self.count += 1
        assert self.release.wait(30)
        if self.failing:
            self.failing -= 1
            raise ImportError("No module named 'pyqtgraph'")
        return self._import()


@pytest.fixture
def imports(monkeypatch: pytest.MonkeyPatch) -> Imports:
    counted = Imports()
    monkeypatch.setattr(preloads, "import_dashboards", counted)
    return counted


def dashboard_tabs(window: MainWindow) -> list[int]:
    return [i for i in range(window.tabs.count()) if window.tabs.tabText(i) == "Dashboards"]


def test_the_app_preloads_the_dashboards_hidden_once_the_first_chat_is_ready(
    qtbot: QtBot, imports: Imports, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    freezes: list[int] = []
    monkeypatch.setattr(foundry_app.gc, "freeze", lambda: freezes.append(len(freezes)))
    agent = write_agent(tmp_path / "helper", {"turns": [{"text": "Hello."}]}, servers={})
    window = MainWindow()
    qtbot.addWidget(window)
    running = asyncio.ensure_future(foundry_app._main(window, agent))
    qtbot.waitUntil(lambda: window.dashboards is not None, timeout=30000)
    view = window.dashboards
    assert view is not None

    assert window.tabs.count() == 1 and dashboard_tabs(window) == []  # the chat, not them
    assert not view.isVisible() and "events" in view.status.text()  # read while hidden
    assert imports.count == 1
    qtbot.waitUntil(lambda: len(freezes) == 2)  # after start-up, then after the preload
    laid_out = view.size()

    window.show_dashboards()
    qtbot.waitUntil(lambda: window.tabs.currentWidget() is view)
    assert imports.count == 1
    assert view.size() == laid_out  # laid out at the size it is shown at: not again
    window.close()
    qtbot.waitUntil(running.done, timeout=30000)
    running.result()


def test_dashboards_opened_while_the_preload_runs_wait_for_it(
    qtbot: QtBot, bridge: EngineBridge, imports: Imports
) -> None:
    write(bridge.engine.store, full_log())
    window = MainWindow(bridge)
    qtbot.addWidget(window)
    window.show()
    imports.release.clear()
    preload = window.preload_dashboards()
    opening = asyncio.ensure_future(window.open_dashboards())
    qtbot.wait(100)

    assert not opening.done() and window.progress.isVisible()  # busy, waiting for the preload
    imports.release.set()
    wait_for(qtbot, opening)

    assert preload.done() and imports.count == 1  # imported and built once
    view = window.dashboards
    assert view is not None and window.tabs.currentWidget() is view
    assert len(dashboard_tabs(window)) == 1 and not window.progress.isVisible()
    assert heights(bars(view.iterations)[0]) == [2, 1]
    window.close()


class Paints(QObject):
    """Counts the paints of each chart's canvas."""

    def __init__(self, charts: list[Chart]) -> None:
        super().__init__()
        self.charts = {chart.graphics.viewport(): chart for chart in charts}
        self.counts: dict[str, int] = {}
        for canvas in self.charts:
            canvas.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        chart = self.charts.get(watched)  # type: ignore[call-overload]
        if chart is not None and event.type() == QEvent.Type.Paint:
            self.counts[chart.title] = self.counts.get(chart.title, 0) + 1
        return False


def test_preloaded_dashboards_paint_each_chart_once_when_opened_in_an_active_window(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    """The window's activation, which a view passes on to its scene when it is shown, would
    have every chart painted twice more (each of its items updates on it)."""
    write(bridge.engine.store, full_log())
    window = MainWindow(bridge)
    qtbot.addWidget(window)
    window.resize(1600, 2600)  # every chart in view
    window.show()
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    agent = write_agent(tmp_path / "helper", {"turns": [{"text": "Hello."}]}, servers={})
    wait_for(qtbot, asyncio.ensure_future(window.open_agent(agent)))  # the tab they size to
    wait_for(qtbot, window.preload_dashboards())
    view = window.dashboards
    assert view is not None
    paints = Paints(view.charts())
    wait_for(qtbot, asyncio.ensure_future(window.open_dashboards()))
    qtbot.waitUntil(lambda: len(paints.counts) == len(view.charts()))
    qtbot.wait(100)  # (the paints that followed came within a few milliseconds)
    assert paints.counts == {chart.title: 1 for chart in view.charts()}
    window.close()


def score_from_another_process(store: Store, minute: int) -> None:
    score = CriterionScored(criterion="docs complete", iteration=2, score=97.0, level="pass")
    with Store.open(store.url) as other:  # another Foundry on the same database
        keep_aggregates(other)
        last = other.events.last_seq(DOCS_TASK)
        write(other, [Event(session_id=DOCS_TASK, seq=last + 1, time=at(minute), body=score)])


def test_preloaded_dashboards_show_and_follow_the_events_of_every_process(
    qtbot: QtBot, bridge: EngineBridge
) -> None:
    write(bridge.engine.store, full_log())
    window = MainWindow(bridge)
    qtbot.addWidget(window)
    window.show()
    wait_for(qtbot, window.preload_dashboards())
    view = window.dashboards
    assert view is not None
    assert view.confidence_time.summary.text().startswith("9 decisions")

    score_from_another_process(bridge.engine.store, 1047)  # after the preload, before opening
    wait_for(qtbot, asyncio.ensure_future(window.open_dashboards()))
    assert view.confidence_time.summary.text().startswith("10 decisions")  # read before shown
    score_from_another_process(bridge.engine.store, 1048)  # in view: no Refresh
    qtbot.waitUntil(lambda: view.confidence_time.summary.text().startswith("11 decisions"))
    window.close()


def test_a_failed_preload_is_logged_and_opening_the_dashboards_tries_again(
    qtbot: QtBot, bridge: EngineBridge, imports: Imports, caplog: pytest.LogCaptureFixture
) -> None:
    write(bridge.engine.store, full_log())
    window = MainWindow(bridge)
    qtbot.addWidget(window)
    window.show()
    imports.failing = 2
    preload = window.preload_dashboards()
    qtbot.waitUntil(preload.done, timeout=20000)

    failures = [r for r in caplog.records if r.message == "preloading the dashboards failed"]
    assert len(failures) == 1 and failures[0].levelno == logging.ERROR
    assert failures[0].exc_info is not None and "pyqtgraph" in str(failures[0].exc_info[1])
    assert window.dashboards is None

    wait_for(qtbot, asyncio.ensure_future(window.open_dashboards()))  # fails again: said
    assert "Could not load the dashboards: No module named 'pyqtgraph'" in (
        window.statusBar().currentMessage()
    )
    assert window.dashboards is None and not window.progress.isVisible()

    wait_for(qtbot, asyncio.ensure_future(window.open_dashboards()))  # the cause gone: shown
    view = window.dashboards
    assert view is not None and window.tabs.currentWidget() is view
    assert imports.count == 3
    window.close()


def test_a_window_closed_while_the_preload_runs_stops_it(
    qtbot: QtBot, bridge: EngineBridge, imports: Imports
) -> None:
    window = MainWindow(bridge)
    qtbot.addWidget(window)
    window.show()
    imports.release.clear()
    preload = window.preload_dashboards()
    qtbot.wait(50)

    window.close()
    imports.release.set()
    qtbot.waitUntil(preload.done, timeout=20000)

    assert preload.cancelled() and window.dashboards is None
