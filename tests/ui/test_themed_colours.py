"""Hand-picked text colours (an approval's status, a diff's lines, a task's state) stay as picked
on the light theme and are themed_colour on the dark one: WCAG's 4.5:1 against the dark lists."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QColor, QPalette

from foundry.ui.inbox.concerns import DIFF_COLOURS, DIFF_CONTEXT
from foundry.ui.inbox.model import STATUS_COLOURS
from foundry.ui.tasks.view import STATUS_COLOURS as TASK_COLOURS
from foundry.ui.theme import dark_palette, light_palette, themed_colour

PICKED = sorted(
    {*STATUS_COLOURS.values(), *DIFF_COLOURS.values(), DIFF_CONTEXT, *TASK_COLOURS.values()}
)


def luminance(colour: str) -> float:
    def channel(value: float) -> float:
        return value / 12.92 if value <= 0.03928 else ((value + 0.055) / 1.055) ** 2.4

    shade = QColor(colour)
    red, green, blue = (channel(c) for c in (shade.redF(), shade.greenF(), shade.blueF()))
    return 0.2126 * red + 0.7152 * green + 0.0722 * blue


def contrast(text: str, background: str) -> float:
    lighter, darker = sorted((luminance(text), luminance(background)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


@pytest.mark.parametrize("colour", PICKED)
def test_a_picked_colour_is_readable_on_the_dark_lists_and_unchanged_on_light(
    qapp: object, colour: str
) -> None:
    dark = dark_palette()
    base = dark.color(QPalette.ColorRole.Base).name()
    assert contrast(themed_colour(colour, dark), base) >= 4.5
    assert themed_colour(colour, light_palette()) == colour
    assert abs(QColor(themed_colour(colour, dark)).hue() - QColor(colour).hue()) <= 2  # its hue
