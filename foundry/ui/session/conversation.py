"""The conversation of one session as a Qt list model, fed by the session's events."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import (
    QAbstractListModel,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    QTimer,
    Signal,
)

from foundry.session.events import (
    AgentApplied,
    AgentSave,
    ApprovalRequested,
    ApprovalResolved,
    ContextSelected,
    ErrorOccurred,
    Event,
    EventBody,
    MessageAdded,
    MessageRevised,
    ModelCallFinished,
    TokenDelta,
    ToolCallDecided,
    ToolCallFinished,
    TurnFinished,
    TurnStarted,
)
from foundry.session.readable import readable
from foundry.ui.session.agent_bar import applied_notice

KIND_ROLE = Qt.ItemDataRole.UserRole + 1
DETAIL_ROLE = Qt.ItemDataRole.UserRole + 2
STREAMING_ROLE = Qt.ItemDataRole.UserRole + 3
FRAME_MS = 16  # streamed tokens reach the view at most once per frame
Index = QModelIndex | QPersistentModelIndex


@dataclass
class Row:
    kind: str  # user, assistant, tool, error
    text: str
    detail: str = ""
    streaming: bool = False  # its text is still arriving ("writing…")
    message_index: int | None = None


@dataclass
class _ToolNotes:
    decided: dict[str, str] = field(default_factory=dict)  # "approved by X" / "denied by X"
    seconds: dict[str, float] = field(default_factory=dict)


class ConversationModel(QAbstractListModel):
    """`awaiting` is what the chat waits for before the reply's first words: "working" (the
    supervisors read the message, a tool runs), "writing" (the model has the request) or ""
    (words are arriving, or nothing is awaited, or a person is asked); `awaiting_changed`
    carries each change."""

    awaiting_changed = Signal(str)

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.awaiting = ""
        self.rows: list[Row] = []
        self._message_rows: list[int] = []  # session message index -> row
        self._pending_tokens: list[str] = []
        self._streamed_row: int | None = None  # a streamed reply's row, until it is stored
        self._tools = _ToolNotes()
        self._bulk = False
        self._flush_timer = QTimer(self)
        self._flush_timer.setInterval(FRAME_MS)
        self._flush_timer.setSingleShot(True)
        self._flush_timer.timeout.connect(self._flush_tokens)

    # -- Qt model -------------------------------------------------------------------------------

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 (Qt's signature)
        return 0 if parent.isValid() else len(self.rows)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row = self.rows[index.row()]
        values = {
            Qt.ItemDataRole.DisplayRole: row.text,
            Qt.ItemDataRole.ToolTipRole: row.detail or None,
            KIND_ROLE: row.kind,
            DETAIL_ROLE: row.detail,
            STREAMING_ROLE: row.streaming,
        }
        return values.get(Qt.ItemDataRole(role) if role < KIND_ROLE else role)

    def row_of_message(self, message_index: int) -> int | None:
        if 0 <= message_index < len(self._message_rows):
            return self._message_rows[message_index]
        return None

    # -- events ---------------------------------------------------------------------------------

    def replay(self, events: list[Event]) -> None:
        """Load a stored session at once (one model reset, not a signal per row); the tokens of
        stored messages are skipped, since each message holds its whole text."""
        self.beginResetModel()
        self._bulk = True
        try:
            for event in events:
                if not isinstance(event.body, TokenDelta):
                    self.apply(event)
        finally:
            self._bulk = False
            self.endResetModel()
        self._await("")

    def apply(self, event: Event) -> None:
        body = event.body
        if not self._bulk:
            self._note_awaited(body)
        if isinstance(body, TokenDelta):
            self._pending_tokens.append(body.text)
            if not self._flush_timer.isActive():
                self._flush_timer.start()
        elif isinstance(body, MessageAdded):
            self._add_message(body)
        elif isinstance(body, MessageRevised):
            self._revise(body)
        elif isinstance(body, ToolCallDecided):
            verdict = "approved" if body.allowed else "denied"
            self._tools.decided[body.call.id] = f"{verdict} by {body.by}"
        elif isinstance(body, ToolCallFinished):
            self._tools.seconds[body.call_id] = body.duration_s
        elif isinstance(body, ErrorOccurred):
            self._append(Row(kind="error", text=readable(body.message), detail=body.where))
        elif isinstance(body, AgentApplied):
            self._append(Row(kind="notice", text=applied_notice(body)))
        elif isinstance(body, AgentSave):
            self._append(Row(kind="notice", text=readable(body.sentence())))
        elif isinstance(body, ModelCallFinished):
            self._end_writing()
        elif isinstance(body, TurnFinished):
            self._end_writing()
            self._streamed_row = None  # a reply never stored (the model failed) stays as shown

    def _note_awaited(self, body: EventBody) -> None:
        if isinstance(body, TurnStarted | ApprovalResolved):
            self._await("working")
        elif isinstance(body, ContextSelected):
            self._await("writing")
        elif isinstance(body, MessageAdded) and body.message.role != "user":
            message = body.message
            self._await("working" if message.role == "tool" or message.tool_calls else "")
        elif isinstance(body, ApprovalRequested | TurnFinished | ErrorOccurred):
            self._await("")

    def _await(self, what: str) -> None:
        if what != self.awaiting:
            self.awaiting = what
            self.awaiting_changed.emit(what)

    def _flush_tokens(self) -> None:
        text = "".join(self._pending_tokens)
        self._pending_tokens.clear()
        if not text:
            return
        self._await("")  # the reply's words are arriving
        if self._streamed_row is not None:
            self.rows[self._streamed_row].text += text
            self._changed(self._streamed_row)
        else:
            self._streamed_row = len(self.rows)
            self._append(Row(kind="assistant", text=text, streaming=True))

    def _end_writing(self) -> None:
        """The model's text has ended: the reply is no longer being written, even while a
        supervisor still reviews it before it is stored."""
        self._flush_timer.stop()
        self._flush_tokens()
        if self._streamed_row is not None and self.rows[self._streamed_row].streaming:
            self.rows[self._streamed_row].streaming = False
            self._changed(self._streamed_row)

    def _add_message(self, body: MessageAdded) -> None:
        self._flush_timer.stop()
        self._pending_tokens.clear()
        message = body.message
        row = Row(kind=message.role, text=message.content, message_index=len(self._message_rows))
        if message.role == "assistant" and message.tool_calls:
            calls = ", ".join(
                f"{call.name}({_short(call.arguments)})" for call in message.tool_calls
            )
            row.detail = readable(f"calls {calls}")
        if message.role == "tool":
            call_id = message.tool_call_id or ""
            seconds = self._tools.seconds.get(call_id)
            timing = f" in {seconds:.2f} s" if seconds is not None else ""
            decided = self._tools.decided.get(call_id, "decided by ?")
            row.detail = f"{message.name}{timing}, {decided}"
        streamed, self._streamed_row = self._streamed_row, None
        if streamed is not None and message.role == "assistant":
            self.rows[streamed] = row
            self._message_rows.append(streamed)
            self._changed(streamed)
            return
        self._message_rows.append(len(self.rows))
        self._append(row)

    def _revise(self, body: MessageRevised) -> None:
        row = self.row_of_message(body.message_index)
        if row is not None:
            self.rows[row].text = body.content
            self.rows[row].detail = f"rewritten by {body.by}"
            self._changed(row)

    def _append(self, row: Row) -> None:
        if self._bulk:
            self.rows.append(row)
            return
        self.beginInsertRows(QModelIndex(), len(self.rows), len(self.rows))
        self.rows.append(row)
        self.endInsertRows()

    def _changed(self, row: int) -> None:
        if self._bulk:
            return
        index = self.index(row)
        self.dataChanged.emit(index, index)


def _short(arguments: dict[str, Any]) -> str:
    text = ", ".join(f"{key}={value!r}" for key, value in arguments.items())
    return text if len(text) <= 80 else text[:77] + "..."
