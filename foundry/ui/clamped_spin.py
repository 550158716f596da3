"""A number field that takes every digit typed and says when it brings a value into its range.

A plain QSpinBox whose maximum is 999 refuses the fourth digit of "1500", so the field is left
holding 150 and nothing is said. This one lets "1500" be typed, keeps the nearest value in range
(999) when the edit ends, and says so beside the field (and through `clamped`).
"""

from __future__ import annotations

import re

from PySide6.QtCore import QPoint, Signal
from PySide6.QtGui import QValidator
from PySide6.QtWidgets import QSpinBox, QToolTip, QWidget

SAID_FOR_MS = 6000
_NUMBER = re.compile(r"^[+-]?\d+$")


def clamp_message(typed: int, kept: int, low: int, high: int) -> str:
    edge = "most" if typed > high else "least"
    return f"{typed} is outside {low} to {high}: kept {kept}, the {edge} it can be."


class ClampedSpinBox(QSpinBox):
    """`clamped(typed, kept)` follows an edit that was out of range; `last_clamp` says it."""

    clamped = Signal(int, int)

    def __init__(self, low: int, high: int, tip: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setRange(low, high)
        self.last_clamp = ""
        range_said = f"{low} to {high}"
        self.setToolTip(tip if range_said in tip else f"{tip} ({range_said})".strip())

    def validate(self, text: str, pos: int) -> tuple[QValidator.State, str, int]:
        number = self._number_in(text)
        if number is not None and not self.minimum() <= number <= self.maximum():
            return QValidator.State.Intermediate, text, pos  # typing on: said when it ends
        return super().validate(text, pos)

    def fixup(self, text: str) -> str:
        number = self._number_in(text)
        if number is None:
            return super().fixup(text)
        kept = min(max(number, self.minimum()), self.maximum())
        if kept != number:
            self._say_clamped(number, kept)
        return f"{self.prefix()}{kept}{self.suffix()}"

    def _number_in(self, text: str) -> int | None:
        bare = text.removeprefix(self.prefix()).removesuffix(self.suffix()).strip()
        return int(bare) if _NUMBER.match(bare) else None

    def _say_clamped(self, typed: int, kept: int) -> None:
        self.last_clamp = clamp_message(typed, kept, self.minimum(), self.maximum())
        below = self.mapToGlobal(QPoint(0, self.height()))
        QToolTip.showText(below, self.last_clamp, self, self.rect(), SAID_FOR_MS)
        self.clamped.emit(typed, kept)
