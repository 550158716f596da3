"""Keeps a growing list scrolled to its end while the user reads there, as chat apps do."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QAbstractScrollArea, QToolButton

SLACK_PX = 4  # this close to the end counts as at the end


class FollowsEnd(QObject):
    """While the view is scrolled to its end, what arrives (rows, text streaming into a row)
    keeps it there; once the user scrolls up it stays where they put it, and a "Latest" button
    takes them back down."""

    def __init__(self, view: QAbstractScrollArea) -> None:
        super().__init__(view)
        self._view = view
        self._bar = view.verticalScrollBar()
        self.following = True
        self.latest = QToolButton(view)
        self.latest.setText("↓ Latest")
        self.latest.setToolTip("Scroll to the latest and follow it again (Ctrl+End)")
        self.latest.setCursor(Qt.CursorShape.PointingHandCursor)
        self.latest.setStyleSheet(
            "QToolButton { background: #37474f; color: white; border-radius: 11px;"
            " padding: 3px 10px; }"
        )
        self.latest.clicked.connect(self.follow)
        self.latest.hide()
        self._bar.valueChanged.connect(self._moved)
        self._bar.rangeChanged.connect(self._grown)
        view.installEventFilter(self)

    def follow(self) -> None:
        """Go to the end and stay there."""
        self.following = True
        self._bar.setValue(self._bar.maximum())
        self.latest.hide()

    def _moved(self, value: int) -> None:
        self.following = value >= self._bar.maximum() - SLACK_PX
        self.latest.setVisible(not self.following)
        if not self.following:
            self._place_button()

    def _grown(self, _minimum: int, maximum: int) -> None:
        if self.following:
            self._bar.setValue(maximum)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self._view and event.type() == QEvent.Type.Resize:
            self._place_button()
        return False

    def _place_button(self) -> None:
        self.latest.adjustSize()
        viewport = self._view.viewport().geometry()
        self.latest.move(
            viewport.right() - self.latest.width() - 12,
            viewport.bottom() - self.latest.height() - 10,
        )
        self.latest.raise_()
