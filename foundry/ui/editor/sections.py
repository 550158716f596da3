"""The widgets of the editor's simpler sections: metadata, prompt, settings, items, supervisors."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QModelIndex, QStringListModel, Qt, Signal
from PySide6.QtGui import QFont, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLayout,
    QLineEdit,
    QListView,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTableView,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from foundry.agent.models import IncludeMode, ToolPermission
from foundry.ui.clamped_spin import ClampedSpinBox
from foundry.ui.editor.code_editor import CodeEditor
from foundry.ui.editor.items_model import ContextItemModel
from foundry.ui.theme import quiet


def column(*parts: QWidget | QLayout, stretch: QWidget | None = None) -> QWidget:
    """A widget of `parts` stacked with no margins; `stretch` takes the spare height."""
    box = QWidget()
    layout = QVBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    for part in parts:
        if isinstance(part, QLayout):
            layout.addLayout(part)
        else:
            layout.addWidget(part, 1 if part is stretch else 0)
    return box


def list_and_detail(
    listing: QWidget, buttons: tuple[QWidget, ...], detail: QWidget, empty: QWidget
) -> QSplitter:
    """A list with its buttons on the left, the chosen entry's detail (or a hint) on the right."""
    row = QHBoxLayout()
    for button in buttons:
        row.addWidget(button)
    split = QSplitter(Qt.Orientation.Horizontal)
    split.addWidget(column(listing, row, stretch=listing))
    split.addWidget(column(detail, empty, stretch=detail))
    split.setChildrenCollapsible(False)
    split.setSizes([220, 800])
    return split


def heading(text: str) -> QLabel:
    label = QLabel(text)
    label.setStyleSheet("font-weight: bold; font-size: 13pt; padding: 2px 0 6px 0;")
    return label


def hint(text: str) -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    quiet(label)
    return label


def set_line(line: QLineEdit, text: str) -> None:
    """Show `text`, leaving the cursor alone when it is already shown."""
    if line.text() != text:
        line.setText(text)


class MarkdownEditor(QSplitter):
    """Markdown source on the left, its rendering on the right."""

    def __init__(self, placeholder: str, parent: QWidget | None = None) -> None:
        super().__init__(Qt.Orientation.Horizontal, parent)
        self.source = CodeEditor()
        self.source.setPlaceholderText(placeholder)
        self.preview = QTextBrowser()
        self.preview.setOpenExternalLinks(True)
        self.preview.setToolTip("Preview of the markdown")
        self.addWidget(self.source)
        self.addWidget(self.preview)
        self.setChildrenCollapsible(False)
        self.source.textChanged.connect(self._render)

    def _render(self) -> None:
        self.preview.setMarkdown(self.source.toPlainText())

    def set_text(self, text: str) -> None:
        """Show `text`, leaving the cursor alone when it is already shown."""
        if self.source.toPlainText() != text:
            self.source.setPlainText(text)


class MetadataSection(QWidget):
    """The agent's name, description and version; when it was created and last used."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.name = QLineEdit()
        self.name.setToolTip("The agent's name, shown in Foundry and to its supervisors")
        self.name.setMinimumWidth(360)
        self.description = QPlainTextEdit()
        self.description.setPlaceholderText("What the agent is for")
        self.description.setFixedHeight(110)
        self.version = QLineEdit()
        self.version.setPlaceholderText("e.g. 1.0.0")
        self.created = QLabel()
        self.last_accessed = QLabel()
        form = QFormLayout()
        form.addRow("Name:", self.name)
        form.addRow("Description:", self.description)
        form.addRow("Version:", self.version)
        form.addRow("Created:", self.created)
        form.addRow("Last used:", self.last_accessed)
        layout = QVBoxLayout(self)
        layout.addWidget(heading("Agent"))
        layout.addLayout(form)
        layout.addStretch(1)


class PromptSection(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.editor = MarkdownEditor("The system prompt, in markdown")
        layout = QVBoxLayout(self)
        layout.addWidget(heading("System prompt"))
        layout.addWidget(self.editor, 1)


class SettingsSection(QWidget):
    """A form with one control per setting."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.max_chat_turns = _spin(1, 1000, "Model ↔ tool round trips per reply")
        self.max_output_tokens = _spin(1, 1_000_000, "Token limit per response")
        self.temperature = _double(0.0, 2.0, "Sampling temperature (0 to 2)")
        self.top_p = _double(0.0, 1.0, "Nucleus sampling (0 to 1)")
        self.model = QLineEdit()
        self.model.setPlaceholderText("provider:model, e.g. ollama:qwen2.5:7b (empty: embedded)")
        self.model.setToolTip("The model, written provider:model; empty uses the embedded model")
        self.tool_permission = QComboBox()
        for permission, label in PERMISSION_LABELS.items():
            self.tool_permission.addItem(label, permission.value)
        self.tool_permission.setToolTip("When tool calls need your approval")
        self.context_top_k = _spin(0, 1000, "Relevance selection: candidates considered")
        self.context_top_n = _spin(0, 1000, "Relevance selection: items kept")
        self.context_include_score = _double(0.0, 1.0, "Score above which an item is always kept")
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.FieldsStayAtSizeHint)
        form.addRow("Model:", self.model)
        form.addRow("Max chat turns:", self.max_chat_turns)
        form.addRow("Max output tokens:", self.max_output_tokens)
        form.addRow("Temperature:", self.temperature)
        form.addRow("Top P:", self.top_p)
        form.addRow("Tool approval:", self.tool_permission)
        form.addRow("Context top K:", self.context_top_k)
        form.addRow("Context top N:", self.context_top_n)
        form.addRow("Context include score:", self.context_include_score)
        self.model.setMinimumWidth(360)
        layout = QVBoxLayout(self)
        layout.addWidget(heading("Settings"))
        layout.addLayout(form)
        layout.addStretch(1)


PERMISSION_LABELS = {
    ToolPermission.TOOL: "Each tool's own setting (tool)",
    ToolPermission.ALWAYS: "Ask for every call (always)",
    ToolPermission.NEVER: "Never ask (never)",
}
INCLUDE_LABELS = {
    IncludeMode.ALWAYS: "always: in every request",
    IncludeMode.MANUAL: "manual: when you add it",
    IncludeMode.AGENT: "agent: chosen by relevance",
}


def _spin(low: int, high: int, tip: str) -> QSpinBox:
    spin = ClampedSpinBox(low, high, tip)  # a value typed out of range is kept in it, said
    spin.setMinimumWidth(120)
    return spin


def _double(low: float, high: float, tip: str) -> QDoubleSpinBox:
    spin = QDoubleSpinBox()
    spin.setRange(low, high)
    spin.setSingleStep(0.05)
    spin.setDecimals(2)
    spin.setToolTip(tip)
    spin.setMinimumWidth(120)
    return spin


class ItemsSection(QWidget):
    """Rules or references: a table sorted by priority, and the selected item's form below."""

    def __init__(self, title: str, noun: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.noun = noun
        self.model = ContextItemModel(self)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.table.setAlternatingRowColors(True)
        self.new = QPushButton(f"New {noun}")
        self.new.setToolTip(f"Add a {noun} (Ctrl+Shift+R)")
        self.new_shortcut = QShortcut(QKeySequence("Ctrl+Shift+R"), self)
        self.new_shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.delete = QPushButton("Delete")
        self.delete.setToolTip(f"Delete the selected {noun} (undo with Ctrl+Z)")
        self.name = QLineEdit()
        self.name.setPlaceholderText("letters, digits, _ and -")
        self.name.setToolTip(f"The {noun}'s name; also its file name")
        self.description = QLineEdit()
        self.priority = _spin(0, 999, "Lower numbers come first (0 to 999)")
        self.enabled = QCheckBox("Enabled")
        self.include = QComboBox()
        for mode, label in INCLUDE_LABELS.items():
            self.include.addItem(label, mode.value)
        self.include.setToolTip(f"When the {noun} is put into the model's context")
        self.text = MarkdownEditor(f"The {noun}'s text, in markdown")
        self.form = self._form()
        self.empty = hint(f"Select a {noun} above, or add one with New {noun} (Ctrl+Shift+R).")
        self._lay_out(title)

    def _form(self) -> QWidget:
        form_widget = QWidget()
        fields = QFormLayout()
        fields.addRow("Name:", self.name)
        fields.addRow("Description:", self.description)
        row = QHBoxLayout()
        row.addWidget(QLabel("Priority:"))
        row.addWidget(self.priority)
        row.addSpacing(16)
        row.addWidget(QLabel("Include:"))
        row.addWidget(self.include)
        row.addSpacing(16)
        row.addWidget(self.enabled)
        row.addStretch(1)
        fields.addRow(row)
        layout = QVBoxLayout(form_widget)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(fields)
        layout.addWidget(self.text, 1)
        return form_widget

    def _lay_out(self, title: str) -> None:
        buttons = QHBoxLayout()
        buttons.addWidget(heading(title))
        buttons.addStretch(1)
        buttons.addWidget(self.new)
        buttons.addWidget(self.delete)
        top = QWidget()
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        top_layout.addLayout(buttons)
        top_layout.addWidget(self.table)
        bottom = QWidget()
        bottom_layout = QVBoxLayout(bottom)
        bottom_layout.setContentsMargins(0, 0, 0, 0)
        bottom_layout.addWidget(self.form, 1)
        bottom_layout.addWidget(self.empty)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(top)
        splitter.addWidget(bottom)
        splitter.setChildrenCollapsible(False)
        splitter.setSizes([220, 420])
        layout = QVBoxLayout(self)
        layout.addWidget(splitter)

    def show_form(self, visible: bool) -> None:
        self.form.setVisible(visible)
        self.empty.setVisible(not visible)
        self.delete.setEnabled(visible)


@dataclass(frozen=True)
class ShownProblem:
    """A problem as the panel lists it, and where it leads: a page, a field, a line in a page's
    text box (`editor` names the box when the line is counted in it rather than in a file)."""

    text: str
    page: str = ""
    location: tuple[str | int, ...] = ()
    editor: str = ""
    line: int | None = None
    column: int | None = None


PROBLEMS_HEIGHT = 110  # the list's room when it opens: four or five problems
ANY_HEIGHT = 16777215  # Qt's QWIDGETSIZE_MAX, which PySide6 does not export


class ProblemsPanel(QWidget):
    """Every problem of the agent as edited: file:line: field: message. Double-click (or Enter)
    on one goes to where it is."""

    activated = Signal(ShownProblem)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.problems: list[ShownProblem] = []
        self.model = QStringListModel(self)
        self.list = QListView()
        self.list.setModel(self.model)
        self.list.setWordWrap(True)
        self.list.setAlternatingRowColors(True)
        self.list.setToolTip("Double-click a problem to go to it")
        self.list.activated.connect(self._activated)
        self.title = QLabel("Problems")
        bold = QFont(self.title.font())
        bold.setBold(True)
        self.title.setFont(bold)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addWidget(self.list)
        self._fold(folded=True)

    def show_problems(self, problems: list[ShownProblem]) -> None:
        had_problems = bool(self.problems)
        self.problems = problems
        self.model.setStringList([problem.text for problem in problems])
        self.title.setText(f"Problems ({len(problems)})" if problems else "Problems: none")
        if bool(problems) != had_problems:
            self._fold(folded=not problems)

    def _fold(self, folded: bool) -> None:
        """With no problems the panel is its title line, and the pages above get the room."""
        self.list.setVisible(not folded)
        height = self.title.sizeHint().height() if folded else PROBLEMS_HEIGHT
        self.setMaximumHeight(height if folded else ANY_HEIGHT)
        splitter = self.parentWidget()
        if isinstance(splitter, QSplitter) and splitter.count() == 2:
            sizes = [max(sum(splitter.sizes()) - height, 0), height]
            splitter.setSizes(sizes if splitter.indexOf(self) else sizes[::-1])

    def _activated(self, index: QModelIndex) -> None:
        if 0 <= index.row() < len(self.problems):
            self.activated.emit(self.problems[index.row()])


class DiskChangedBar(QWidget):
    """Shown when the agent's files change on disk while there are unsaved edits, when they
    are deleted, and when they cannot be read (the editor keeps what it shows)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.text = QLabel()
        self.text.setWordWrap(True)
        self.deleted = False  # the agent is gone from disk (no Reload then)
        self.reload = QPushButton("Reload")
        self.reload.setToolTip("Drop your unsaved edits and show the agent as it is on disk")
        self.keep = QPushButton("Keep mine")
        self.keep.setToolTip("Keep your edits; saving writes them over the change")
        layout = QHBoxLayout(self)
        layout.addWidget(self.text, 1)
        layout.addWidget(self.reload)
        layout.addWidget(self.keep)
        self.setStyleSheet("DiskChangedBar { background: #fff3e0; }")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.hide()

    def show_changed(self) -> None:
        self.deleted = False
        self.text.setText("The agent changed on disk.")
        self.reload.show()
        self.keep.setText("Keep mine")
        self.show()

    def show_broken(self, problem: str) -> None:
        """The agent's files on disk cannot be read: the editor keeps what it showed."""
        self.deleted = False
        self.text.setText(
            f"The agent's file on disk is broken: {problem}. The editor keeps showing the "
            "agent as last read, and reloads it once the file is fixed; it does not write to it."
        )
        self.reload.hide()
        self.keep.setText("Hide")
        self.show()

    def show_deleted(self, path: Path) -> None:
        """The agent is gone from disk: the editor keeps showing it, there is nothing to reload."""
        self.text.setText(
            f"The agent was deleted on disk ({path}). The editor still shows it: copy what you "
            "need before you close this tab."
        )
        self.deleted = True
        self.reload.hide()
        self.keep.setText("Hide")
        self.show()
