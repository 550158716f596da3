"""A dialog listing persisted sessions, most recent first, to reopen one."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QListWidget,
    QListWidgetItem,
    QVBoxLayout,
    QWidget,
)

from foundry.store import SessionRecord

SESSION_ID_ROLE = Qt.ItemDataRole.UserRole + 1


class SessionPicker(QDialog):
    """Non-modal: open it with `open()`; `chosen` carries the session id."""

    chosen = Signal(str)

    def __init__(self, records: Sequence[SessionRecord], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Reopen a session")
        self.resize(640, 420)
        self.sessions = QListWidget()
        for record in records:
            when = record.updated_at.astimezone().strftime("%Y-%m-%d %H:%M")
            item = QListWidgetItem(f"{when}   {record.agent_name or '?'}   {record.id[:8]}")
            item.setData(SESSION_ID_ROLE, record.id)
            item.setToolTip(record.agent_path)
            self.sessions.addItem(item)
        self.sessions.setCurrentRow(0)
        self.sessions.itemDoubleClicked.connect(lambda _: self.accept())
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Open | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.sessions)
        layout.addWidget(buttons)

    def accept(self) -> None:
        item = self.sessions.currentItem()
        if item is not None:
            self.chosen.emit(str(item.data(SESSION_ID_ROLE)))
        super().accept()
