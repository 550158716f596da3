"""The bar a session shows while its agent's commands wait for the user's trust."""

from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from foundry.agent.trust import TrustCheck, would_do


class TrustBar(QWidget):
    """Names each command the agent would run and each server it would connect to; "Trust and
    start" or "Keep stopped"."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.text = QLabel()
        self.text.setWordWrap(True)
        self.text.setTextFormat(Qt.TextFormat.RichText)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.trust = QPushButton("Trust and start")
        self.trust.setToolTip(
            "Run these commands now and whenever this agent opens, until they change"
        )
        self.keep_stopped = QPushButton("Keep stopped")
        self.keep_stopped.setToolTip("Chat without these tools; nothing is run")
        buttons = QVBoxLayout()
        buttons.addWidget(self.trust)
        buttons.addWidget(self.keep_stopped)
        buttons.addStretch(1)
        layout = QHBoxLayout(self)
        layout.addWidget(self.text, 1)
        layout.addLayout(buttons)
        self.setStyleSheet(
            "TrustBar { background: #fff8e1; border-bottom: 1px solid #e0c068; }"
            "TrustBar QLabel { color: #4a3b00; }"
        )
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.hide()

    def show_check(self, check: TrustCheck) -> None:
        items = "".join(f"<li><code>{escape(item.display)}</code></li>" for item in check.untrusted)
        stopped = "tools and model are" if check.untrusted_providers else "tools are"
        self.text.setText(
            f"<b>This agent's {stopped} stopped.</b> Starting them would "
            f"{would_do(check.untrusted)} ({escape(check.reason)}):<ul>{items}</ul>"
            "Trust them only if you trust where this agent came from."
        )
        self.show()
