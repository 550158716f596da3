"""The timeline's panel: a filter row (supervisor, verdict) over the rows, each drawn as a card."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import (
    QModelIndex,
    QPersistentModelIndex,
    QRect,
    QSize,
    QSortFilterProxyModel,
    Qt,
)
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QListView,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from foundry.ui.session.timeline import (
    COUNT_ROLE,
    REASONING_ROLE,
    SUPERVISOR_ROLE,
    TIMES,
    TITLE_ROLE,
    VERDICT_ROLE,
    VERDICTS,
    TimelineModel,
    Verdict,
)

ALL = ""
VERDICT_CHOICES = (  # the verdict filter: (shown, verdicts it keeps)
    ("All verdicts", ()),
    ("✓ Allowed", ("allowed",)),
    ("✎ Changed", ("changed",)),
    ("✕ Denied", ("denied",)),
    ("? Asked a person", ("asked",)),
    ("! Failed, fell back, timed out", ("failed",)),
    ("» Deferred", ("deferred",)),
    ("⚠ Concerns", ("concern",)),
    ("Σ Statistics", ("statistics",)),
    ("Anything but allowed", ("changed", "denied", "asked", "failed", "deferred", "concern")),
)
STRIPE = 4
PAD = 8
GAP = 3
Index = QModelIndex | QPersistentModelIndex


class TimelineFilter(QSortFilterProxyModel):
    """Keeps the rows of one supervisor and of some verdicts (none chosen: all of them)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.supervisor = ALL
        self.verdicts: tuple[str, ...] = ()

    def show_only(self, supervisor: str, verdicts: tuple[str, ...]) -> None:
        self.beginFilterChange()
        self.supervisor, self.verdicts = supervisor, verdicts
        self.endFilterChange()

    def filterAcceptsRow(self, source_row: int, source_parent: Index) -> bool:
        index = self.sourceModel().index(source_row, 0, source_parent)
        if self.supervisor and index.data(SUPERVISOR_ROLE) != self.supervisor:
            return False
        return not self.verdicts or index.data(VERDICT_ROLE) in self.verdicts


class TimelineDelegate(QStyledItemDelegate):
    """A row as a card: a stripe and a "✕ denied" badge in the verdict's colour, the title,
    a count (x12) when it stands for repeats, and the reasoning below."""

    def __init__(self, view: QListView) -> None:
        super().__init__(view)
        self._view = view
        self._heights: dict[tuple[str, str, int], int] = {}

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        title, reasoning = _texts(index)
        width = self._view.viewport().width()  # a row is as wide as the list: it wraps
        option.rect.setWidth(width)
        key = (title, reasoning, width)
        height = self._heights.get(key)
        if height is None:
            parts = self._parts(QFontMetrics(_bold(option.font)), option, index)
            height = parts.title_height + PAD * 2
            if reasoning:
                text_width = max(width - STRIPE - 2 * PAD, 40)
                flags = int(Qt.TextFlag.TextWordWrap)
                area = QRect(0, 0, text_width, 100_000)
                height += GAP + option.fontMetrics.boundingRect(area, flags, reasoning).height()
            if len(self._heights) > 20_000:
                self._heights.clear()
            self._heights[key] = height
        return QSize(width, height)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        verdict = VERDICTS[str(index.data(VERDICT_ROLE) or "allowed")]
        colour = QColor(verdict.colour)
        card = option.rect.adjusted(0, 1, -1, -2)
        painter.save()
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        ink = _Ink(option.palette)
        painter.fillRect(card, ink.selected if selected else ink.card)
        painter.setPen(ink.border)
        painter.drawRect(card)
        painter.fillRect(QRect(card.left(), card.top(), STRIPE, card.height()), colour)
        bold = _bold(option.font)
        parts = self._parts(QFontMetrics(bold), option, index)
        top = card.top() + PAD
        left = card.left() + STRIPE + PAD
        self._paint_badge(painter, QRect(left, top, parts.badge_width, parts.line), verdict)
        painter.setFont(bold)
        painter.setPen(ink.title)
        title_rect = QRect(left + parts.badge_width + PAD, top, parts.title_width, 100_000)
        flags = int(Qt.TextFlag.TextWordWrap | Qt.AlignmentFlag.AlignTop)
        painter.drawText(title_rect, flags, parts.title)
        if parts.count:
            painter.setPen(ink.quiet)
            right = QRect(card.right() - PAD - parts.count_width, top, parts.count_width, 99)
            painter.drawText(right, int(Qt.AlignmentFlag.AlignRight), parts.count)
        reasoning = str(index.data(REASONING_ROLE) or "")
        if reasoning:
            painter.setFont(option.font)
            painter.setPen(ink.body)
            below = QRect(left, top + parts.title_height + GAP, card.right() - left - PAD, 100_000)
            painter.drawText(below, flags, reasoning)
        painter.restore()

    def _paint_badge(self, painter: QPainter, area: QRect, verdict: Verdict) -> None:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(QColor(verdict.colour))
        painter.drawRoundedRect(area, 4, 4)
        font = QFont(painter.font())
        font.setBold(True)
        font.setPointSizeF(max(font.pointSizeF() * 0.85, 6.0))
        painter.setFont(font)
        painter.setPen(QColor("#ffffff"))
        label = f"{verdict.symbol} {verdict.word}"
        painter.drawText(area, int(Qt.AlignmentFlag.AlignCenter), label)

    def _parts(self, metrics: QFontMetrics, option: QStyleOptionViewItem, index: Index) -> _Parts:
        title, _ = _texts(index)
        count = int(index.data(COUNT_ROLE) or 1)
        counted = f"{TIMES}{count}" if count > 1 else ""
        badge_width = PAD + max(metrics.horizontalAdvance(f"{v.symbol} {v.word}") for v in BADGES)
        count_width = metrics.horizontalAdvance(counted) + (PAD if counted else 0)
        title_width = max(option.rect.width() - STRIPE - 4 * PAD - badge_width - count_width, 40)
        flags = int(Qt.TextFlag.TextWordWrap)
        height = metrics.boundingRect(QRect(0, 0, title_width, 100_000), flags, title).height()
        line = metrics.height() + 2
        height = max(height, line)
        return _Parts(title, counted, badge_width, count_width, title_width, height, line)


@dataclass(frozen=True)
class _Parts:
    """Where a row's pieces go, measured once for its height and again to paint it."""

    title: str
    count: str
    badge_width: int
    count_width: int
    title_width: int
    title_height: int
    line: int


BADGES = tuple(VERDICTS.values())


class _Ink:
    """The card's colours under the palette in use: light cards, or dark ones under the dark
    theme (the verdicts' colours stay: white words on them read on either)."""

    def __init__(self, palette: QPalette) -> None:
        text = palette.color(QPalette.ColorRole.Text)
        base = palette.color(QPalette.ColorRole.Base)
        self.card = base
        self.title = text
        self.body = _between(text, base, 0.25)
        self.quiet = _between(text, base, 0.45)
        self.border = _between(text, base, 0.85)
        highlight = QColor(palette.color(QPalette.ColorRole.Highlight))
        self.selected = _between(highlight, base, 0.75)


def _between(near: QColor, far: QColor, share_of_far: float) -> QColor:
    keep = 1.0 - share_of_far
    return QColor(
        int(near.red() * keep + far.red() * share_of_far),
        int(near.green() * keep + far.green() * share_of_far),
        int(near.blue() * keep + far.blue() * share_of_far),
    )


def _texts(index: Index) -> tuple[str, str]:
    return str(index.data(TITLE_ROLE) or ""), str(index.data(REASONING_ROLE) or "")


def _bold(font: QFont) -> QFont:
    bold = QFont(font)
    bold.setBold(True)
    return bold


class TimelinePanel(QWidget):
    """The filter row and the timeline's list; `rows` is the list (its model the filter)."""

    def __init__(self, timeline: TimelineModel, rows: QListView, parent: QWidget | None = None):
        super().__init__(parent)
        self.timeline = timeline
        self.filter = TimelineFilter(self)
        self.filter.setSourceModel(timeline)
        self.rows = rows
        rows.setModel(self.filter)
        rows.setItemDelegate(TimelineDelegate(rows))
        rows.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        rows.setResizeMode(QListView.ResizeMode.Adjust)
        rows.setUniformItemSizes(False)
        rows.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        # a scroll bar that comes and goes would change the width rows were measured at
        rows.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
        self.supervisors = QComboBox()
        self.supervisors.setToolTip("Show the decisions of one supervisor or approver only")
        self.supervisors.addItem("All supervisors", ALL)
        self.verdicts = QComboBox()
        self.verdicts.setToolTip(_legend())
        for shown, kept in VERDICT_CHOICES:
            self.verdicts.addItem(shown, kept)
        self.shown = QLabel()
        self.shown.setStyleSheet("color: #607d8b;")
        self.supervisors.currentIndexChanged.connect(self._filter)
        self.verdicts.currentIndexChanged.connect(self._filter)
        for signal in (timeline.rowsInserted, timeline.rowsRemoved, timeline.modelReset):
            signal.connect(self._refresh)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.supervisors, 1)
        row.addWidget(self.verdicts, 1)
        row.addWidget(self.shown)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(rows, 1)

    def _filter(self) -> None:
        supervisor = str(self.supervisors.currentData() or ALL)
        self.filter.show_only(supervisor, tuple(self.verdicts.currentData() or ()))
        self._count()

    def _refresh(self) -> None:
        """Offer every supervisor that has a row (kept in the order they first appeared)."""
        known = {self.supervisors.itemData(i) for i in range(self.supervisors.count())}
        for row in self.timeline.rows:
            if row.supervisor and row.supervisor not in known:
                known.add(row.supervisor)
                self.supervisors.addItem(row.supervisor, row.supervisor)
        self._count()

    def _count(self) -> None:
        total, shown = self.timeline.rowCount(), self.filter.rowCount()
        self.shown.setText("" if shown == total else f"{shown} of {total}")


def _legend() -> str:
    lines = [f"{v.symbol} {v.word}" for v in VERDICTS.values()]
    return "Show one kind of decision only. Each row says its kind:\n" + "\n".join(lines)
