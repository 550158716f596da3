"""Keeps a growing list scrolled to its end while the user reads there, as chat apps do."""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QAbstractScrollArea, QToolButton

SLACK_PX = 4  # this close to the end counts as at the end


class FollowsEnd(QObject):
    """While the view is scrolled to its end, what arrives (rows, text streaming into a row)
    keeps it there; once the user scrolls up it stays where they put it, and the `latest`
    button takes them back down. The caller lays the button out beside the view, not over it:
    a widget over a list's viewport makes every scroll step repaint the whole viewport."""

    def __init__(self, view: QAbstractScrollArea) -> None:
        super().__init__(view)
        self._bar = view.verticalScrollBar()
        self.following = True
        self.latest = QToolButton()
        self.latest.setText("↓ Latest")
        self.latest.setToolTip("Scroll to the latest and follow it again (Ctrl+End)")
        self.latest.setCursor(Qt.CursorShape.PointingHandCursor)
        self.latest.setStyleSheet(
            "QToolButton { background: #37474f; color: white; border-radius: 9px;"
            " padding: 1px 10px; }"
        )
        keeps_its_place = self.latest.sizePolicy()
        keeps_its_place.setRetainSizeWhenHidden(True)  # nothing moves when it shows
        self.latest.setSizePolicy(keeps_its_place)
        self.latest.clicked.connect(self.follow)
        self.latest.hide()
        self._bar.valueChanged.connect(self._moved)
        self._bar.rangeChanged.connect(self._grown)

    def follow(self) -> None:
        """Go to the end and stay there."""
        self.following = True
        self._bar.setValue(self._bar.maximum())
        self.latest.hide()

    def _moved(self, value: int) -> None:
        following = value >= self._bar.maximum() - SLACK_PX
        if following != self.following:
            self.following = following
            self.latest.setVisible(not following)

    def _grown(self, _minimum: int, maximum: int) -> None:
        if self.following:
            self._bar.setValue(maximum)
