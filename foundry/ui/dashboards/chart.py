"""A dashboard card: one pyqtgraph chart with its title, legend, hover text and exports."""

from __future__ import annotations

import csv
import math
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import numpy as np
import pyqtgraph as pg
from pyqtgraph.exporters import ImageExporter
from PySide6.QtCore import QEvent, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetrics,
    QPainter,
    QPen,
    QResizeEvent,
    QTextOption,
)
from PySide6.QtWidgets import (
    QFrame,
    QGraphicsItem,
    QHBoxLayout,
    QLabel,
    QToolButton,
    QToolTip,
    QVBoxLayout,
)

from foundry.metrics import DashboardFigures
from foundry.ui.dashboards.palette import GRID_ALPHA, LIGHT_INK, ink
from foundry.ui.theme import quiet

EXPORT_WIDTH = 1600  # pixels of an exported PNG
END_LABEL_OVERHANG = 20  # pixels a bottom label at the end of its axis may reach past it
LEGEND_COLUMNS = 4  # at most, as many as fit
LEGEND_MARGIN = 40  # pixels of a chart's width beside its legend: frame, margins, spacing
Item = TypeVar("Item", bound=pg.GraphicsObject)
NO_DATA_FOR_FILTERS = "No data for these filters"
NEAR = 0.04  # a hovered point is within 4 % of the visible ranges (as a distance on screen)


class CategoryAxis(pg.AxisItem):
    """A bottom axis naming the bars at 0, 1, 2, ...; as many names as fit, evenly spaced."""

    def __init__(self) -> None:
        super().__init__("bottom")
        self.enableAutoSIPrefix(False)  # names, not numbers: no "(x0.001)" beside the label
        self.names: list[str] = []

    def set_names(self, names: Sequence[str]) -> None:
        self.names = [name if len(name) <= 18 else name[:17] + "…" for name in names]
        self.picture = None
        self.update()

    def tickValues(
        self, minVal: float, maxVal: float, size: float
    ) -> list[tuple[float, list[float]]]:
        shown = [i for i in range(len(self.names)) if minVal - 0.5 <= i <= maxVal + 0.5]
        if not shown:
            return []
        metrics = QFontMetrics(self.style.get("tickFont") or self.font())
        widest = max(metrics.horizontalAdvance(self.names[i]) for i in shown) + 16
        step = max(1, math.ceil(len(shown) * widest / max(size, 1.0)))
        return [(float(step), [float(i) for i in shown[::step]])]

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:
        return [
            self.names[round(value)] if 0 <= round(value) < len(self.names) else ""
            for value in values
        ]


TIME_STEPS = (60, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800)
DAY = 86400


class TimeAxis(pg.AxisItem):
    """A bottom axis of local times at round steps, as many as fit: the time of day, and the
    date where a day begins or when the steps are days (the dates shown are in the label)."""

    def __init__(self) -> None:
        super().__init__("bottom")
        self.enableAutoSIPrefix(False)

    def tickValues(
        self, minVal: float, maxVal: float, size: float
    ) -> list[tuple[float, list[float]]]:
        if maxVal <= minVal or size <= 0:
            return []
        metrics = QFontMetrics(self.style.get("tickFont") or self.font())
        fits = max(1, int(size // (metrics.horizontalAdvance("30 Sep") + 24)))
        span = maxVal - minVal
        step = next((s for s in TIME_STEPS if span / s <= fits), math.ceil(span / fits / DAY) * DAY)
        offset = datetime.fromtimestamp(minVal).astimezone().utcoffset() or timedelta()
        shift = offset.total_seconds()  # steps are round in local time
        first = math.ceil((minVal + shift) / step) * step - shift
        return [(float(step), [first + n * step for n in range(int((maxVal - first) // step) + 1)])]

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:
        moments = [datetime.fromtimestamp(value) for value in values]
        return [
            f"{m.day} {m:%b}" if spacing >= DAY or (m.hour, m.minute) == (0, 0) else f"{m:%H:%M}"
            for m in moments
        ]


def date_span(first: datetime, last: datetime) -> str:
    """ "26 Nov 2026", "25 to 26 Nov 2026" or "30 Dec 2025 to 2 Jan 2026"."""
    if first.date() == last.date():
        return f"{first.day} {first:%b %Y}"
    if first.year == last.year:
        return f"{first.day} {first:%b} to {last.day} {last:%b %Y}"
    return f"{first.day} {first:%b %Y} to {last.day} {last:%b %Y}"


class ValueAxis(pg.AxisItem):
    """A left axis that draws the labels of its ends. pyqtgraph bounds an axis with a grid by
    the plot, so that a label centred on an end ("0", "100") would stick out by half its height
    and be left out."""

    def __init__(self) -> None:
        super().__init__("left")
        self.background = LIGHT_INK.background  # what its translucent grid is mixed with

    def boundingRect(self) -> QRectF:
        overhang = QFontMetrics(self.style.get("tickFont") or self.font()).height() / 2 + 1
        return super().boundingRect().adjusted(0, -overhang, 0, overhang)

    def generateDrawSpecs(self, p: QPainter) -> Any:
        """The grid in opaque colours, as they look on the background: a translucent line
        costs ten times as much to paint (the axis lies under the data, see Chart)."""
        specs = super().generateDrawSpecs(p)
        if specs is None:
            return None
        axis, ticks, texts = specs
        opaque = [(_opaque(pen, self.background), start, end) for pen, start, end in ticks]
        return axis, opaque, texts


def _opaque(pen: QPen, on: str) -> QPen:
    """The pen in the opaque colour its translucent one has on the background `on`."""
    color, background = pen.color(), QColor(on)
    alpha = color.alphaF()

    def mix(mine: float, theirs: float) -> float:
        return alpha * mine + (1 - alpha) * theirs

    opaque = QPen(pen)
    opaque.setColor(
        QColor.fromRgbF(
            mix(color.redF(), background.redF()),
            mix(color.greenF(), background.greenF()),
            mix(color.blueF(), background.blueF()),
        )
    )
    return opaque


class _ActivationFilter(QGraphicsItem):
    """An item of no size that keeps the window's activation and deactivation from the chart's
    items. A view passes the activation on to its scene when it is shown, and each graphics
    widget updates on it: opening the dashboards painted every chart three times. The charts
    draw nothing in the palette's inactive colours, so they have nothing to update."""

    def boundingRect(self) -> QRectF:
        return QRectF()

    def paint(self, painter: QPainter, option: Any, widget: Any = None) -> None:
        return

    def sceneEventFilter(self, watched: QGraphicsItem, event: QEvent) -> bool:
        return event.type() in (QEvent.Type.WindowActivate, QEvent.Type.WindowDeactivate)


class Chart(QFrame):
    """Subclasses name the series they plot, draw it (`draw`) and say what a spot shows."""

    title: ClassVar[str]
    columns: ClassVar[tuple[str, ...]]  # of the rows it plots (its CSV)
    x_label: ClassVar[str] = ""
    y_label: ClassVar[str] = ""
    time_axis: ClassVar[bool] = False
    category_axis: ClassVar[bool] = False  # bars named along the x axis
    # the axes' spans without data: an axis of percentages still runs from 0 to 100
    empty_x: ClassVar[tuple[float, float]] = (0.0, 1.0)
    empty_y: ClassVar[tuple[float, float]] = (0.0, 1.0)
    # the y axis counts whole things (calls, scores, tokens): ticked at whole numbers, empty too
    y_counts: ClassVar[bool] = False
    # the aggregate series it draws (foundry.metrics.aggregates), and what its emptiness means
    # while the store holds none of them, whatever the filters
    series: ClassVar[tuple[str, ...]] = ()
    nothing_yet: ClassVar[str] = "Nothing recorded yet"

    save_requested = Signal(str)  # "png" or "csv": the view asks where

    def __init__(self) -> None:
        super().__init__()
        self.figures = DashboardFigures()
        self.rows: list[tuple[Any, ...]] = []  # what it plots, a row per bar, dot or bin
        self.dots: dict[str, pg.ScatterPlotItem] = {}
        self._entries: list[tuple[Any, str]] = []  # the legend's items and names as drawn
        self._kept: dict[str, pg.GraphicsObject] = {}  # its items, made once, by key
        self._on_plot: set[str] = set()  # the keys of the kept items put on the plot
        self._drawn: set[str] = set()  # the keys of the items the figures shown use
        self.ink = ink()  # the theme's, again at each change of the app's palette
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setObjectName("chart")
        self.setMinimumHeight(280)
        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.ci.setContentsMargins(6, 6, END_LABEL_OVERHANG + 2, 4)
        axes: dict[str, pg.AxisItem] = {"left": ValueAxis()}
        if self.time_axis:
            axes["bottom"] = TimeAxis()
        if self.category_axis:
            axes["bottom"] = self.categories = CategoryAxis()
        # no context menus: building a plot's (a tenth of its cost) for nothing
        self.plot: pg.PlotItem = self.graphics.addPlot(
            row=0, col=0, axisItems=axes, enableMenu=False
        )
        self.legend = pg.LegendItem(colCount=LEGEND_COLUMNS, horSpacing=14)
        self.graphics.addItem(self.legend, row=1, col=0)
        self.summary = QLabel()
        quiet(self.summary)
        self.png_button = self._tool_button("PNG", "Save this chart as a PNG picture", "png")
        self.csv_button = self._tool_button("CSV", "Save the data of this chart as CSV", "csv")
        header = QHBoxLayout()
        header.setContentsMargins(8, 4, 4, 0)
        header.addWidget(self.summary, 1)
        header.addWidget(self.png_button)
        header.addWidget(self.csv_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(1, 1, 1, 1)
        layout.setSpacing(0)
        layout.addLayout(header)
        # Until its first data the chart shows a label: painting eight empty plots at once (their
        # axes' text above all) held the GUI thread for a quarter of a second on opening.
        self.placeholder = QLabel("Loading…")
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        quiet(self.placeholder)
        layout.addWidget(self.placeholder, 1)
        layout.addWidget(self.graphics, 1)
        self.graphics.hide()
        self._style_plot()
        self.graphics.scene().sigMouseMoved.connect(self._hover)
        self._activation_filter = _ActivationFilter()
        self.graphics.scene().addItem(self._activation_filter)
        self.graphics.ci.installSceneEventFilter(self._activation_filter)

    def _tool_button(self, text: str, tip: str, kind: str) -> QToolButton:
        button = QToolButton()
        button.setText(text)
        button.setToolTip(tip)
        button.setAutoRaise(True)
        button.clicked.connect(lambda: self.save_requested.emit(kind))
        return button

    def _style_plot(self) -> None:
        for side, text in (("bottom", self.x_label), ("left", self.y_label)):
            self.plot.getAxis(side).setLabel(text)
        self._apply_ink()
        # two levels of grid lines, not three: each faint line costs the paint of every frame
        self.plot.getAxis("left").setStyle(maxTickLevel=1)
        self.plot.getAxis("left").setZValue(-1000)  # its grid under the data, not over it
        # the labels of the ends may reach past the axis (into the margin), not be left out
        self.plot.getAxis("bottom").setStyle(hideOverlappingLabels=END_LABEL_OVERHANG)
        self.plot.hideButtons()

    def _apply_ink(self) -> None:
        """The frame and words of the chart in `self.ink`: background, title, axes, legend."""
        self.graphics.setBackground(self.ink.background)
        title_font = QFont()
        title_font.setPointSizeF(title_font.pointSizeF() + 1.5)
        size = f"{title_font.pointSizeF():.1f}pt"
        self.plot.setTitle(self.title, color=self.ink.text, size=size, bold=True)
        for side in ("bottom", "left"):
            axis = self.plot.getAxis(side)
            axis.setPen(pg.mkPen(self.ink.muted))
            axis.setTextPen(pg.mkPen(self.ink.text))
            axis.setLabel(axis.labelText, color=self.ink.text)
            if isinstance(axis, ValueAxis):
                axis.background = self.ink.background
        self.plot.showGrid(x=False, y=True, alpha=GRID_ALPHA)  # in the axis's new pen
        self.legend.setLabelTextColor(self.ink.text)
        for _, label in self.legend.items:
            label.setText(label.text)  # drawn again in the new colour

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() != QEvent.Type.PaletteChange or ink(self.palette()) == self.ink:
            return
        self.ink = ink(self.palette())
        self._apply_ink()
        if self.placeholder.isHidden():  # figures are shown: their dots and lines again
            self.show_figures(self.figures)

    # -- data -----------------------------------------------------------------------------------

    def show_figures(self, figures: DashboardFigures) -> None:
        self.placeholder.hide()
        self.graphics.show()
        self.figures = figures
        self.rows = self.rows_of(figures)
        self._entries, self._drawn = [], set()
        self.dots = {}
        if self.rows:
            self.draw()
            self.summary.setText(self.summarize())
        else:
            self.show_empty()
            self.summary.setText("")
        for key in self._on_plot - self._drawn:
            self._kept[key].setVisible(False)
        self._update_legend()

    def kept(self, key: str, make: Callable[[], Item], on_plot: bool = True) -> Item:
        """The chart's item `key`, made (and put on the plot) the first time it is drawn and
        the same item after: new figures change its data, not the plot's items."""
        item = self._kept.get(key)
        if item is None:
            item = self._kept[key] = make()
            if on_plot:
                self.plot.addItem(item)
                self._on_plot.add(key)
        if on_plot:
            item.setVisible(True)
        self._drawn.add(key)
        return item

    def draw_bars(self, key: str, **options: Any) -> pg.BarGraphItem:
        """Bars as pyqtgraph's BarGraphItem takes them, kept under `key`."""
        bars = self.kept(key, lambda: pg.BarGraphItem(**options))
        bars.setOpts(**options)
        return bars

    def rows_of(self, figures: DashboardFigures) -> list[tuple[Any, ...]]:
        """The rows this chart plots from the figures, in the order of `columns`."""
        raise NotImplementedError

    def draw(self) -> None:
        raise NotImplementedError

    def summarize(self) -> str:
        """One line about what is shown (there is at least one row)."""
        return f"{len(self.rows):,} rows"

    def describe(self, x: float, y: float) -> str | None:
        """What the chart shows at data coordinates (x, y), for the hover text."""
        return None

    def empty_text(self) -> str:
        """Why the chart is empty: nothing of its kind recorded yet, or filters that leave out
        what there is."""
        if self.figures.recorded.isdisjoint(self.series):
            return self.nothing_yet
        return NO_DATA_FOR_FILTERS

    def notice(self) -> str:
        """The text the chart shows in place of data, if it shows one."""
        label = self._kept.get("empty")
        if not isinstance(label, pg.TextItem) or "empty" not in self._drawn:
            return ""
        return str(label.toPlainText())

    def show_empty(self) -> None:
        """Say why there is nothing to draw, on axes of no data."""
        label = self.kept("empty", lambda: pg.TextItem(anchor=(0.5, 0.5)))
        label.setColor(self.ink.muted)
        _set_centred_text(label, self.empty_text())
        label.setPos(sum(self.empty_x) / 2, sum(self.empty_y) / 2)
        self.plot.setRange(xRange=self.empty_x, yRange=self.empty_y, padding=0)
        if self.y_counts:
            self.count_axis(self.empty_y[1])
        if self.time_axis:  # no times to tell: no "1 Jan" (1970), nor the dates of earlier data
            axis = self.plot.getAxis("bottom")
            axis.setTicks([])
            axis.setLabel(self.x_label, color=self.ink.text)

    def fit_times(self) -> None:
        """The x axis from the first bin to the end of the last (rows start with their bin's
        start). Set, not auto-ranged: pyqtgraph ranges at the first paint, then paints again."""
        starts = [row[0].timestamp() for row in self.rows]
        first, end = min(starts), max(starts) + self.figures.bin_seconds
        self.plot.setXRange(first, end, padding=0.02)
        dates = date_span(datetime.fromtimestamp(first), datetime.fromtimestamp(end - 1))
        axis = self.plot.getAxis("bottom")
        axis.setTicks(None)  # its own times again (see show_empty)
        axis.setLabel(f"{self.x_label}, {dates}", color=self.ink.text)

    def fit_values(self, largest: float) -> None:
        """The y axis from 0 to a little above `largest`."""
        self.plot.setYRange(0, (largest or 1.0) * 1.1, padding=0)

    def fit_percent(self) -> None:
        """The y axis from 0 to 100, ticked every 20 %."""
        self.plot.setYRange(0, 100, padding=0.02)
        self.plot.getAxis("left").setTicks([[(value, str(value)) for value in range(0, 101, 20)]])

    def fit_counts(self, largest: float, headroom: float = 1.1) -> None:
        """The y axis from 0 to a little above `largest` (1 at least), ticked at whole numbers."""
        self.plot.setYRange(0, max(largest, 1) * headroom, padding=0)
        self.count_axis(largest)

    def count_axis(self, largest: float) -> None:
        """Whole-number ticks on the y axis for small counts (no "0.5 scores")."""
        axis = self.plot.getAxis("left")
        if largest <= 10:
            axis.setTickSpacing(major=max(1, int(largest) // 5 or 1), minor=1)
        else:
            axis.setTickSpacing()

    def add_dots(self, x: Sequence[float], y: Sequence[float], color: str, name: str) -> None:
        """A scatter of dots of one colour, named in the legend and kept in `self.dots`."""
        outline = pg.mkPen(self.ink.outline, width=0.8)
        style = {"size": 8, "brush": pg.mkBrush(color), "pen": outline}
        dots = self.kept(f"dots {name}", lambda: pg.ScatterPlotItem(antialias=True, **style))
        dots.setData(x=np.asarray(x, dtype=float), y=np.asarray(y, dtype=float), **style)
        self.add_legend(dots, name)
        self.dots[name] = dots

    def add_threshold(self, value: float, name: str, angle: float, style: Qt.PenStyle) -> None:
        """A line across the plot at `value` (0: horizontal, 90: vertical), named in the legend
        rather than on the plot, where its label would hide what lies under it."""
        pen = pg.mkPen(self.ink.threshold, width=1.2, style=style)
        key = f"threshold {angle} {style.name}"
        line = self.kept(key, lambda: pg.InfiniteLine(angle=angle, pen=pen))
        line.setPen(pen)
        line.setValue(value)
        sample = self.kept(f"{key} in the legend", lambda: pg.PlotDataItem(pen=pen), False)
        sample.setPen(pen)
        self.add_legend(sample, name)

    def add_legend(self, item: Any, name: str) -> None:
        self._entries.append((item, name))

    def _update_legend(self) -> None:
        """The legend of the items just drawn. The same names as before keep their entries,
        each showing its new item: a new label costs a text layout and the legend's layout."""
        shown = self.legend.items
        if [label.text for _, label in shown] == [name for _, name in self._entries]:
            for (sample, _), (item, _) in zip(shown, self._entries, strict=True):
                sample.item = item
                sample.update()
            return
        self.legend.clear()
        for item, name in self._entries:
            self.legend.addItem(item, name)
        self._fit_legend()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit_legend()

    def _fit_legend(self) -> None:
        """As many columns of legend entries as the chart's width holds (up to four)."""
        entries = self.legend.items
        if not entries:
            return
        widest = max(
            sample.boundingRect().width() + label.item.boundingRect().width()
            for sample, label in entries
        )
        room = self.width() - LEGEND_MARGIN
        columns = max(1, min(LEGEND_COLUMNS, len(entries), int(room // (widest + 14))))
        if columns != self.legend.columnCount:
            self.legend.setColumnCount(columns)

    # -- hover ----------------------------------------------------------------------------------

    def _hover(self, scene_position: QPointF) -> None:
        text = self.hover_text(scene_position)
        if text is None:
            QToolTip.hideText()
            return
        local = self.graphics.mapFromScene(scene_position)
        if isinstance(local, QPointF):  # older PySide6 maps a QPointF to a QPointF
            local = local.toPoint()
        QToolTip.showText(self.graphics.mapToGlobal(local), text, self.graphics)

    def hover_text(self, scene_position: QPointF) -> str | None:
        if not self.rows or not self.plot.vb.sceneBoundingRect().contains(scene_position):
            return None
        spot = self.plot.vb.mapSceneToView(scene_position)
        return self.describe(spot.x(), spot.y())

    def nearest(self, xs: Sequence[float], ys: Sequence[float], x: float, y: float) -> int | None:
        """The index of the point nearest to (x, y) on screen, if it is near enough."""
        if not len(xs):
            return None
        (left, right), (bottom, top) = self.plot.vb.viewRange()
        dx = (np.asarray(xs, dtype=float) - x) / max(right - left, 1e-9)
        dy = (np.asarray(ys, dtype=float) - y) / max(top - bottom, 1e-9)
        distance = np.hypot(dx, dy)
        index = int(np.argmin(distance))
        return index if distance[index] <= NEAR else None

    # -- exports --------------------------------------------------------------------------------

    def export_png(self, path: Path) -> Path:
        """The chart (title, plot, legend) as a PNG picture."""
        exporter = ImageExporter(self.graphics.ci)
        exporter.parameters()["width"] = EXPORT_WIDTH
        exporter.export(str(path))
        return path

    def export_csv(self, path: Path) -> Path:
        """The rows this chart plots, with a header row; times in ISO 8601."""
        with path.open("w", newline="", encoding="utf-8") as file:
            writer = csv.writer(file)
            writer.writerow(self.columns)
            for row in self.rows:
                writer.writerow(_cell(value) for value in row)
        return path

    # -- time bins ------------------------------------------------------------------------------

    def bin_center(self, start: datetime) -> float:
        return start.timestamp() + self.figures.bin_seconds / 2

    def bin_at(self, starts: Sequence[datetime], x: float) -> int | None:
        """The index of the bin (by start) that time `x` falls in, if any."""
        width = self.figures.bin_seconds
        for index, start in enumerate(starts):
            if start.timestamp() <= x < start.timestamp() + width:
                return index
        return None

    def bin_span(self, start: datetime) -> str:
        """A bin's time range, in local time: "2025-03-01 09:00 to 09:10"."""
        end = start + timedelta(seconds=self.figures.bin_seconds)
        first, last = start.astimezone(), end.astimezone()
        shown = "%H:%M" if first.date() == last.date() else "%Y-%m-%d %H:%M"
        return f"{first:%Y-%m-%d %H:%M} to {last.strftime(shown)}"


def _set_centred_text(label: pg.TextItem, text: str) -> None:
    """Lines of text centred on one another (a text item aligns them left)."""
    label.setText(text)
    document = label.textItem.document()
    document.setTextWidth(-1)
    document.setDefaultTextOption(QTextOption(Qt.AlignmentFlag.AlignHCenter))
    label.setTextWidth(document.idealWidth())


def _cell(value: object) -> object:
    if value is None:
        return ""
    return value.isoformat() if isinstance(value, datetime) else value
