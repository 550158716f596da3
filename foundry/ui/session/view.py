"""The live session view: the conversation, the supervision timeline, context and stats."""

from __future__ import annotations

from typing import cast

from PySide6.QtCore import QSettings, Qt, Signal, Slot
from PySide6.QtGui import QFocusEvent, QKeyEvent, QKeySequence, QPainter, QPaintEvent, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QListWidget,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from foundry.session.titles import session_title
from foundry.ui.session.agent_bar import AgentBar, SavesBar
from foundry.ui.session.conversation import ConversationModel
from foundry.ui.session.follow import FollowsEnd
from foundry.ui.session.message_delegate import MessageDelegate
from foundry.ui.session.send_key import SendKey, send_hint, send_key, send_key_changes, sends
from foundry.ui.session.timeline import TimelineModel
from foundry.ui.session.timeline_view import TimelinePanel
from foundry.ui.session.trust_bar import TrustBar

EMPTY_CHAT = "Ask the agent something below ({keys}). Its replies and tool calls appear here."
EMPTY_TIMELINE = "What the supervisors decide about each message and tool call appears here."
EMPTY_CONTEXT = (
    "The agent's rules, references and tools chosen for each request appear here, with why, "
    "once you send a message. Double-click one to leave it out; name one below to bring it in."
)
TYPING = {"working": "● ● ●", "writing": "● ● ●  Assistant is writing…"}
NO_CONTEXT = (
    "The last request used none of the agent's rules, references or tools. Name one below to "
    "bring it in."
)


def empty_chat_hint(key: SendKey) -> str:
    return EMPTY_CHAT.format(keys=send_hint(key))


def paint_hint(view: QListView, hint: str) -> None:
    """Write `hint` over the empty viewport of `view` (in its paint event)."""
    model = view.model()
    if model is None or model.rowCount() == 0:
        painter = QPainter(view.viewport())
        painter.setPen(view.palette().placeholderText().color())
        area = view.viewport().rect().adjusted(24, 24, -24, -24)
        flags = Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop
        painter.drawText(area, flags | Qt.TextFlag.TextWordWrap, hint)


class _EmptyListHint:
    """Mixed in before a Qt list class: the list says, while it is empty, what will appear."""

    def __init__(self, hint: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)  # type: ignore[call-arg]  # the Qt list class after this one
        self.hint = hint

    def show_hint(self, hint: str) -> None:
        self.hint = hint
        cast(QListView, self).viewport().update()

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)  # type: ignore[misc]
        paint_hint(cast(QListView, self), self.hint)


class HintedListView(_EmptyListHint, QListView):
    """A list that says, while it is empty, what will appear in it."""


class HintedListWidget(_EmptyListHint, QListWidget):
    """A list of items that says, while it is empty, what will appear in it."""


class MessageInput(QPlainTextEdit):
    """The message field: Enter sends and Shift+Enter starts a new line, or Ctrl+Enter sends
    and Enter starts a new line, as the "chat/send_key" setting says (read at each key press,
    so a change in Preferences applies at once). A text field takes Enter before any shortcut
    sees it, so the field itself turns it into a signal."""

    submitted = Signal()
    keys_changed = Signal(str)  # the send key, when the setting changed since last shown

    def __init__(self, parent: QWidget | None = None, settings: QSettings | None = None) -> None:
        super().__init__(parent)
        self.settings = settings  # None: the application's settings
        self._shown_key: SendKey | None = None
        self.show_hint()
        send_key_changes().changed.connect(self.show_hint)  # a change in Preferences

    @Slot()
    def show_hint(self) -> None:
        key = send_key(self.settings)
        if key == self._shown_key:
            return
        self._shown_key = key
        self.setPlaceholderText(f"Message the agent… ({send_hint(key)}; Esc stops a reply)")
        self.keys_changed.emit(key)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if sends(event, send_key(self.settings)):
            self.submitted.emit()
            return
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.insertPlainText("\n")  # Shift+Enter (or Enter when Ctrl+Enter sends)
            return
        super().keyPressEvent(event)

    def focusInEvent(self, event: QFocusEvent) -> None:
        self.show_hint()  # the setting may have changed since
        super().focusInEvent(event)


class ApprovalBar(QWidget):
    """A pending human approval of this session, answered in place."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.text = QLabel()
        self.text.setWordWrap(True)
        self.reasoning = QLineEdit()
        self.reasoning.setPlaceholderText("Reasoning (sent to the agent when you deny)")
        self.approve = QPushButton("Approve")
        self.deny = QPushButton("Deny")
        self.approve.setToolTip("Let the tool call run (Ctrl+Shift+A)")
        self.deny.setToolTip("Refuse it; the agent reads your reasoning (Ctrl+Shift+D)")
        self.approve.setShortcut(QKeySequence("Ctrl+Shift+A"))
        self.deny.setShortcut(QKeySequence("Ctrl+Shift+D"))
        layout = QHBoxLayout(self)
        layout.addWidget(self.text, 3)
        layout.addWidget(self.reasoning, 2)
        layout.addWidget(self.approve)
        layout.addWidget(self.deny)
        self.setStyleSheet("ApprovalBar { background: #fff3e0; }")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.hide()


class SessionView(QWidget):
    """Holds the widgets of one session; SessionController connects them to the engine.
    `title_changed` carries the chat's title once its first message is there (for its tab)."""

    title_changed = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = ""  # the first message as a title (session_title), once there is one
        self.conversation = ConversationModel(self)
        self.timeline = TimelineModel(self)
        self.input = MessageInput()
        self.messages = self._message_list()
        self.input.keys_changed.connect(self._show_send_key)
        self.decisions = HintedListView(EMPTY_TIMELINE)
        self.decisions.setToolTip("Click a decision to find the message it acted on")
        self.supervision = TimelinePanel(self.timeline, self.decisions)
        self.messages_follow = FollowsEnd(self.messages)
        self.decisions_follow = FollowsEnd(self.decisions)
        self.typing = QLabel()  # from a send until the reply's first words
        self.typing.setStyleSheet("color: #607d8b; padding-left: 10px;")
        self.typing.setFixedHeight(self.typing.sizeHint().height() + 4)  # no jump when it shows
        self.conversation.awaiting_changed.connect(self._show_typing)
        self.conversation.rowsInserted.connect(self._find_title)
        self.conversation.modelReset.connect(self._find_title)
        self.context = HintedListWidget(EMPTY_CONTEXT)
        self.context.setToolTip("Double-click an item to take it out of the context")
        self.include = QLineEdit()
        self.include.setPlaceholderText("Include… rule:NAME, ref:NAME or tool:SERVER.TOOL")
        self.stats = {name: QLabel("0") for name in ("turns", "input", "output", "model time")}
        self.approval = ApprovalBar()
        self.trust = TrustBar()
        self.agent_bar = AgentBar()  # what of the saved agent waits for a restart
        self.saves_bar = SavesBar()  # what the agent saved to its own files, to undo
        self.input.setMaximumHeight(110)
        self.input.setTabChangesFocus(True)  # Tab goes on to Send and the panels
        self.send = QPushButton("Send")
        self._show_send_key(send_key(self.input.settings))
        self.stop = QPushButton("Stop")
        self.stop.setToolTip("Stop the reply, keeping what was written (Esc)")
        self.stop.setEnabled(False)
        self.status = QLabel()
        self.at_work = QLabel()  # the supervisors reviewing now, with their elapsed time
        self.at_work.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.at_work.setToolTip("Supervisors reviewing a message now, and for how long")
        self.send_shortcut = QShortcut(QKeySequence("Ctrl+Return"), self)
        self.stop_shortcut = QShortcut(QKeySequence("Escape"), self)
        self._lay_out()

    def _message_list(self) -> HintedListView:
        view = HintedListView(empty_chat_hint(send_key(self.input.settings)))
        view.setModel(self.conversation)
        view.setItemDelegate(MessageDelegate(view))
        view.setWordWrap(True)
        view.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        view.setResizeMode(QListView.ResizeMode.Adjust)
        view.setUniformItemSizes(False)
        view.setLayoutMode(QListView.LayoutMode.Batched)  # long histories lay out in steps
        view.setBatchSize(100)
        return view

    def _side_panel(self) -> QTabWidget:
        tabs = QTabWidget()
        tabs.addTab(self.supervision, "Supervision")
        context = QWidget()
        layout = QVBoxLayout(context)
        layout.addWidget(self.context)
        layout.addWidget(self.include)
        tabs.addTab(context, "Context")
        stats = QWidget()
        form = QFormLayout(stats)
        for name, label in self.stats.items():
            form.addRow(name.capitalize() + ":", label)
        tabs.addTab(stats, "Stats")
        return tabs

    def _lay_out(self) -> None:
        splitter = QSplitter(Qt.Orientation.Horizontal)
        chat = QWidget()
        column = QVBoxLayout(chat)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(2)
        column.addWidget(self.messages, 1)
        column.addWidget(self.typing)
        splitter.addWidget(chat)
        self.panels = self._side_panel()
        splitter.addWidget(self.panels)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        splitter.setSizes([3000, 2000])  # the chat three fifths, whatever the panels ask for
        buttons = QVBoxLayout()
        buttons.addWidget(self.send)
        buttons.addWidget(self.stop)
        entry = QHBoxLayout()
        entry.addWidget(self.input, 1)
        entry.addLayout(buttons)
        layout = QVBoxLayout(self)
        layout.addWidget(self.trust)
        layout.addWidget(self.agent_bar)
        layout.addWidget(self.saves_bar)
        layout.addWidget(splitter, 1)
        layout.addWidget(self.approval)
        layout.addLayout(entry)
        status = QHBoxLayout()
        status.addWidget(self.status, 1)
        status.addWidget(self.at_work)
        layout.addLayout(status)

    def _show_typing(self, state: str) -> None:
        """ "…" while supervisors read the message or a tool runs, "Assistant is writing…" once
        the model has the request; hidden when its words arrive or it waits for you."""
        self.typing.setText(TYPING.get(state, ""))

    def _find_title(self) -> None:
        if self.title:
            return
        first = next((row.text for row in self.conversation.rows if row.kind == "user"), None)
        if first is not None:
            self.title = session_title(first)
            self.title_changed.emit(self.title)

    def _show_send_key(self, key: SendKey) -> None:
        self.messages.show_hint(empty_chat_hint(key))
        self.send.setToolTip(f"Send the message ({'Enter' if key == 'enter' else 'Ctrl+Enter'})")
