"""The metrics dashboards on a store holding the fixture log: plotted figures, filters, exports,
events of another process shown without Refresh."""

from __future__ import annotations

import asyncio
import csv
import threading
from collections.abc import Callable, Coroutine, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

import pytest
import sqlalchemy as sa
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication, QToolTip
from pytestqt.qtbot import QtBot

from foundry.metrics import TASK_CHECKS, dashboard_series, keep_aggregates
from foundry.orchestration.events import CriterionScored
from foundry.session.events import Event
from foundry.store import Store
from foundry.ui.bridge import EngineBridge
from foundry.ui.dashboards import DashboardController, DashboardView
from foundry.ui.dashboards import chart as chart_module
from foundry.ui.dashboards import controller as controller_module
from foundry.ui.dashboards.call_charts import HumanWaitChart
from foundry.ui.dashboards.chart import NO_DATA_FOR_FILTERS, Chart
from foundry.ui.window.main_window import MainWindow

from ..metrics.fixture_log import DOCS_TASK, at, full_log
from ..metrics.synthetic_log import shifted, synthetic_log
from ..metrics.test_loader import write
from .conftest import save_screenshot
from .test_dashboards_layout import drawn_tick_labels

Dashboards = tuple[DashboardView, DashboardController]
T = TypeVar("T")
CTRL_SHIFT = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier


def wait_for(qtbot: QtBot, task: asyncio.Future[None]) -> None:
    qtbot.waitUntil(task.done, timeout=20000)
    task.result()


@pytest.fixture
def dashboards(qtbot: QtBot, bridge: EngineBridge) -> Iterator[Dashboards]:
    write(bridge.engine.store, full_log())
    view = DashboardView()
    qtbot.addWidget(view)
    controller = DashboardController(view, bridge, poll_ms=100)
    view.resize(1400, 1500)
    view.show()  # showing it reads the figures
    qtbot.waitUntil(lambda: controller.figures.task_bins != (), timeout=20000)
    yield view, controller
    controller.close()


def heights(item: object) -> list[float]:
    return [float(value) for value in item.opts["height"]]  # type: ignore[attr-defined]


def bars(chart: object) -> list[object]:
    from pyqtgraph import BarGraphItem

    items = chart.plot.items  # type: ignore[attr-defined]
    return [item for item in items if isinstance(item, BarGraphItem) and item.isVisible()]


def choose(qtbot: QtBot, controller: DashboardController, combo: object, data: str) -> None:
    with qtbot.waitSignal(controller.updated, timeout=20000):
        combo.setCurrentIndex(combo.findData(data))  # type: ignore[attr-defined]


def minute(number: int) -> float:
    """The middle of the fixture log's minute `number`, where its bin is drawn."""
    return at(number * 60 + 30).timestamp()


def test_the_charts_plot_the_figures_of_the_event_log(dashboards: Dashboards) -> None:
    view, _ = dashboards  # the log spans 18 minutes: drawn in bins of a minute
    confidence = view.confidence_time
    times, scores = confidence.supervisor_data(TASK_CHECKS)  # a task's criteria, every level
    assert list(times) == [minute(2), minute(9), minute(17)]
    assert list(scores) == [(82 + 40 + 55) / 3, (90 + 45) / 2, 88.0]
    # a chat's message supervisors (the curator's fallback states no confidence) and its L1
    assert list(confidence.supervisor_data("guardian")[1]) == [100.0]
    assert list(confidence.supervisor_data("architect")[1]) == [62.0]
    assert list(confidence.supervisor_data("tool supervisor (L1)")) == [[minute(8)], [92.0]]
    assert confidence.summary.text() == "9 decisions · mean 73 % · 4 supervisors"
    # bins of 10: 40 and 45 -> 40-50, 55 -> 50-60, the architect's 62 -> 60-70, 82 and 88 ->
    # 80-90, 90 and the guardian's 100 and the L1's 92 -> 90-100
    assert list(view.confidence_histogram.totals()) == [0, 0, 0, 0, 2, 1, 1, 0, 2, 3]
    assert len(bars(view.confidence_histogram)) == 4  # stacked, a supervisor each
    assert heights(bars(view.iterations)[0]) == [2, 1]  # a task started in each bin
    shares = {  # stacked bars: one item per phase, bins side by side
        phase: (heights(item), [float(v) for v in item.opts["y0"]])
        for phase, item in view.phase_shares.bars.items()
    }
    # waiting is stacked on planning, agent execution, validation, helper, interrogation, rescue:
    # 7.8125 + 32.8125 + 12.5 + 4.6875 + 7.8125 + 7.8125 = 73.4375 for add-endpoint, 100 for docs
    assert shares["waiting_for_approval"] == ([20.3125, 0.0], [73.4375, 100.0])
    assert shares["agent_execution"] == ([32.8125, 60.0], [7.8125, 20.0])
    tokens_in, tokens_out = bars(view.tokens)  # two calls in minute 2, one in each other bin
    assert heights(tokens_in) == [300, 650, 550, 220, 380, 120, 200]
    assert heights(tokens_out) == [200, 500, 450, 70, 150, 30, 600]
    assert view.tokens.summary.text() == "8 calls · 2,420 in · 2,000 out"
    whole, first = view.latency.plot.listDataItems()
    assert list(whole.getData()[1]) == [18.5, 16.5, 38.5, 8.0, 13.5, 2.0, 23.0]
    assert list(first.getData()[1]) == [0.5, 1.0, 1.5, 0.5, 0.25, 0.25]  # none in minute 9
    # policy, grant, supervisor (L1), human, timeout, message supervisors, task checks
    allowed, changed, escalated, denied = bars(view.resolutions)
    assert heights(allowed) == [1, 1, 0, 1, 0, 2, 3]
    assert heights(changed) == [0, 0, 0, 0, 0, 1, 0]  # the architect's change
    assert heights(escalated) == [0, 0, 1, 0, 0, 0, 1]  # sent on to a person; uncertain
    assert heights(denied) == [0, 0, 1, 0, 1, 0, 2]
    waits = {name: list(dots.getData()[1]) for name, dots in view.human_waits.dots.items()}
    assert waits == {"approved": [65.0], "timed out": [90.0]}
    assert view.human_waits.summary.text() == "2 approvals · mean 77.5 s · longest 90.0 s"
    assert view.resolutions.summary.text() == "15 decisions · 6.7 % by a human"
    # 73 events in the log, less a token, which no chart needs
    assert view.status.text().startswith("72 events")


def test_hovering_a_bar_or_a_point_tells_its_values(dashboards: Dashboards) -> None:
    view, _ = dashboards
    iterations = view.iterations
    over_first_bar = iterations.plot.vb.mapViewToScene(QPointF(minute(0), 1.0))
    text = iterations.hover_text(over_first_bar)
    assert text is not None and text.startswith("1 task started · mean 2.0 iterations\n1 failed")
    between_bars = iterations.plot.vb.mapViewToScene(QPointF(minute(8), 1.0))
    assert iterations.hover_text(between_bars) is None
    point = view.confidence_time.plot.vb.mapViewToScene(QPointF(minute(2), 59.0))
    text = view.confidence_time.hover_text(point)
    assert text is not None and text.startswith("task checks: 3 decisions · mean 59.0 %")
    segment = view.phase_shares.plot.vb.mapViewToScene(QPointF(minute(0), 80.0))
    text = view.phase_shares.hover_text(segment)
    assert text is not None and text.startswith("waiting for a human · 1 task\n20.3 % · 65.0 s")
    assert view.resolutions.describe(3.0, 0.5) == "human (L2): 1 allowed · 0 denied"
    tokens = view.tokens.plot.vb.mapViewToScene(QPointF(minute(2), 100.0))
    assert view.tokens.hover_text(tokens).startswith("2 calls · 650 in · 500 out")  # type: ignore[union-attr]


def test_moving_the_mouse_over_a_chart_shows_its_tooltip(
    dashboards: Dashboards, qtbot: QtBot
) -> None:
    view, _ = dashboards
    iterations = view.iterations
    over_first_bar = iterations.plot.vb.mapViewToScene(QPointF(minute(0), 1.0))
    iterations.graphics.scene().sigMouseMoved.emit(over_first_bar)  # as a real mouse move does
    qtbot.waitUntil(lambda: QToolTip.text().startswith("1 task started"))
    assert view.confidence_histogram.describe(85.0, 1.0) == "80 to 90 %: 2 decisions\ntask checks 2"


def test_moving_the_mouse_over_each_chart_shows_what_is_there(
    dashboards: Dashboards, qtbot: QtBot
) -> None:
    view, _ = dashboards
    spots = {  # a bar, a dot or a bin of each chart, in data coordinates
        view.confidence_time: (minute(2), 59.0),
        view.confidence_histogram: (85.0, 1.0),
        view.iterations: (minute(0), 1.0),
        view.phase_shares: (minute(0), 80.0),
        view.tokens: (minute(2), 100.0),
        view.latency: (minute(2), 16.5),
        view.resolutions: (3.0, 0.5),
        view.human_waits: (minute(1), 65.0),
        view.decisions_over_time: (minute(1), 0.5),
        view.escalations: (minute(1), 100.0),
        view.questions: (minute(1), 50.0),
    }
    # the fixture log has no shadow verdicts (test_dashboards_supervision.py has)
    assert set(spots) == set(view.charts()) - {view.agreements}
    for chart, (x, y) in spots.items():
        view.scroller.ensureWidgetVisible(chart)
        expected = chart.describe(x, y)
        assert expected
        viewport = chart.graphics.viewport()
        where = chart.graphics.mapFromScene(chart.plot.vb.mapViewToScene(QPointF(x, y)))
        qtbot.mouseMove(viewport, where)  # a real move: Qt's event, pyqtgraph's signal
        qtbot.waitUntil(lambda expected=expected: QToolTip.text() == expected)
        QToolTip.hideText()


def test_filters_change_the_plotted_data(qtbot: QtBot, dashboards: Dashboards) -> None:
    view, controller = dashboards
    assert [view.agent.itemData(i) for i in range(view.agent.count())] == [
        "",
        "assistant",
        "coder",
        "planner",
        "reviewer",
        "tester",
        "writer",
    ]
    choose(qtbot, controller, view.agent, "coder")
    assert heights(bars(view.tokens)[0]) == [650, 550]
    assert heights(bars(view.iterations)[0]) == [2]  # the task coder worked for
    # the coder's chat's calls, and the criteria of the task it worked for
    assert heights(bars(view.resolutions)[0]) == [1, 0, 0, 1, 0, 0, 2]
    choose(qtbot, controller, view.agent, "")
    choose(qtbot, controller, view.task, DOCS_TASK)
    assert list(view.confidence_time.supervisor_data(TASK_CHECKS)[1]) == [88.0]
    assert heights(bars(view.tokens)[0]) == [200]
    assert view.human_waits.summary.text() == ""  # nothing to show: the chart says so
    choose(qtbot, controller, view.task, "")
    with qtbot.waitSignal(controller.updated, timeout=20000):
        view.set_custom_range(at(540), at(600))  # 09:09 to 09:10, whole minutes
    assert list(view.confidence_time.supervisor_data(TASK_CHECKS)[1]) == [(90 + 45) / 2]
    assert bars(view.iterations) == [] and view.iterations.summary.text() == ""  # none started


def finished(qtbot: QtBot, export: Coroutine[Any, Any, T]) -> T:
    task = asyncio.ensure_future(export)
    qtbot.waitUntil(task.done, timeout=20000)
    return task.result()


def test_exports_write_a_picture_and_the_rows(
    qtbot: QtBot, dashboards: Dashboards, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    view, controller = dashboards
    writers: list[bool] = []  # whether each CSV was written on the GUI thread
    monkeypatch.setattr(chart_module.csv, "writer", on_which_thread(csv.writer, writers))
    picture = finished(
        qtbot, controller.save_chart(view.phase_shares, "png", tmp_path / "phases.png")
    )
    image = QImage(str(picture))
    assert image.width() == 1600 and image.height() > 300
    rows = list(
        csv.reader(
            finished(
                qtbot, controller.save_chart(view.iterations, "csv", tmp_path / "i.csv")
            ).open()
        )
    )
    assert rows == [
        ["bin_start", "bin_seconds", "tasks", "iterations", "mean_iterations", "statuses"],
        ["2025-03-01T09:00:00+00:00", "60", "1", "2", "2.0", "1 failed"],
        ["2025-03-01T09:16:00+00:00", "60", "1", "1", "1.0", "1 succeeded"],
    ]
    written = finished(qtbot, controller.export_all(tmp_path / "all"))
    assert sorted(path.suffix for path in written) == [".csv"] * 12 + [".png"] * 12
    assert all(path.stat().st_size > 0 for path in written)
    with (tmp_path / "all" / "human-wait-per-approval.csv").open() as file:
        assert [row["mean_s"] for row in csv.DictReader(file)] == ["65.0", "90.0"]
    assert writers == [False] * 13  # the CSVs were written off the GUI thread


def on_which_thread(write: Callable[..., T], gui: list[bool]) -> Callable[..., T]:
    def recorded(*args: Any) -> T:
        gui.append(threading.current_thread() is threading.main_thread())
        return write(*args)

    return recorded


def test_events_of_another_process_show_up_without_refresh(
    qtbot: QtBot, dashboards: Dashboards, bridge: EngineBridge
) -> None:
    view, _ = dashboards
    score = CriterionScored(criterion="docs complete", iteration=2, score=97.0, level="pass")
    with Store.open(bridge.engine.store.url) as other:  # another Store on the same database
        keep_aggregates(other)
        last = other.events.last_seq(DOCS_TASK)
        scores = [
            Event(session_id=DOCS_TASK, seq=last + n, time=at(1046 + n), body=score)
            for n in range(1, 6)
        ]
        write(other, scores)
    qtbot.waitUntil(lambda: view.confidence_time.summary.text().startswith("14 decisions"))
    last = view.confidence_time.supervisor_data(TASK_CHECKS)[1][-1]
    assert last == pytest.approx((88 + 5 * 97) / 6)
    assert view.status.text().startswith("77 events")


def test_dashboards_over_incomplete_aggregates_say_how_to_mend_them(
    qtbot: QtBot, dashboards: Dashboards, bridge: EngineBridge
) -> None:
    view, _ = dashboards
    with bridge.engine.store.engine.begin() as connection:  # as after a fold that failed
        connection.execute(sa.text("UPDATE metrics_state SET complete = false, version = 0"))
    qtbot.waitUntil(lambda: "foundry metrics rebuild" in view.status.text())
    assert view.status.text().startswith("72 events")


def test_the_dashboards_of_many_task_runs(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    generated = synthetic_log(14, seed=11)  # about 2.5 hours of work, ending a minute ago
    events = shifted(generated, datetime.now(UTC) - timedelta(minutes=1) - generated[-1].time)
    write(bridge.engine.store, events)
    expected = dashboard_series(events)
    view = DashboardView()
    qtbot.addWidget(view)
    controller = DashboardController(view, bridge)
    view.resize(1500, 1560)
    view.show()
    qtbot.waitUntil(lambda: controller.figures.task_bins != (), timeout=20000)
    iterations = [p.iterations for p in expected.iterations]
    assert view.iterations.summary.text() == (
        f"{len(iterations)} tasks · mean {sum(iterations) / len(iterations):.1f} iterations"
    )
    assert view.tokens.summary.text().startswith(f"{len(expected.model_calls)} calls")
    with qtbot.waitSignal(controller.updated, timeout=20000):
        view.time_range.setCurrentText("Last hour")
    hour_ago = datetime.now(UTC) - timedelta(hours=1)
    recent = [p.iterations for p in expected.iterations if p.time >= hour_ago]
    assert 0 < len(recent) < len(expected.iterations)
    assert view.iterations.summary.text().startswith(f"{len(recent)} tasks")
    with qtbot.waitSignal(controller.updated, timeout=20000):
        view.time_range.setCurrentText("All time")
    qtbot.wait(50)
    save_screenshot(view, tmp_path, "dashboards.png")
    controller.close()


def test_view_dashboards_opens_a_live_tab_in_the_main_window(
    qtbot: QtBot, bridge: EngineBridge
) -> None:
    write(bridge.engine.store, full_log())
    window = MainWindow(bridge)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    views = [a for a in window.menuBar().actions() if a.text() == "&View"]
    assert len(views) == 1
    view_menu = views[0].menu()  # kept in a name: PySide6 before 6.12 frees an unnamed one
    dashboards = next(a for a in view_menu.actions() if a.text() == "&Dashboards")
    assert dashboards.shortcut().toString() == "Ctrl+Shift+M"
    window.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is window)
    qtbot.keyClick(window, Qt.Key.Key_M, CTRL_SHIFT)
    qtbot.waitUntil(lambda: window.tabs.tabText(window.tabs.currentIndex()) == "Dashboards")
    view = window.dashboards
    assert view is not None
    assert heights(bars(view.iterations)[0]) == [2, 1]  # drawn before the tab is shown
    window.close_tab(window.tabs.indexOf(view))
    assert window.tabs.indexOf(view) < 0
    dashboards.trigger()  # shown again: the same tab, not a second one
    dashboards.trigger()
    qtbot.waitUntil(lambda: window.tabs.currentWidget() is view)
    assert [window.tabs.tabText(i) for i in range(window.tabs.count())].count("Dashboards") == 1
    window.close()


def test_a_failed_read_is_tried_again_when_the_dashboards_are_shown_again(
    qtbot: QtBot, bridge: EngineBridge, monkeypatch: pytest.MonkeyPatch
) -> None:
    view = DashboardView()
    qtbot.addWidget(view)
    controller = DashboardController(view, bridge)
    reads: list[int] = []

    def unreadable(*args: object) -> None:
        reads.append(1)
        raise OSError("database is locked")

    monkeypatch.setattr(controller_module, "read_figures", unreadable)
    view.show()
    qtbot.waitUntil(lambda: reads == [1] and "database is locked" in view.status.text())
    view.hide()
    view.show()
    qtbot.waitUntil(lambda: len(reads) >= 2, timeout=2000)
    controller.close()


def test_dashboards_that_cannot_load_say_why_and_stop_the_progress_bar(
    qtbot: QtBot, bridge: EngineBridge, monkeypatch: pytest.MonkeyPatch
) -> None:
    window = MainWindow(bridge)
    qtbot.addWidget(window)
    window.show()

    def missing(name: str) -> None:
        raise ImportError("No module named 'pyqtgraph'")

    monkeypatch.setattr("importlib.import_module", missing)
    opening = asyncio.ensure_future(window.open_dashboards())
    qtbot.waitUntil(opening.done, timeout=5000)
    opening.result()
    assert not window.progress.isVisible() and window.dashboards is None
    assert "pyqtgraph" in window.statusBar().currentMessage()


def test_dashboards_opened_again_are_read_again_only_when_something_changed(
    qtbot: QtBot, bridge: EngineBridge, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(bridge.engine.store, full_log())
    window = MainWindow(bridge)
    qtbot.addWidget(window)
    window.show()
    reads: list[object] = []
    read_figures = controller_module.read_figures
    monkeypatch.setattr(
        controller_module, "read_figures", lambda *args: reads.append(args) or read_figures(*args)
    )
    wait_for(qtbot, asyncio.ensure_future(window.open_dashboards()))
    view = window.dashboards
    assert view is not None and len(reads) == 1
    window.close_tab(window.tabs.indexOf(view))
    wait_for(qtbot, asyncio.ensure_future(window.open_dashboards()))
    qtbot.wait(600)  # polls of the version meanwhile
    assert len(reads) == 1  # nothing new: the charts as they were
    window.close_tab(window.tabs.indexOf(view))
    score = CriterionScored(criterion="docs complete", iteration=2, score=97.0, level="pass")
    with Store.open(bridge.engine.store.url) as other:  # another Foundry, the tab closed
        keep_aggregates(other)
        last = other.events.last_seq(DOCS_TASK)
        write(other, [Event(session_id=DOCS_TASK, seq=last + 1, time=at(1047), body=score)])
    wait_for(qtbot, asyncio.ensure_future(window.open_dashboards()))
    assert len(reads) == 2  # read and drawn before the tab was shown
    assert view.confidence_time.summary.text().startswith("10 decisions")
    assert window.tabs.currentWidget() is view
    window.close()


def percent_ticks(chart: Chart, side: str) -> list[float]:
    """The numbers an axis of the chart labels its ticks with, as drawn."""
    return [float(text) for _, text in drawn_tick_labels(chart.plot.getAxis(side))]


def percent_axes(view: DashboardView) -> list[tuple[Chart, str]]:
    return [
        (view.confidence_time, "left"),
        (view.confidence_histogram, "bottom"),
        (view.phase_shares, "left"),
        (view.escalations, "left"),
        (view.questions, "left"),
        (view.agreements, "left"),
    ]


def shown_empty(qtbot: QtBot, bridge: EngineBridge) -> tuple[DashboardView, DashboardController]:
    """The dashboards of an empty store, shown at 1280x800 once their figures are read."""
    view = DashboardView()
    qtbot.addWidget(view)
    controller = DashboardController(view, bridge, poll_ms=100)
    view.resize(1280, 800)
    view.show()
    qtbot.waitUntil(lambda: controller.shown_for is not None, timeout=20000)
    return view, controller


def test_an_axis_that_says_percent_runs_to_100_with_or_without_data(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    view, controller = shown_empty(qtbot, bridge)
    for chart, side in percent_axes(view):
        assert "(%)" in chart.plot.getAxis(side).labelText
        assert max(percent_ticks(chart, side)) == 100, chart.title  # not 0 to 1.0
    save_screenshot(view, tmp_path, "dashboards-empty.png")
    controller.close()


def test_an_empty_chart_says_that_nothing_of_its_kind_was_recorded_yet(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    view, controller = shown_empty(qtbot, bridge)
    assert view.confidence_time.notice() == (
        "No supervisor decisions yet:\nthey appear when a supervised chat or task runs"
    )
    for chart in view.charts():
        assert chart.notice() == chart.nothing_yet, chart.title
    assert view.human_waits.notice().startswith("No approvals yet")
    save_screenshot(view, tmp_path, "dashboards-nothing-yet.png")
    controller.close()


def test_a_chart_blames_the_filters_only_when_they_leave_out_what_there_is(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    write(bridge.engine.store, [e for e in full_log() if e.session_id == "chat-free"])
    view = DashboardView()
    qtbot.addWidget(view)
    controller = DashboardController(view, bridge, poll_ms=100)
    view.resize(1280, 1400)
    view.show()
    qtbot.waitUntil(lambda: controller.figures.confidence != (), timeout=20000)
    assert view.confidence_time.notice() == ""  # an ordinary chat's supervisors
    assert view.iterations.notice().startswith("No tasks yet")  # no task has run
    with qtbot.waitSignal(controller.updated, timeout=20000):
        view.set_custom_range(at(0), at(300))  # before the chat
    assert view.confidence_time.notice() == NO_DATA_FOR_FILTERS
    assert view.human_waits.notice() == NO_DATA_FOR_FILTERS
    assert drawn_tick_labels(view.resolutions.plot.getAxis("bottom")) == []  # no level named
    assert view.iterations.notice().startswith("No tasks yet")  # still none at all
    save_screenshot(view, tmp_path, "dashboards-filtered-out.png")
    controller.close()


def test_the_confidence_charts_say_percent_in_their_ticks_legends_tips_and_summary(
    dashboards: Dashboards, tmp_path: Path
) -> None:
    view, _ = dashboards
    for chart, side in percent_axes(view):
        assert max(percent_ticks(chart, side)) == 100, chart.title
    supervisors = ["architect", "guardian", TASK_CHECKS, "tool supervisor (L1)"]
    for chart in (view.confidence_time, view.confidence_histogram):
        assert [label.text for _, label in chart.legend.items] == supervisors
    assert view.confidence_time.summary.text() == "9 decisions · mean 73 % · 4 supervisors"
    point = view.confidence_time.plot.vb.mapViewToScene(QPointF(minute(11), 62.0))
    text = view.confidence_time.hover_text(point)
    assert text is not None and text.startswith(
        "architect: 1 decision · mean 62.0 %\nfrom 62 to 62 %"
    )
    bar = view.confidence_histogram.plot.vb.mapViewToScene(QPointF(95.0, 1.0))
    assert view.confidence_histogram.hover_text(bar) == (
        "90 to 100 %: 3 decisions\nguardian 1 · task checks 1 · tool supervisor (L1) 1"
    )
    save_screenshot(view.confidence_time, tmp_path, "confidence-over-time.png")


def count_axes(view: DashboardView) -> list[Chart]:
    """The charts whose y axis counts whole things: decisions, iterations, tokens."""
    return [view.confidence_histogram, view.iterations, view.tokens, view.resolutions]


def tick_texts(chart: Chart) -> list[str]:
    return [text for _, text in drawn_tick_labels(chart.plot.getAxis("left"))]


def test_an_empty_count_axis_is_ticked_0_and_1_and_an_empty_time_axis_tells_no_time(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    view, controller = shown_empty(qtbot, bridge)
    for chart in count_axes(view):
        assert sorted(tick_texts(chart)) == ["0", "1"], chart.title  # not 0.0, 0.2, ... 1.0
    for chart in view.charts():
        if chart.time_axis:  # no "1 Jan" (of 1970)
            assert drawn_tick_labels(chart.plot.getAxis("bottom")) == [], chart.title
    save_screenshot(view, tmp_path, "dashboards-empty-counts.png")
    controller.close()


def test_a_time_axis_emptied_by_a_filter_keeps_no_dates_of_the_data_before(
    qtbot: QtBot, dashboards: Dashboards
) -> None:
    view, controller = dashboards
    axis = view.human_waits.plot.getAxis("bottom")
    assert axis.labelText != HumanWaitChart.x_label and drawn_tick_labels(axis)  # dated
    choose(qtbot, controller, view.task, DOCS_TASK)  # no approval waited for in that task
    assert view.human_waits.summary.text() == ""
    assert axis.labelText == HumanWaitChart.x_label and drawn_tick_labels(axis) == []
    choose(qtbot, controller, view.task, "")
    assert axis.labelText != HumanWaitChart.x_label and drawn_tick_labels(axis)


def test_a_count_axis_with_data_is_ticked_at_whole_numbers(dashboards: Dashboards) -> None:
    view, _ = dashboards  # small counts: 3 decisions in a bin, 1 call a level, 2 iterations
    for chart in count_axes(view):
        texts = tick_texts(chart)
        assert "0" in texts and all(text.isdigit() for text in texts), (chart.title, texts)


def test_the_charts_follow_the_theme_dark_and_back(
    dashboards: Dashboards, qtbot: QtBot, tmp_path: Path
) -> None:
    from foundry.ui.dashboards.palette import DARK_INK, LIGHT_INK
    from foundry.ui.theme import apply_theme

    view, _ = dashboards
    chart = view.confidence_time
    assert chart.ink.text == LIGHT_INK.text
    try:
        apply_theme("dark")
        qtbot.waitUntil(lambda: all(c.ink.text == DARK_INK.text for c in view.charts()))
        for each in view.charts():
            background = each.graphics.backgroundBrush().color()
            assert background.lightness() < 64, each.title
            text = each.plot.getAxis("left").textPen().color()
            assert text.lightness() > 160, each.title
        assert chart.dots and all(  # the dots drawn again, outlined in the dark background
            dots.opts["pen"].color() == background for dots in chart.dots.values()
        )
        legend_colour = chart.legend.opts["labelTextColor"]
        assert legend_colour.lightness() > 160
        save_screenshot(view, tmp_path, "dashboards-dark.png")
    finally:
        apply_theme("system")
    qtbot.waitUntil(lambda: chart.ink.text == LIGHT_INK.text)
    assert chart.graphics.backgroundBrush().color().lightness() > 200
    save_screenshot(view, tmp_path, "dashboards-light.png")


def test_a_supervisors_legend_sample_takes_its_new_colour_when_others_appear(
    qtbot: QtBot,
) -> None:
    from foundry.metrics.figures import DashboardFigures
    from foundry.ui.dashboards.decision_charts import ConfidenceHistogramChart
    from foundry.ui.dashboards.palette import supervisor_colors

    chart = ConfidenceHistogramChart()
    qtbot.addWidget(chart)
    some = (0,) * 9 + (3,)
    chart.show_figures(DashboardFigures(histograms={"guardian": some}))
    both = {"architect": some, "guardian": some}
    chart.show_figures(DashboardFigures(histograms=both))
    colours = supervisor_colors(both)
    samples = {label.text: sample.item for sample, label in chart.legend.items}
    for name, colour in colours.items():
        assert samples[name].opts["brush"] == colour, name  # the bars' colour, not its first
