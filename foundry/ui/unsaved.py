"""Asking before unsaved agent edits are closed away: save, discard or cancel."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Literal

from PySide6.QtWidgets import QMessageBox, QWidget

from foundry.ui.editor import AgentEditor

Answer = Literal["save", "discard", "cancel"]


def unsaved_editors(editors: Sequence[QWidget | None]) -> list[AgentEditor]:
    return [e for e in editors if isinstance(e, AgentEditor) and e.modified]


class UnsavedQuestion(QMessageBox):
    """Non-modal; `answer()` waits for the choice."""

    def __init__(self, editors: Sequence[AgentEditor], parent: QWidget | None = None) -> None:
        names = ", ".join(editor.title.removesuffix(" *") for editor in editors)
        several = len(editors) > 1
        super().__init__(
            QMessageBox.Icon.Warning,
            "Unsaved edits",
            f"{names} {'have' if several else 'has'} unsaved edits. Save them before closing?",
            QMessageBox.StandardButton.Save
            | QMessageBox.StandardButton.Discard
            | QMessageBox.StandardButton.Cancel,
            parent,
        )
        self.setDefaultButton(QMessageBox.StandardButton.Save)
        self.setEscapeButton(QMessageBox.StandardButton.Cancel)

    async def answer(self) -> Answer:
        chosen: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
        buttons = {
            QMessageBox.StandardButton.Save: "save",
            QMessageBox.StandardButton.Discard: "discard",
        }

        def finished(_: int) -> None:
            if not chosen.done():
                button = self.standardButton(self.clickedButton())
                chosen.set_result(buttons.get(button, "cancel"))  # type: ignore[arg-type]

        self.finished.connect(finished)
        self.open()
        return await chosen


async def saved(editors: Sequence[AgentEditor]) -> bool:
    """Save every editor; True when all are saved (one whose save has problems stays open)."""
    results = [await editor.controller.save_and_wait() for editor in editors]
    return all(results)
