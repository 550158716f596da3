"""A conversation row: its header fits the row, and a row without text is its header alone."""

from __future__ import annotations

from PySide6.QtCore import QRect
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import QListView, QStyleOptionViewItem
from pytestqt.qtbot import QtBot

from foundry.llm.base import ChatMessage, ToolCall
from foundry.session.events import MessageAdded
from foundry.ui.session.conversation import ConversationModel
from foundry.ui.session.message_delegate import MessageDelegate, header_text

from .test_conversation_cards import event

DETAIL = "time.get_current_time in 0.01 s, approved by policy:current-time-is-routine"


def test_a_header_longer_than_its_row_is_cut_with_an_ellipsis(qtbot: QtBot) -> None:
    metrics = QFontMetrics(QFont())
    width = metrics.horizontalAdvance("Tool  ·  time.get_current_time")

    cut = header_text("Tool", DETAIL, metrics, width)

    assert cut.startswith("Tool") and cut.endswith("…")
    assert metrics.horizontalAdvance(cut) <= width
    assert header_text("Tool", DETAIL, metrics, 10 * width) == f"Tool  ·  {DETAIL}"


def test_a_row_without_text_is_as_tall_as_its_header(qtbot: QtBot) -> None:
    model = ConversationModel()
    call = ToolCall(id="c1", name="time.get_current_time", arguments={"timezone": "Asia/Tokyo"})
    model.apply(event(1, MessageAdded(message=ChatMessage(role="assistant", tool_calls=[call]))))
    model.apply(event(2, MessageAdded(message=ChatMessage(role="assistant", content="Noon."))))
    view = QListView()
    qtbot.addWidget(view)
    view.setModel(model)
    delegate = MessageDelegate(view)
    option = QStyleOptionViewItem()
    option.rect = QRect(0, 0, 600, 0)
    option.font = view.font()

    calling, answering = (delegate.sizeHint(option, model.index(row)) for row in (0, 1))

    assert model.rows[0].kind == "assistant" and not model.data(model.index(0)).strip()
    line = QFontMetrics(view.font()).lineSpacing()
    assert answering.height() - calling.height() >= line
