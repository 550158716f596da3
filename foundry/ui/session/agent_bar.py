"""The bars a chat shows about its agent: parts of the saved agent that wait for the chat to
restart, and what the agent saved to its own files."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QWidget

from foundry.session.events import AgentApplied, AgentSave

RESTART_KEYS = "Ctrl+Alt+R"  # (Ctrl+Shift+R adds a rule in the editor)


def applied_notice(body: AgentApplied) -> str:
    """What a save of the agent changed in this chat, in a sentence or two."""
    return body.describe("Restart chat runs the saved agent and keeps the conversation")


class NoticeBar(QWidget):
    """A line across the top of a chat: a sentence and the buttons that act on it, hidden
    while there is nothing to say."""

    def __init__(
        self, buttons: list[QPushButton], colours: tuple[str, str, str], parent: QWidget | None
    ) -> None:
        super().__init__(parent)
        background, border, ink = colours
        self.text = QLabel()
        self.text.setWordWrap(True)
        layout = QHBoxLayout(self)
        layout.addWidget(self.text, 1)
        for button in buttons:
            layout.addWidget(button)
        name = type(self).__name__
        self.setStyleSheet(
            f"{name} {{ background: {background}; border-bottom: 1px solid {border}; }}"
            f"{name} QLabel {{ color: {ink}; }}"
        )
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.hide()


class AgentBar(NoticeBar):
    """Says what of the saved agent this chat does not run yet; "Restart chat" applies it,
    keeping the conversation."""

    def __init__(self, parent: QWidget | None = None) -> None:
        restart = QPushButton("Restart chat")
        restart.setShortcut(QKeySequence(RESTART_KEYS))
        restart.setToolTip(
            "Start this chat again on the agent as saved: its servers, model and supervisors "
            f"start again, the conversation stays ({RESTART_KEYS})"
        )
        super().__init__([restart], ("#e3f2fd", "#90caf9", "#0d3c61"), parent)
        self.restart = restart

    def show_pending(self, body: AgentApplied) -> None:
        """Shown while something waits for a restart; hidden once nothing does."""
        if not body.pending:
            self.hide()
            return
        self.text.setText(applied_notice(body))
        self.show()


class SavesBar(NoticeBar):
    """Says what the agent last saved to its own files (a rule, a reference or a tool's include
    mode, through its internal tools); Undo takes it back, Keep hides the bar."""

    def __init__(self, parent: QWidget | None = None) -> None:
        undo = QPushButton("Undo")
        undo.setToolTip(
            "Put the rule or reference back as it was, in the agent's files and in this chat"
        )
        keep = QPushButton("Keep")
        keep.setToolTip("Keep what the agent saved and hide this bar")
        super().__init__([undo, keep], ("#fff8e1", "#ffcc80", "#5d4037"), parent)
        self.undo, self.keep = undo, keep

    def show_save(self, body: AgentSave | None, more: int = 0) -> None:
        """The latest save that can be undone (with how many earlier ones), or hidden."""
        if body is None:
            self.hide()
            return
        earlier = f" ({more} earlier change{'s' if more > 1 else ''} can be undone after it.)"
        self.text.setText(body.sentence() + (earlier if more else ""))
        self.show()
