"""The Files page: one of the agent's files as text, its problems' lines marked, to edit by hand.

The widgets only; RawBinding reads, checks and saves the files.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFontDatabase,
    QKeyEvent,
    QKeySequence,
    QTextCharFormat,
    QTextCursor,
    QTextFormat,
)
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from foundry.ui.editor.code_editor import CodeEditor
from foundry.ui.editor.sections import heading, hint

PROBLEM_LINE = QColor("#ffcdd2")
PROBLEM_STYLE = "color: #b71c1c; background: #ffebee; padding: 6px; border-radius: 3px;"
NOTE_STYLE = "color: #8d4e00; background: #fff3e0; padding: 6px; border-radius: 3px;"
FINE_STYLE = "color: #1b5e20; padding: 6px;"


class RawTextEditor(CodeEditor):
    """A file's text; Ctrl+S saves this file (not the form) while the text has the focus and
    holds edits (else the editor's Save has the key)."""

    save_requested = Signal()

    def event(self, event: QEvent) -> bool:
        if (
            event.type() is QEvent.Type.ShortcutOverride
            and isinstance(event, QKeyEvent)
            and event.matches(QKeySequence.StandardKey.Save)
            and self.document().isModified()
            and not self.isReadOnly()
        ):
            event.accept()  # delivered here as a key press, not to the editor's Save
            return True
        return super().event(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.matches(QKeySequence.StandardKey.Save):
            self.save_requested.emit()
            return
        super().keyPressEvent(event)

    def mark_lines(self, lines: list[int]) -> None:
        """Give the lines (counted from 1) the problem colour."""
        marks = []
        for line in lines:
            block = self.document().findBlockByNumber(line - 1)
            if not block.isValid():
                continue
            mark = QTextEdit.ExtraSelection()
            char_format = QTextCharFormat()
            char_format.setBackground(PROBLEM_LINE)
            char_format.setProperty(QTextFormat.Property.FullWidthSelection, True)
            mark.format = char_format
            mark.cursor = QTextCursor(block)
            marks.append(mark)
        self.setExtraSelections(marks)

    def marked_lines(self) -> list[int]:
        return [mark.cursor.blockNumber() + 1 for mark in self.extraSelections()]


class RawFilesSection(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.file = QComboBox()
        self.file.setToolTip("The agent's file to show")
        self.file.setMinimumContentsLength(30)
        self.problem = QLabel()
        self.problem.setWordWrap(True)
        self.problem.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.text = RawTextEditor()
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.text.setTabChangesFocus(False)
        self.save = QPushButton("Save file")
        self.save.setToolTip("Check the text and write the file (Ctrl+S in the text)")
        self.revert = QPushButton("Revert")
        self.revert.setToolTip("Show the file as it is on disk, dropping the text typed here")
        self.outcome = QLabel()
        self.outcome.setWordWrap(True)
        self._lay_out()

    def _lay_out(self) -> None:
        picker = QHBoxLayout()
        picker.addWidget(QLabel("File:"))
        picker.addWidget(self.file, 1)
        buttons = QHBoxLayout()
        buttons.addWidget(self.save)
        buttons.addWidget(self.revert)
        buttons.addWidget(self.outcome, 1)
        layout = QVBoxLayout(self)
        layout.addWidget(heading("Files"))
        layout.addWidget(
            hint(
                "The agent's files as they are on disk. Edit one and save it: a text that does "
                "not parse is not saved, and the file is written whole or not at all."
            )
        )
        layout.addLayout(picker)
        layout.addWidget(self.problem)
        layout.addWidget(self.text, 1)
        layout.addLayout(buttons)

    def show_problem(self, text: str, kind: str = "problem") -> None:
        """The banner above the text: a problem, a note, or that the file is fine."""
        style = {"problem": PROBLEM_STYLE, "note": NOTE_STYLE}.get(kind, FINE_STYLE)
        self.problem.setStyleSheet(style)
        self.problem.setText(text)
        self.problem.setVisible(bool(text))
