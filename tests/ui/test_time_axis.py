"""The dashboards' time axes: round local times, as many as fit, dates where days begin, and the
dates shown in the axis label."""

from __future__ import annotations

from datetime import datetime

from pytestqt.qtbot import QtBot

from foundry.ui.dashboards.chart import TimeAxis, date_span


def ticks(axis: TimeAxis, first: datetime, last: datetime, pixels: float) -> list[str]:
    [(spacing, values)] = axis.tickValues(first.timestamp(), last.timestamp(), pixels)
    assert values == sorted(values)
    assert first.timestamp() <= values[0] and values[-1] <= last.timestamp()
    return axis.tickStrings(values, 1.0, spacing)


def test_hours_of_one_day_are_labelled_at_round_times(qtbot: QtBot) -> None:
    labels = ticks(TimeAxis(), datetime(2026, 11, 26, 6, 40), datetime(2026, 11, 26, 13, 50), 350)
    assert len(labels) >= 3
    assert all(len(label) == 5 and label.endswith(":00") for label in labels)


def test_a_narrow_axis_shows_fewer_labels_but_at_least_one(qtbot: QtBot) -> None:
    first, last = datetime(2026, 11, 26, 6, 40), datetime(2026, 11, 26, 13, 50)
    wide, narrow = ticks(TimeAxis(), first, last, 900), ticks(TimeAxis(), first, last, 80)
    assert 1 <= len(narrow) < len(wide)


def test_the_tick_where_a_day_begins_names_the_day(qtbot: QtBot) -> None:
    labels = ticks(TimeAxis(), datetime(2026, 11, 26, 20, 0), datetime(2026, 11, 27, 4, 0), 600)
    assert "27 Nov" in labels
    assert "00:00" not in labels


def test_days_apart_are_labelled_with_dates(qtbot: QtBot) -> None:
    labels = ticks(TimeAxis(), datetime(2026, 11, 1), datetime(2026, 11, 20), 400)
    assert labels and all(label.endswith(" Nov") for label in labels)


def test_an_empty_or_reversed_range_has_no_ticks(qtbot: QtBot) -> None:
    moment = datetime(2026, 11, 26).timestamp()
    assert TimeAxis().tickValues(moment, moment, 400) == []
    assert TimeAxis().tickValues(moment + 60, moment, 400) == []


def test_the_dates_in_the_label() -> None:
    assert date_span(datetime(2026, 11, 26, 6), datetime(2026, 11, 26, 13)) == "26 Nov 2026"
    assert date_span(datetime(2026, 11, 25), datetime(2026, 11, 26)) == "25 Nov to 26 Nov 2026"
    assert date_span(datetime(2025, 12, 30), datetime(2026, 1, 2)) == "30 Dec 2025 to 2 Jan 2026"
