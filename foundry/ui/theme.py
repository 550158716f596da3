"""The app's theme: the system's look, or Qt's Fusion style with a light or a dark palette."""

from __future__ import annotations

from typing import Literal

from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QStyleFactory, QWidget

THEME_SETTING = "appearance/theme"
Theme = Literal["system", "light", "dark"]
THEMES: tuple[Theme, ...] = ("system", "light", "dark")
DEFAULT_THEME: Theme = "system"

_Role = QPalette.ColorRole
_Group = QPalette.ColorGroup
# Fusion's dark palette: the window a dark grey, text near white, selection and links blue.
DARK_COLOURS: dict[QPalette.ColorRole, str] = {
    _Role.Window: "#2d2d30",
    _Role.WindowText: "#e8e8e8",
    _Role.Base: "#1e1e1e",
    _Role.AlternateBase: "#2a2a2d",
    _Role.ToolTipBase: "#3c3c40",
    _Role.ToolTipText: "#f0f0f0",
    _Role.PlaceholderText: "#8c8c8c",
    _Role.Text: "#e8e8e8",
    _Role.Button: "#3a3a3e",
    _Role.ButtonText: "#e8e8e8",
    _Role.BrightText: "#ff6b6b",
    _Role.Light: "#4a4a4f",
    _Role.Midlight: "#404045",
    _Role.Mid: "#303034",
    _Role.Dark: "#1a1a1c",
    _Role.Shadow: "#000000",
    _Role.Highlight: "#2f6fca",
    _Role.HighlightedText: "#ffffff",
    _Role.Link: "#6ab0ff",
    _Role.LinkVisited: "#b58cff",
}
DARK_DISABLED: dict[QPalette.ColorRole, str] = {
    _Role.WindowText: "#7a7a7a",
    _Role.Text: "#7a7a7a",
    _Role.ButtonText: "#7a7a7a",
    _Role.Highlight: "#3d3d42",
    _Role.HighlightedText: "#9a9a9a",
}

DARK_TEXT_LIGHTNESS = 0.7  # hand-picked text colours are lightened to at least this on dark

_system: tuple[str, QPalette] | None = None  # the style and palette the app started with


def theme_setting(settings: QSettings | None = None) -> Theme:
    """The theme as set; an unknown value is the default."""
    value = str((settings or QSettings()).value(THEME_SETTING, DEFAULT_THEME)).lower()
    return next((theme for theme in THEMES if theme == value), DEFAULT_THEME)


def dark_palette() -> QPalette:
    palette = QPalette()
    for role, colour in DARK_COLOURS.items():
        palette.setColor(role, QColor(colour))
    for role, colour in DARK_DISABLED.items():
        palette.setColor(_Group.Disabled, role, QColor(colour))
    return palette


def light_palette() -> QPalette:
    fusion = QStyleFactory.create("Fusion")
    return fusion.standardPalette()


def apply_theme(theme: Theme, application: QApplication | None = None) -> None:
    """Give the running app `theme`: "system" puts back the style and palette it started with."""
    global _system
    app = application or QApplication.instance()
    assert isinstance(app, QApplication)
    if _system is None:
        _system = (app.style().name(), app.palette())
    if theme == "system":
        app.setStyle(_system[0])
        app.setPalette(_system[1])
        app.styleHints().setColorScheme(Qt.ColorScheme.Unknown)
        return
    app.setStyle("Fusion")
    app.setPalette(dark_palette() if theme == "dark" else light_palette())
    scheme = Qt.ColorScheme.Dark if theme == "dark" else Qt.ColorScheme.Light
    app.styleHints().setColorScheme(scheme)


def is_dark(palette: QPalette | None = None) -> bool:
    """Whether text is drawn light on dark (charts and hand-picked colours follow this)."""
    palette = palette or QApplication.palette()
    return palette.color(_Role.Window).lightness() < palette.color(_Role.WindowText).lightness()


def themed_colour(colour: str, palette: QPalette | None = None) -> str:
    """A hand-picked text colour (`#2e7d32` for approved) as the theme draws it: itself on
    light, the same hue lightened on dark, where a dark green or red on near black is hard to
    read."""
    if not is_dark(palette):
        return colour
    shade = QColor(colour)
    lightness = max(shade.lightnessF(), DARK_TEXT_LIGHTNESS)
    return QColor.fromHslF(shade.hslHueF(), shade.hslSaturationF(), lightness).name()


def quiet(widget: QWidget) -> None:
    """Text drawn in the theme's quiet colour (a hint, a count): grey on light, a lighter grey
    on dark, where a fixed #616161 is hard to read."""
    widget.setForegroundRole(_Role.PlaceholderText)
