"""The dashboards in the main window at common screen sizes: every chart's title, axis labels,
tick labels and legend drawn whole inside the chart, nothing drawn over the data."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyqtgraph as pg
import pytest
from PySide6.QtCore import QRectF
from PySide6.QtGui import QFontMetrics, QPainter, QPicture
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from foundry.ui.bridge import EngineBridge
from foundry.ui.dashboards.chart import Chart
from foundry.ui.window.main_window import MainWindow

from ..metrics.synthetic_log import shifted, synthetic_log
from ..metrics.test_loader import write
from .conftest import save_screenshot

SIZES = ((1280, 800), (1440, 900))


def visible_scene(chart: Chart) -> QRectF:
    """The part of the chart's scene its canvas shows."""
    canvas = chart.graphics
    return canvas.mapToScene(canvas.viewport().rect()).boundingRect()


def drawn_tick_labels(axis: pg.AxisItem) -> list[tuple[QRectF, str]]:
    """The tick labels the axis draws, in scene coordinates."""
    picture = QPicture()  # (kept: the painter must not outlive its device)
    painter = QPainter(picture)
    try:
        specs = axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    if specs is None:
        return []
    return [(axis.mapRectToScene(rect), text) for rect, _, text in specs[2]]


def hidden_tick_labels(axis: pg.AxisItem, drawn: list[tuple[QRectF, str]]) -> list[str]:
    """The labels of the first level of ticks (the labelled one) within the axis's range that
    the axis leaves out."""
    low, high = sorted(axis.range)
    if axis._tickLevels is not None:  # ticks set by the chart (names of bars, percentages)
        wanted = [text for value, text in axis._tickLevels[0] if low <= value <= high]
    else:
        size = axis.geometry().width() if axis.orientation == "bottom" else axis.geometry().height()
        levels = axis.tickValues(low, high, size)
        if not levels:
            return []
        spacing, values = levels[0]
        shown = [value for value in values if low <= value <= high]
        wanted = axis.tickStrings(shown, axis.autoSIPrefixScale * axis.scale, spacing)
    texts = {text for _, text in drawn}
    return [text for text in wanted if text not in texts]


def problems_of(chart: Chart) -> list[str]:
    """What of the chart is clipped, hidden or overlapping, said plainly."""
    shown = visible_scene(chart)
    found = []

    def inside(name: str, rect: QRectF) -> None:
        if not shown.contains(rect):
            found.append(f"{chart.title}: {name} {rect.getRect()} outside {shown.getRect()}")

    inside("title", chart.plot.titleLabel.item.sceneBoundingRect())
    for side in ("left", "bottom"):
        axis = chart.plot.getAxis(side)
        inside(f"{side} axis label", axis.label.sceneBoundingRect())
        labels = drawn_tick_labels(axis)
        for rect, text in labels:
            inside(f"{side} tick label {text!r}", rect)
        hidden = hidden_tick_labels(axis, labels)
        if hidden:
            found.append(f"{chart.title}: the {side} axis leaves out the labels {hidden}")
    entries = [label.sceneBoundingRect() for _, label in chart.legend.items]
    entries += [sample.sceneBoundingRect() for sample, _ in chart.legend.items]
    for _, label in chart.legend.items:
        inside(f"legend entry {label.text!r}", label.sceneBoundingRect())
    for index, rect in enumerate(entries):
        if any(rect.intersects(other) for other in entries[index + 1 :]):
            found.append(f"{chart.title}: legend entries overlap at {rect.getRect()}")
    plot_area = chart.plot.vb.sceneBoundingRect()
    for rect in entries:
        if rect.intersects(plot_area):
            found.append(f"{chart.title}: the legend covers the plot at {rect.getRect()}")
    found += [f"{chart.title}: {text}" for text in covered_points(chart)]
    if not text_fits(chart.summary):
        found.append(f"{chart.title}: summary clipped: {chart.summary.text()!r}")
    return found


def covered_points(chart: Chart) -> list[str]:
    """Text on the plot (a label) lying over a plotted point."""
    texts = [item for item in chart.plot.items if isinstance(item, pg.TextItem)]
    points = [
        item.mapToScene(*point)
        for item in chart.plot.items
        if isinstance(item, pg.ScatterPlotItem)
        for point in zip(*item.getData(), strict=True)
    ]
    return [
        f"the text {text.toPlainText()!r} covers a point"
        for text in texts
        if any(text.sceneBoundingRect().contains(point) for point in points)
    ]


def text_fits(label: QLabel) -> bool:
    width = QFontMetrics(label.font()).horizontalAdvance(label.text())
    return width <= label.contentsRect().width()


@pytest.fixture
def many_runs(bridge: EngineBridge) -> EngineBridge:
    generated = synthetic_log(40, seed=5)  # about seven hours of work, ending a minute ago
    events = shifted(generated, datetime.now(UTC) - timedelta(minutes=1) - generated[-1].time)
    write(bridge.engine.store, events)
    return bridge


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_nothing_of_a_chart_is_clipped_or_hidden_at_common_screen_sizes(
    qtbot: QtBot, many_runs: EngineBridge, tmp_path: Path, width: int, height: int
) -> None:
    window = MainWindow(many_runs)
    qtbot.addWidget(window)
    window.resize(width, height)
    window.show()
    qtbot.waitExposed(window)
    opening = asyncio.ensure_future(window.open_dashboards())
    qtbot.waitUntil(opening.done, timeout=20000)
    opening.result()
    view = window.dashboards
    assert view is not None and window.size().toTuple() == (width, height)
    qtbot.wait(100)  # laid out and painted
    problems = [problem for chart in view.charts() for problem in problems_of(chart)]
    assert text_fits(view.status), view.status.text()
    assert problems == [], "\n".join(problems)
    save_screenshot(window, tmp_path, f"dashboards-{width}x{height}.png")
    window.close()
