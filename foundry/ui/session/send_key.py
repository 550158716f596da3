"""Which key sends a chat message: the setting "chat/send_key", "enter" or "ctrl+enter".

With "enter", Enter sends and Shift+Enter starts a new line (as Claude Desktop, ChatGPT and LM
Studio do); with "ctrl+enter", Enter starts a new line and Ctrl+Enter sends. Ctrl+Enter sends
with either. Preferences writes the setting; every chat reads it at each key press, and
`send_key_changes()` tells the open chats to show the new key at once.
"""

from __future__ import annotations

from typing import Literal

from PySide6.QtCore import QObject, QSettings, Qt, Signal
from PySide6.QtGui import QKeyEvent

from foundry.ui.settings import foundry_settings

SEND_KEY_SETTING = "chat/send_key"
SendKey = Literal["enter", "ctrl+enter"]
SEND_KEYS: tuple[SendKey, ...] = ("enter", "ctrl+enter")
DEFAULT_SEND_KEY: SendKey = "enter"


class SendKeyChanges(QObject):
    """Emits `changed` after the send key is set, for the fields that say which key sends."""

    changed = Signal()


_changes: SendKeyChanges | None = None


def send_key_changes() -> SendKeyChanges:
    """The one notifier of this process (created on first use, on the GUI thread)."""
    global _changes
    if _changes is None:
        _changes = SendKeyChanges()
    return _changes


def send_key(settings: QSettings | None = None) -> SendKey:
    """The key that sends, as set (in the app's settings file unless `settings` is given); an
    unknown value is the default."""
    value = str((settings or foundry_settings()).value(SEND_KEY_SETTING, DEFAULT_SEND_KEY)).lower()
    return "ctrl+enter" if value == "ctrl+enter" else DEFAULT_SEND_KEY


def set_send_key(key: SendKey, settings: QSettings | None = None) -> None:
    if key not in SEND_KEYS:
        raise ValueError(f"the send key is one of {', '.join(SEND_KEYS)}, not {key!r}")
    (settings or foundry_settings()).setValue(SEND_KEY_SETTING, key)
    send_key_changes().changed.emit()


def sends(event: QKeyEvent, key: SendKey) -> bool:
    """Whether this key press sends the message (otherwise the field takes it)."""
    if event.key() not in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
        return False
    modifiers = event.modifiers()
    if modifiers & Qt.KeyboardModifier.ControlModifier:
        return True
    plain = not modifiers & (Qt.KeyboardModifier.ShiftModifier | Qt.KeyboardModifier.AltModifier)
    return key == "enter" and plain


def send_hint(key: SendKey) -> str:
    """What the message field says about its keys."""
    if key == "enter":
        return "Enter sends, Shift+Enter starts a new line"
    return "Ctrl+Enter sends, Enter starts a new line"
