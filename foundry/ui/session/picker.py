"""A dialog listing persisted sessions by title, most recent first, searchable, to reopen one."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence

from PySide6.QtCore import (
    QEvent,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QSize,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QFont, QKeyEvent, QKeySequence, QPainter, QShortcut
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from foundry.runtime.sessions import SessionRecord
from foundry.session.titles import session_title

SESSION_ID_ROLE = Qt.ItemDataRole.UserRole + 1
SEARCHED_ROLE = Qt.ItemDataRole.UserRole + 2  # the text a search looks in, lower case
DETAIL_ROLE = Qt.ItemDataRole.UserRole + 3  # the agent, when and the id, under the title
PAD = 6
SEARCH_PAUSE_MS = 250
Index = QModelIndex | QPersistentModelIndex
MessageSearch = Callable[[list[str]], Awaitable[set[str]]]


class SessionPicker(QDialog):
    """Non-modal: open it with `open()`; `chosen` carries the session id. `first_messages`
    (by session id, from `store.messages.first_user_messages`) titles the sessions;
    `search_messages` (words -> the ids of the sessions whose messages hold them all, off the
    GUI thread: `store.messages.sessions_mentioning`) lets the search find what was said."""

    chosen = Signal(str)

    def __init__(
        self,
        records: Sequence[SessionRecord],
        parent: QWidget | None = None,
        first_messages: Mapping[str, str] | None = None,
        search_messages: MessageSearch | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Reopen a session")
        self.resize(680, 460)
        self._search_messages = search_messages
        self._mentioning: set[str] = set()  # sessions whose messages hold the words typed
        self._searching: asyncio.Task[None] | None = None
        self._looking = False  # a search of the messages is under way
        self._search_soon = QTimer(self)  # the messages are searched once typing pauses
        self._search_soon.setSingleShot(True)
        self._search_soon.setInterval(SEARCH_PAUSE_MS)
        self._search_soon.timeout.connect(self._search_in_messages)
        self.search = QLineEdit()
        what = "messages" if search_messages else "first messages"
        self.search.setPlaceholderText(f"Search titles, agents and {what} (Ctrl+F)")
        self.search.setClearButtonEnabled(True)
        self.search.textChanged.connect(self._typed)
        self.search.returnPressed.connect(self.accept)  # opens the first session shown
        self.search.installEventFilter(self)
        QShortcut(QKeySequence.StandardKey.Find, self, self.search.setFocus)
        self.sessions = QListWidget()
        self.sessions.setAlternatingRowColors(True)
        self.sessions.setItemDelegate(SessionRow(self.sessions))
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
        return [item.text() for item in rows if not item.isHidden()]

    def _typed(self, text: str) -> None:
        self._mentioning = set()
        self._filter(text)
        if self._search_messages is not None and text.split():
            self._search_soon.start()

    def _search_in_messages(self) -> None:
        if self._searching is not None:
            self._searching.cancel()
        text = self.search.text()
        self._searching = asyncio.ensure_future(self._find_mentions(text))

    async def _find_mentions(self, text: str) -> None:
        assert self._search_messages is not None
        self._looking = True
        try:
            found = await self._search_messages(text.lower().split())
        except Exception as error:  # a store that cannot answer: said, the titles still filter
            self.nothing.setText(f"Could not search the messages: {error}")
            self.nothing.show()
            return
        finally:
            self._looking = False
        if self.search.text() == text:
            self._mentioning = found
            self._filter(text)

    def done(self, result: int) -> None:
        self._search_soon.stop()  # a search due after the dialog closed would find no loop
        if self._searching is not None:
            self._searching.cancel()
        super().done(result)

    def _filter(self, text: str) -> None:
        """Keep the sessions whose title, agent or first message hold every word typed, and
        those whose messages do."""
        words = text.lower().split()
        first_shown: QListWidgetItem | None = None
        for row in range(self.sessions.count()):
            item = self.sessions.item(row)
            searched = str(item.data(SEARCHED_ROLE))
            mentioned = str(item.data(SESSION_ID_ROLE)) in self._mentioning
            hidden = not mentioned and not all(word in searched for word in words)
            item.setHidden(hidden)
            if not hidden and first_shown is None:
                first_shown = item
        if first_shown is None:
            self.sessions.setCurrentRow(-1)
        else:
            self.sessions.setCurrentItem(first_shown)
        waiting = self._search_soon.isActive() or self._looking
        nothing = "Searching the messages…" if waiting else f"No session matches “{text.strip()}”."
        self.nothing.setText(nothing if first_shown is None else "")
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
    item = QListWidgetItem(title)
    item.setData(SESSION_ID_ROLE, record.id)
    item.setData(DETAIL_ROLE, f"{record.agent_name or '?'}  ·  {when}  ·  {record.id[:8]}")
    searched = " ".join((title, record.agent_name, first_message or "", record.id))
    item.setData(SEARCHED_ROLE, searched.lower())
    item.setToolTip(f"{first_message or title}\n\n{record.agent_path}")
    return item


class SessionRow(QStyledItemDelegate):
    """A session as its title, and under it, smaller and grey, its agent, time and id."""

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        return QSize(option.rect.width(), 2 * option.fontMetrics.height() + 3 * PAD)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        painter.save()
        if selected:
            painter.fillRect(option.rect, option.palette.highlight())
        title_font = QFont(option.font)
        title_font.setBold(True)
        area = option.rect.adjusted(PAD * 2, PAD, -PAD * 2, -PAD)
        line = option.fontMetrics.height()
        painter.setFont(title_font)
        palette = option.palette
        painter.setPen(palette.highlightedText().color() if selected else palette.text().color())
        title = painter.fontMetrics().elidedText(
            str(index.data(Qt.ItemDataRole.DisplayRole) or ""),
            Qt.TextElideMode.ElideRight,
            area.width(),
        )
        painter.drawText(area.adjusted(0, 0, 0, -line), int(Qt.AlignmentFlag.AlignTop), title)
        painter.setFont(option.font)
        painter.setPen(
            palette.highlightedText().color() if selected else palette.placeholderText().color()
        )
        detail = area.adjusted(0, line + PAD // 2, 0, 0)
        painter.drawText(detail, int(Qt.AlignmentFlag.AlignTop), str(index.data(DETAIL_ROLE) or ""))
        painter.restore()
