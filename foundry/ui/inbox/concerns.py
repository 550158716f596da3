"""The concerns that sent a call to a person whatever the rules said (supervision/concerns.py),
as the approval shows them: a warning per concern, and what it rests on (a definition's diff,
the flagged description, the result that made the session untrusted)."""

from __future__ import annotations

from html import escape
from typing import Any

from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QLabel, QTextEdit, QVBoxLayout, QWidget

from foundry.supervision.concerns import heading
from foundry.ui.theme import themed_colour

ACCEPTING = {
    "definition-changed": "Approving (unedited) pins the new definition.",
    "new-tool": "Approving (unedited) pins the tool as it is offered now.",
}
# what each part of a concern's detail is, in the order shown
DETAIL_PARTS = (
    ("diff", "Changes (- pinned, + now)"),
    ("description", "The description as the server sends it"),
    ("flagged", "What was flagged"),
    ("shadows", "Shadows"),
    ("result", "The untrusted content"),
    ("sends", "What this call sends"),
)
BOX_STYLE = "background: #fff8e1; color: #4e342e; border: 1px solid #ffcc80; padding: 6px;"
MAX_BOX_HEIGHT = 220
DIFF_COLOURS = {"+": "#1b5e20", "-": "#b71c1c", "@": "#6a1b9a"}
DIFF_CONTEXT = "#37474f"


class ConcernsPanel(QWidget):
    """The approval's concerns, each under a warning; hidden when it has none."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._column = QVBoxLayout(self)
        self._column.setContentsMargins(0, 0, 0, 0)
        self.setVisible(False)

    def show_concerns(self, concerns: list[dict[str, Any]] | None) -> None:
        while self._column.count():
            item = self._column.takeAt(0)
            shown = item.widget() if item is not None else None
            if shown is not None:
                shown.deleteLater()
        for concern in concerns or ():
            self._add(concern)
        self.setVisible(bool(concerns))

    def _add(self, concern: dict[str, Any]) -> None:
        kind = str(concern.get("kind", ""))
        title = heading(kind)
        accepting = ACCEPTING.get(kind, "")
        warning = QLabel(
            f"⚠ <b>{escape(title)}.</b> {escape(str(concern.get('reason', '')))}"
            + (f" <i>{escape(accepting)}</i>" if accepting else "")
        )
        warning.setWordWrap(True)
        warning.setStyleSheet(BOX_STYLE)
        self._column.addWidget(warning)
        detail = concern.get("detail")
        for key, title in DETAIL_PARTS:
            value = _shown(detail.get(key) if isinstance(detail, dict) else None)
            if value:
                self._column.addWidget(QLabel(f"<b>{escape(title)}</b>"))
                self._column.addWidget(_text_box(value, diff=key == "diff"))


def _shown(value: Any) -> str:
    """A part of a concern's detail as text: as it is, or the result that tainted the session
    (`tool`, `at`, `why`) in one line."""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, dict) and "tool" in value:
        at = str(value.get("at", ""))[11:16]  # HH:MM of the ISO time
        return f"{value['tool']}{f' at {at}' if at else ''}: {value.get('why', '')}".strip()
    return ""


def _text_box(text: str, diff: bool) -> QTextEdit:
    """`text` read-only in a fixed-width font; a diff's lines coloured by what they do."""
    box = QTextEdit()
    box.setReadOnly(True)
    box.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
    if diff:
        box.setHtml(_diff_html(text))
    else:
        box.setPlainText(text)
    box.setLineWrapMode(QTextEdit.LineWrapMode.WidgetWidth)
    lines = text.count("\n") + 1
    box.setFixedHeight(min(MAX_BOX_HEIGHT, 24 + lines * box.fontMetrics().lineSpacing()))
    return box


def _diff_html(diff: str) -> str:
    rows = []
    for line in diff.splitlines():
        colour = DIFF_COLOURS.get(line[:1], DIFF_CONTEXT)
        if line.startswith(("+++", "---")):
            colour = DIFF_CONTEXT
        colour = themed_colour(colour)
        rows.append(f"<span style='color:{colour}'>{escape(line) or '&nbsp;'}</span>")
    return "<pre style='margin:0'>" + "\n".join(rows) + "</pre>"
