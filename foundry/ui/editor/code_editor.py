"""CodeEditor: a plain-text editor with line numbers in a gutter, and going to a line."""

from __future__ import annotations

from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QResizeEvent, QTextCursor
from PySide6.QtWidgets import QPlainTextEdit, QWidget

GUTTER_BACKGROUND = QColor("#f5f5f5")
GUTTER_TEXT = QColor("#9e9e9e")
GUTTER_PADDING = 6


class LineNumbers(QWidget):
    """The gutter: paints the numbers of the lines its editor shows."""

    def __init__(self, editor: CodeEditor) -> None:
        super().__init__(editor)
        self.editor = editor

    def sizeHint(self) -> QSize:
        return QSize(self.editor.gutter_width(), 0)

    def paintEvent(self, event: QPaintEvent) -> None:
        self.editor.paint_line_numbers(self, event)


class CodeEditor(QPlainTextEdit):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.gutter = LineNumbers(self)
        self.blockCountChanged.connect(self._fit_gutter)
        self.updateRequest.connect(self._scroll_gutter)
        self._fit_gutter()

    def gutter_width(self) -> int:
        digits = len(str(max(1, self.blockCount())))
        return GUTTER_PADDING * 2 + self.fontMetrics().horizontalAdvance("9") * max(digits, 2)

    def go_to_line(self, line: int, column: int | None = None) -> None:
        """Put the cursor on `line` (and `column`), both counted from 1, and focus the editor."""
        block = self.document().findBlockByNumber(max(line, 1) - 1)
        if not block.isValid():
            return
        cursor = QTextCursor(block)
        if column is not None:
            offset = min(max(column, 1) - 1, max(block.length() - 1, 0))
            cursor.movePosition(QTextCursor.MoveOperation.Right, n=offset)
        self.setTextCursor(cursor)
        self.centerCursor()
        self.setFocus()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        area = self.contentsRect()
        self.gutter.setGeometry(QRect(area.left(), area.top(), self.gutter_width(), area.height()))

    def paint_line_numbers(self, gutter: QWidget, event: QPaintEvent) -> None:
        painter = QPainter(gutter)
        painter.fillRect(event.rect(), GUTTER_BACKGROUND)
        painter.setPen(GUTTER_TEXT)
        block = self.firstVisibleBlock()
        top = round(self.blockBoundingGeometry(block).translated(self.contentOffset()).top())
        height = self.fontMetrics().height()
        width = gutter.width() - GUTTER_PADDING
        while block.isValid() and top <= event.rect().bottom():
            if block.isVisible() and top + height >= event.rect().top():
                number = str(block.blockNumber() + 1)
                painter.drawText(0, top, width, height, Qt.AlignmentFlag.AlignRight, number)
            top += round(self.blockBoundingRect(block).height())
            block = block.next()

    def _fit_gutter(self) -> None:
        self.setViewportMargins(self.gutter_width(), 0, 0, 0)

    def _scroll_gutter(self, rect: QRect, dy: int) -> None:
        if dy:
            self.gutter.scroll(0, dy)
        else:
            self.gutter.update(0, rect.y(), self.gutter.width(), rect.height())
        if rect.contains(self.viewport().rect()):
            self._fit_gutter()
