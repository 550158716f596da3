"""The dashboards' supervision charts on a store holding questions to people and the L1
supervisor's shadow verdicts: decisions by level over time, calls sent to a person, needless
questions, agreement with people (its unsafe verdicts unmissable), hover text, CSV, emptiness."""

from __future__ import annotations

import asyncio
import csv
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from PySide6.QtGui import QPalette
from pytestqt.qtbot import QtBot

from foundry.session.events import ApprovalResolved, Event, SessionStarted, event_payload
from foundry.ui.bridge import EngineBridge
from foundry.ui.dashboards import DashboardController, DashboardView
from foundry.ui.dashboards.chart import NO_DATA_FOR_FILTERS, Chart
from foundry.ui.dashboards.supervision_charts import NO_VERDICTS
from foundry.ui.window.main_window import MainWindow

from ..metrics.fixture_log import (
    GUARDED_CHAT,
    at,
    full_log,
    late_verdict,
    question,
    supervision_log,
)
from ..metrics.synthetic_log import shifted, synthetic_log
from ..metrics.test_loader import write
from .conftest import save_screenshot
from .test_dashboards import bars, heights

Dashboards = tuple[DashboardView, DashboardController]


def minute(number: int) -> float:
    """The middle of minute `number` of the fixture logs (the supervision log's are 20 to 22)."""
    return at(number * 60 + 30).timestamp()


def shown(qtbot: QtBot, bridge: EngineBridge) -> Dashboards:
    view = DashboardView()
    qtbot.addWidget(view)
    controller = DashboardController(view, bridge, poll_ms=100)
    view.resize(1280, 1400)
    view.show()
    qtbot.waitUntil(lambda: controller.shown_for is not None, timeout=20000)
    return view, controller


@pytest.fixture
def dashboards(qtbot: QtBot, bridge: EngineBridge) -> Iterator[Dashboards]:
    write(bridge.engine.store, supervision_log())
    view, controller = shown(qtbot, bridge)
    qtbot.waitUntil(lambda: controller.figures.agreements != (), timeout=20000)
    yield view, controller
    controller.close()


def rounded(values: list[float]) -> list[float]:
    return [round(value, 2) for value in values]


def test_decisions_by_level_are_stacked_in_each_minute(dashboards: Dashboards) -> None:
    view, _ = dashboards
    chart = view.decisions_over_time
    # policy, grant, supervisor (L1: agent7's and q4 sent on), human, timeout
    assert [row[2:] for row in chart.rows] == [(2, 0, 1, 3, 0), (1, 0, 1, 1, 1), (1, 0, 0, 2, 0)]
    human = bars(chart)[3]  # stacked in the order of the levels
    assert heights(human) == [3, 1, 2]
    assert [float(v) for v in human.opts["y0"]] == [3, 2, 1]  # on policy, grant and L1
    assert chart.summary.text() == "13 decisions · 7 waited for a person"
    assert chart.describe(minute(21), 1.0) == (
        "4 decisions: policy (L0) 1 · supervisor (L1) 1 · human (L2) 1 · timed out 1\n"
        + chart.bin_span(chart.rows[1][0])
    )
    assert chart.describe(minute(25), 1.0) is None  # no bin there


def test_the_share_of_tool_calls_sent_to_a_person_counts_each_call_once(
    dashboards: Dashboards,
) -> None:
    """A call the L1 supervisor sent on is one call, decided by a person: its sending-on is
    no second tool call."""
    view, _ = dashboards
    chart = view.escalations
    assert [row[2:5] for row in chart.rows] == [(5, 3, 1), (4, 2, 0), (3, 2, 0)]
    assert rounded(list(chart.dots["to a person"].getData()[1])) == [60.0, 50.0, 66.67]
    assert rounded(list(chart.dots["sent on by L1"].getData()[1])) == [20.0, 0.0, 0.0]
    assert chart.summary.text() == "58.3 % of 12 tool calls went to a person · 8.3 % sent on by L1"
    assert [label.text for _, label in chart.legend.items][-1] == "overall 58.3 %"
    assert chart.describe(minute(20), 60.0) == (
        "3 of 5 tool calls to a person (60.0 %)\n1 sent on by L1 (20.0 %)\n"
        + chart.bin_span(chart.rows[0][0])
    )


def test_needless_questions_are_those_approved_as_asked_with_nothing_flagged(
    dashboards: Dashboards,
) -> None:
    view, _ = dashboards
    chart = view.questions
    unchanged, flagged = bars(chart)[0], bars(chart)[3]  # stacked in the order of outcomes
    assert rounded(heights(unchanged)) == [33.33, 0.0, 100.0]
    assert rounded(heights(flagged)) == [0.0, 50.0, 0.0]
    assert chart.summary.text() == "7 questions · 42.9 % needless"  # agent7's is none
    assert chart.describe(minute(20), 10.0) == (
        "3 questions · 33.3 % needless\n1 needless (approved as asked) · 1 approved edited · "
        f"1 denied\n{chart.bin_span(chart.rows[0][0])}"
    )


def test_a_verdict_that_lets_through_what_a_person_refused_cannot_be_missed(
    dashboards: Dashboards, tmp_path: Path
) -> None:
    view, _ = dashboards
    chart = view.agreements
    assert rounded(list(chart.dots["agreed"].getData()[1])) == [66.67, 0.0, 0.0]
    [unsafe] = bars(chart)
    assert rounded(heights(unsafe)) == [33.33, 0.0, 0.0]  # red, from the axis up
    assert unsafe.opts["brush"] == "#E53935"
    assert chart.marks() == [minute(20)]  # and a red mark on it
    assert chart.summary.text() == "5 verdicts · 40.0 % agreed · 1 let through"
    assert "C62828" in chart.summary.styleSheet()  # in red, where the eye goes first
    assert chart.summary.foregroundRole() == QPalette.ColorRole.WindowText  # not half-faded
    assert "let through what a person denied" in [label.text for _, label in chart.legend.items]
    assert chart.describe(minute(20), 50.0) == (
        "3 verdicts · 66.7 % agreed\n2 agreed\n1 let through what a person denied or changed\n"
        + chart.bin_span(chart.rows[0][0])
    )
    save_screenshot(chart, tmp_path, "supervision-agreement.png")


def test_one_unsafe_verdict_among_many_is_marked_where_it_is(
    qtbot: QtBot, bridge: EngineBridge
) -> None:
    """A let-through among 60 agreements is a red bar of 1.6 %, too thin to see: its bin is
    marked as well."""
    agreed = [question(n, waited=2, shadow="approve") for n in range(60)]
    unsafe = question(60, status="denied", waited=2, shadow="approve")
    log = [
        Event(session_id=GUARDED_CHAT, seq=seq, time=at(1200 + seq / 2), body=body)
        for seq, body in enumerate([*agreed, unsafe], 1)
    ]
    write(bridge.engine.store, log)
    view, controller = shown(qtbot, bridge)
    qtbot.waitUntil(lambda: controller.figures.agreements != (), timeout=20000)
    chart = view.agreements
    assert [row[3:5] for row in chart.rows] == [(60, 1)]
    assert chart.marks() == [minute(20)]
    assert chart.summary.text() == "61 verdicts · 98.4 % agreed · 1 let through"
    controller.close()


def test_an_agreement_with_no_unsafe_verdict_is_not_said_in_red(
    qtbot: QtBot, bridge: EngineBridge
) -> None:
    write(bridge.engine.store, [e for e in supervision_log() if e.seq <= 9])  # q1 agreed only
    view, controller = shown(qtbot, bridge)
    qtbot.waitUntil(lambda: controller.figures.agreements != (), timeout=20000)
    assert view.agreements.summary.text() == "1 verdict · 100.0 % agreed"
    assert view.agreements.summary.styleSheet() == ""
    assert view.agreements.summary.foregroundRole() == QPalette.ColorRole.PlaceholderText  # quiet
    controller.close()


def finished(qtbot: QtBot, task: asyncio.Future[Path]) -> Path:
    qtbot.waitUntil(task.done, timeout=20000)
    return task.result()


def test_each_supervision_chart_exports_the_rows_it_draws(
    qtbot: QtBot, dashboards: Dashboards, tmp_path: Path
) -> None:
    view, controller = dashboards
    charts: list[Chart] = [view.decisions_over_time, view.escalations, view.questions]
    charts.append(view.agreements)
    for chart in charts:
        saving = asyncio.ensure_future(controller.save_chart(chart, "csv", tmp_path / "c.csv"))
        with finished(qtbot, saving).open(newline="") as file:
            rows = list(csv.reader(file))
        assert rows[0] == list(chart.columns), chart.title
        assert len(rows) == 4, chart.title  # a row per minute
        assert rows[1][0] == "2025-03-01T09:20:00+00:00" and rows[1][1] == "60"
    with (tmp_path / "c.csv").open(newline="") as file:  # the agreements'
        first = next(csv.DictReader(file))
    assert (first["agreed"], first["let_through"], first["let_through_percent"]) == (
        "2",
        "1",
        str(100 / 3),
    )


def test_the_supervision_charts_follow_events_appended_through_the_store(
    qtbot: QtBot, dashboards: Dashboards, bridge: EngineBridge
) -> None:
    view, _ = dashboards
    events = bridge.engine.store.events
    started = SessionStarted(agent_path="/agents/guarded", agent_name="guarded", model="m")
    answer = ApprovalResolved(
        approval_id="q9",
        status="denied",
        resolved_by="human:gui:ana",
        waited_s=3.0,
        tool="shell.run",
    )
    for body in (started, answer, late_verdict(9, "approve", "denied")):
        events.append("chat-live", body.kind, event_payload(body))
    qtbot.waitUntil(lambda: view.agreements.summary.text().startswith("6 verdicts"))
    assert view.agreements.summary.text() == "6 verdicts · 33.3 % agreed · 2 let through"
    assert view.questions.summary.text() == "8 questions · 37.5 % needless"


def test_without_shadow_verdicts_the_agreement_chart_says_how_to_turn_shadow_mode_on(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    write(bridge.engine.store, full_log())
    view, controller = shown(qtbot, bridge)
    qtbot.waitUntil(lambda: controller.figures.questions != (), timeout=20000)
    assert view.agreements.notice() == NO_VERDICTS
    assert "off by default" in NO_VERDICTS and "agent editor" in NO_VERDICTS
    assert "policy supervisor" in NO_VERDICTS
    assert view.questions.notice() == ""  # the fixture log's two questions
    view.scroller.ensureWidgetVisible(view.agreements)
    save_screenshot(view, tmp_path, "dashboards-supervision-no-verdicts.png")
    controller.close()


def test_the_supervision_section_in_the_window_light_and_dark(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    """The section as a user sees it at 1280x800, scrolled to the charts over time (saved as
    dashboards-supervision-light.png and -dark.png)."""
    from foundry.ui.theme import apply_theme

    generated = synthetic_log(40, seed=5)  # about seven hours of work, ending a minute ago
    events = shifted(generated, datetime.now(UTC) - timedelta(minutes=1) - generated[-1].time)
    write(bridge.engine.store, events)
    window = MainWindow(bridge)
    qtbot.addWidget(window)
    window.resize(1280, 800)
    window.show()
    qtbot.waitExposed(window)
    opening = asyncio.ensure_future(window.open_dashboards())
    qtbot.waitUntil(opening.done, timeout=20000)
    opening.result()
    view = window.dashboards
    assert view is not None
    view.scroller.ensureWidgetVisible(view.questions)
    view.scroller.ensureWidgetVisible(view.decisions_over_time)
    qtbot.wait(50)
    for chart in (view.decisions_over_time, view.escalations, view.questions, view.agreements):
        assert chart.rows and chart.notice() == "", chart.title
    save_screenshot(window, tmp_path, "dashboards-supervision-light.png")
    try:
        apply_theme("dark")
        qtbot.waitUntil(lambda: view.agreements.ink.background != "#FFFFFF")
        qtbot.wait(50)
        save_screenshot(window, tmp_path, "dashboards-supervision-dark.png")
    finally:
        apply_theme("system")
    window.close()


def test_filters_that_leave_out_the_verdicts_are_blamed_for_it(
    qtbot: QtBot, dashboards: Dashboards
) -> None:
    view, controller = dashboards
    with qtbot.waitSignal(controller.updated, timeout=20000):
        view.set_custom_range(at(0), at(300))  # before the chat
    for chart in (view.decisions_over_time, view.escalations, view.questions, view.agreements):
        assert chart.notice() == NO_DATA_FOR_FILTERS, chart.title
        assert chart.summary.text() == "" and chart.summary.styleSheet() == ""
    assert view.agreements.marks() == []  # no mark left of the verdicts shown before
