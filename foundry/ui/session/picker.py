"""A dialog listing persisted sessions by title, most recent first, searchable, to reopen one."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QKeyEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QVBoxLayout,
    QWidget,
)

from foundry.runtime.sessions import SessionRecord
from foundry.session.titles import session_title

SESSION_ID_ROLE = Qt.ItemDataRole.UserRole + 1
SEARCHED_ROLE = Qt.ItemDataRole.UserRole + 2  # the text a search looks in, lower case


class SessionPicker(QDialog):
    """Non-modal: open it with `open()`; `chosen` carries the session id. `first_messages`
    (by session id, from `store.messages.first_user_messages`) titles the sessions."""

    chosen = Signal(str)

    def __init__(
        self,
        records: Sequence[SessionRecord],
        parent: QWidget | None = None,
        first_messages: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Reopen a session")
        self.resize(680, 460)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search titles, agents and first messages (Ctrl+F)")
        self.search.setClearButtonEnabled(True)
        self.search.textChanged.connect(self._filter)
        self.search.returnPressed.connect(self.accept)  # opens the first session shown
        self.search.installEventFilter(self)
        QShortcut(QKeySequence.StandardKey.Find, self, self.search.setFocus)
        self.sessions = QListWidget()
        self.sessions.setAlternatingRowColors(True)
        for record in records:
            self.sessions.addItem(_item(record, (first_messages or {}).get(record.id)))
        self.sessions.setCurrentRow(0)
        self.sessions.itemDoubleClicked.connect(lambda _: self.accept())
        self.nothing = QLabel()
        self.nothing.setStyleSheet("color: #607d8b;")
        self.nothing.hide()
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Open | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.search)
        layout.addWidget(self.sessions, 1)
        layout.addWidget(self.nothing)
        layout.addWidget(buttons)
        self.search.setFocus()

    def shown_titles(self) -> list[str]:
        """The titles the list shows now (the search hides the others)."""
        rows = (self.sessions.item(row) for row in range(self.sessions.count()))
        return [item.text().split("\n")[0] for item in rows if not item.isHidden()]

    def _filter(self, text: str) -> None:
        """Keep the sessions whose title, agent or first message hold every word typed."""
        words = text.lower().split()
        first_shown: QListWidgetItem | None = None
        for row in range(self.sessions.count()):
            item = self.sessions.item(row)
            searched = str(item.data(SEARCHED_ROLE))
            hidden = not all(word in searched for word in words)
            item.setHidden(hidden)
            if not hidden and first_shown is None:
                first_shown = item
        if first_shown is None:
            self.sessions.setCurrentRow(-1)
        else:
            self.sessions.setCurrentItem(first_shown)
        self.nothing.setText(f"No session matches “{text.strip()}”." if first_shown is None else "")
        self.nothing.setVisible(first_shown is None)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Up and Down in the search field move through the list; Enter opens."""
        moving = (
            watched is self.search
            and isinstance(event, QKeyEvent)
            and event.type() == QEvent.Type.KeyPress
            and event.key() in (Qt.Key.Key_Up, Qt.Key.Key_Down)
        )
        if moving and isinstance(event, QKeyEvent):
            self.sessions.setFocus()
            self.sessions.keyPressEvent(event)
            return True
        return super().eventFilter(watched, event)

    def accept(self) -> None:
        item = self.sessions.currentItem()
        if item is not None and not item.isHidden():
            self.chosen.emit(str(item.data(SESSION_ID_ROLE)))
        super().accept()


def _item(record: SessionRecord, first_message: str | None) -> QListWidgetItem:
    title = record.title or session_title(first_message, record.agent_name)
    when = record.updated_at.astimezone().strftime("%Y-%m-%d %H:%M")
    item = QListWidgetItem(f"{title}\n{record.agent_name or '?'}  ·  {when}  ·  {record.id[:8]}")
    item.setData(SESSION_ID_ROLE, record.id)
    searched = " ".join((title, record.agent_name, first_message or "", record.id))
    item.setData(SEARCHED_ROLE, searched.lower())
    item.setToolTip(f"{first_message or title}\n\n{record.agent_path}")
    return item
