"""The bar a chat shows while parts of its saved agent wait for the chat to restart."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QWidget

from foundry.session.events import AgentApplied

RESTART_KEYS = "Ctrl+Alt+R"  # (Ctrl+Shift+R adds a rule in the editor)


def applied_notice(body: AgentApplied) -> str:
    """What a save of the agent changed in this chat, in a sentence or two."""
    return body.describe("Restart chat runs the saved agent and keeps the conversation")


class AgentBar(QWidget):
    """Says what of the saved agent this chat does not run yet; "Restart chat" applies it,
    keeping the conversation."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.text = QLabel()
        self.text.setWordWrap(True)
        self.restart = QPushButton("Restart chat")
        self.restart.setShortcut(QKeySequence(RESTART_KEYS))
        self.restart.setToolTip(
            "Start this chat again on the agent as saved: its servers, model and supervisors "
            f"start again, the conversation stays ({RESTART_KEYS})"
        )
        layout = QHBoxLayout(self)
        layout.addWidget(self.text, 1)
        layout.addWidget(self.restart)
        self.setStyleSheet(
            "AgentBar { background: #e3f2fd; border-bottom: 1px solid #90caf9; }"
            "AgentBar QLabel { color: #0d3c61; }"
        )
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.hide()

    def show_pending(self, body: AgentApplied) -> None:
        """Shown while something waits for a restart; hidden once nothing does."""
        if not body.pending:
            self.hide()
            return
        self.text.setText(applied_notice(body))
        self.show()
