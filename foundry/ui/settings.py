"""Where the app keeps its preferences and window state: an INI file in Foundry's config folder.

`foundry_settings()` is that file (under FOUNDRY_HOME when it is set, else the platform's config
folder); `use_foundry_settings()` makes a bare `QSettings()` anywhere in the app read the same
file, once the application's names are set.
"""

from __future__ import annotations

from PySide6.QtCore import QSettings

from foundry.home import FoundryHome

DEFAULT_MODEL_SETTING = "models/default"  # Preferences' model for new agents and chats
ORGANIZATION = "Foundry"
APPLICATION = "Foundry"
_INI = QSettings.Format.IniFormat
_USER = QSettings.Scope.UserScope


def _point_at_foundry_home() -> None:
    QSettings.setPath(_INI, _USER, str(FoundryHome.from_environment().config_dir))


def foundry_settings() -> QSettings:
    """The app's settings file (read each time: FOUNDRY_HOME may have changed)."""
    _point_at_foundry_home()
    return QSettings(_INI, _USER, ORGANIZATION, APPLICATION)


def use_foundry_settings() -> None:
    """`QSettings()` is `foundry_settings()` from now on (the app calls it at start)."""
    _point_at_foundry_home()
    QSettings.setDefaultFormat(_INI)


def default_model(settings: QSettings | None = None) -> str:
    """The model set in Preferences for new agents and for chats with an agent naming none; ""
    for the built-in one."""
    return str((settings or foundry_settings()).value(DEFAULT_MODEL_SETTING, "") or "").strip()
