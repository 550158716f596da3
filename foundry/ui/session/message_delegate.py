"""Draws one conversation row: who said it, then the text rendered as markdown."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QTextDocument
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem, QWidget

from foundry.ui.session.conversation import DETAIL_ROLE, KIND_ROLE, STREAMING_ROLE
from foundry.ui.theme import is_dark

MARGIN = 8
PADDING = 10
HEADER = 20
BACKGROUNDS = {
    "user": "#e3f2fd",
    "assistant": "#f5f5f5",
    "tool": "#fff8e1",
    "error": "#ffebee",
    "notice": "#ede7f6",
}
DARK_BACKGROUNDS = {  # the same hues, dark, under the dark theme's light text
    "user": "#1d3b5c",
    "assistant": "#333337",
    "tool": "#40371f",
    "error": "#4d2327",
    "notice": "#372e4d",
}
LABELS = {
    "user": "You",
    "assistant": "Assistant",
    "tool": "Tool",
    "error": "Error",
    "notice": "Notice",
}
Index = QModelIndex | QPersistentModelIndex


class MessageDelegate(QStyledItemDelegate):
    """Heights are remembered per (text, kind, width), so long conversations lay out once."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._heights: dict[tuple[str, str, int], int] = {}
        self._documents: dict[tuple[str, str, int], QTextDocument] = {}

    def _document(self, index: Index, width: float) -> QTextDocument:
        """The rendered text of a row, kept for the rows on screen so a repaint reuses it."""
        key = (
            str(index.data(Qt.ItemDataRole.DisplayRole) or ""),
            str(index.data(KIND_ROLE)),
            int(width),
        )
        cached = self._documents.get(key)
        if cached is not None:
            return cached
        document = self._new_document(index, width)
        if len(self._documents) > 300:
            self._documents.pop(next(iter(self._documents)))
        self._documents[key] = document
        return document

    def _new_document(self, index: Index, width: float) -> QTextDocument:
        document = QTextDocument()
        text = str(index.data(Qt.ItemDataRole.DisplayRole) or "")
        if index.data(KIND_ROLE) in ("user", "assistant"):
            document.setMarkdown(text)
        else:
            document.setPlainText(text)
        document.setTextWidth(max(width, 50.0))
        return document

    def _text_width(self, option: QStyleOptionViewItem) -> float:
        return float(option.rect.width() - 2 * (MARGIN + PADDING))

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        key = (
            str(index.data(Qt.ItemDataRole.DisplayRole) or ""),
            str(index.data(KIND_ROLE)),
            option.rect.width(),
        )
        height = self._heights.get(key)
        if height is None:
            body = 0  # a row with no text (a call of a tool, say) is its header alone
            if key[0].strip():
                body = int(self._document(index, self._text_width(option)).size().height())
            height = body + HEADER + 2 * PADDING + MARGIN
            if len(self._heights) > 50_000:
                self._heights.clear()
            self._heights[key] = height
        return QSize(option.rect.width(), height)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        kind = str(index.data(KIND_ROLE) or "assistant")
        bubble = QRectF(option.rect).adjusted(MARGIN, MARGIN / 2, -MARGIN, -MARGIN / 2)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        dark = is_dark(option.palette)
        backgrounds = DARK_BACKGROUNDS if dark else BACKGROUNDS
        painter.setPen(QColor("#1976d2") if selected else Qt.PenStyle.NoPen)
        painter.setBrush(QColor(backgrounds.get(kind, backgrounds["assistant"])))
        painter.drawRoundedRect(bubble, 6, 6)
        self._paint_header(painter, bubble, kind, index, dark)
        document = self._document(index, self._text_width(option))
        painter.translate(bubble.left() + PADDING, bubble.top() + PADDING + HEADER)
        document.drawContents(painter)
        painter.restore()

    def _paint_header(
        self, painter: QPainter, bubble: QRectF, kind: str, index: Index, dark: bool
    ) -> None:
        label = LABELS.get(kind, kind)
        detail = str(index.data(DETAIL_ROLE) or "")
        if index.data(STREAMING_ROLE):
            detail = "writing…"
        font = QFont(painter.font())
        font.setBold(True)
        painter.setFont(font)
        painter.setPen(QColor("#cfd8dc" if dark else "#37474f"))
        header = bubble.adjusted(PADDING, PADDING - 2, -PADDING, 0)
        header.setHeight(HEADER)
        text = header_text(label, detail, painter.fontMetrics(), int(header.width()))
        painter.drawText(header, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, text)


def header_text(label: str, detail: str, metrics: QFontMetrics, width: int) -> str:
    """A row's header in `width` pixels, cut with "…" when longer (its tooltip holds it whole)."""
    text = f"{label}  ·  {detail}" if detail else label
    return metrics.elidedText(text, Qt.TextElideMode.ElideRight, width)
