"""AgentEditor: the editor's widgets, its sections in a side list and problems beneath.

Pass the app's EngineBridge to run MCP servers and test providers on the engine's loop; without
one those sections explain that they need it and the rest of the editor works the same.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QAction, QCloseEvent, QKeyEvent, QKeySequence
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QSizePolicy,
    QSplitter,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from foundry.agent.document import AgentDocument
from foundry.ui.bridge import EngineBridge
from foundry.ui.editor.controller import EditorController
from foundry.ui.editor.policy_section import PolicySection
from foundry.ui.editor.providers_section import ProvidersSection
from foundry.ui.editor.raw_binding import RawBinding
from foundry.ui.editor.raw_section import RawFilesSection
from foundry.ui.editor.sections import (
    DiskChangedBar,
    ItemsSection,
    MetadataSection,
    ProblemsPanel,
    PromptSection,
    SettingsSection,
)
from foundry.ui.editor.supervisors_section import SupervisorsSection
from foundry.ui.editor.tools_section import ToolsSection
from foundry.ui.elided_label import ElidedLabel
from foundry.ui.theme import quiet

SECTIONS = (
    "Agent",
    "System prompt",
    "Settings",
    "Providers",
    "Rules",
    "References",
    "Tools",
    "Supervisors",
    "Policy",
    "Files",
)
FIX_FILES_FIRST = "The agent's files cannot be read: fix them on the Files page first"


class UndoKeysToEditor(QObject):
    """Lets Ctrl+Z / Ctrl+Shift+Z reach the editor's undo stack instead of one field's own."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() is not QEvent.Type.ShortcutOverride or not isinstance(event, QKeyEvent):
            return False
        if event.matches(QKeySequence.StandardKey.Undo) or event.matches(
            QKeySequence.StandardKey.Redo
        ):
            event.ignore()
            return True
        return False


class AgentEditor(QWidget):
    """Edits one agent. `load(document)` shows it; the controller applies and saves the edits."""

    open_agent_requested = Signal(Path)
    modified_changed = Signal(bool)
    title_changed = Signal(str)
    saved = Signal(Path)

    def __init__(self, parent: QWidget | None = None, bridge: EngineBridge | None = None) -> None:
        super().__init__(parent)
        self.metadata = MetadataSection()
        self.prompt = PromptSection()
        self.settings = SettingsSection()
        self.rules = ItemsSection("Rules", "rule")
        self.references = ItemsSection("References", "reference")
        self.providers = ProvidersSection()
        self.tools = ToolsSection()
        self.supervisors = SupervisorsSection()
        self.policy = PolicySection()
        self.raw_files = RawFilesSection()
        self.problems = ProblemsPanel()
        self.disk_bar = DiskChangedBar()
        self.sections = QListWidget()
        self.sections.addItems(SECTIONS)
        self.sections.setFixedWidth(150)
        self.sections.setSpacing(3)
        self.sections.setToolTip("The parts of the agent")
        self.pages = QStackedWidget()
        for page in (
            self.metadata,
            self.prompt,
            self.settings,
            self.providers,
            self.rules,
            self.references,
            self.tools,
            self.supervisors,
            self.policy,
            self.raw_files,
        ):
            self.pages.addWidget(page)
        self.sections.currentRowChanged.connect(self.pages.setCurrentIndex)
        self.heading = ElidedLabel()
        self.heading.setStyleSheet("font-size: 15pt; font-weight: bold;")
        self.status = QLabel()
        quiet(self.status)
        self.status.setWordWrap(True)
        self.status.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.save_action = _action(self, "Save", "Ctrl+S", "Write the agent's files")
        self.undo_action = _action(self, "Undo", "Ctrl+Z", "Undo the last edit")
        self.redo_action = _action(self, "Redo", "Ctrl+Shift+Z", "Redo the edit you undid")
        self._undo_keys = UndoKeysToEditor(self)
        self._lay_out()
        self._route_undo_keys()
        self.sections.setCurrentRow(0)
        self.controller = EditorController(self, bridge)
        self.raw = RawBinding(self.raw_files, self.controller)
        self.sections.currentRowChanged.connect(self._page_shown)

    def closeEvent(self, event: QCloseEvent) -> None:
        """A closed editor stops its work (a try of the policy, a tool server, a save)."""
        self.controller.close()
        super().closeEvent(event)

    def _page_shown(self, row: int) -> None:
        if SECTIONS[row] == "Policy":
            self.controller.spawn(self.controller.policy.load_recorded())

    def load(self, document: AgentDocument) -> None:
        """Show `document`, dropping any edits of the agent shown before; an agent whose files
        cannot be read opens on the Files page, at its first problem."""
        self.controller.load(document)
        self.raw.show(document)

    def enable_form(self, enabled: bool) -> None:
        """The pages that edit the agent's fields, off while its files cannot be read (the
        Files page, where they are fixed, never is)."""
        self.pages.setEnabled(True)
        for row in range(len(SECTIONS)):
            page, item = self.pages.widget(row), self.sections.item(row)
            usable = enabled or page is self.raw_files
            if page is None or item is None:
                continue
            page.setEnabled(usable)
            flags = item.flags()
            enabled_flag = Qt.ItemFlag.ItemIsEnabled
            item.setFlags(flags | enabled_flag if usable else flags & ~enabled_flag)
            item.setToolTip("" if usable else FIX_FILES_FIRST)

    @property
    def title(self) -> str:
        """The agent's name, with an asterisk while there are unsaved edits."""
        return self.controller.title

    @property
    def modified(self) -> bool:
        return self.controller.modified

    def show_section(self, name: str) -> None:
        self.sections.setCurrentRow(SECTIONS.index(name))

    def _toolbar(self) -> QHBoxLayout:
        bar = QHBoxLayout()
        bar.addWidget(self.heading, 2)
        bar.addWidget(self.status, 3)
        for action in (self.undo_action, self.redo_action, self.save_action):
            button = QToolButton()
            button.setDefaultAction(action)
            button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
            bar.addWidget(button)
        return bar

    def _lay_out(self) -> None:
        body = QWidget()
        columns = QHBoxLayout(body)
        columns.setContentsMargins(0, 0, 0, 0)
        columns.addWidget(self.sections)
        columns.addWidget(self.pages, 1)
        vertical = QSplitter(Qt.Orientation.Vertical)
        vertical.addWidget(body)
        vertical.addWidget(self.problems)
        vertical.setChildrenCollapsible(False)
        vertical.setSizes([640, 110])
        layout = QVBoxLayout(self)
        layout.addLayout(self._toolbar())
        layout.addWidget(self.disk_bar)
        layout.addWidget(vertical, 1)

    def _route_undo_keys(self) -> None:
        """Ctrl+Z undoes the editor's last edit, except in a file's text, which has its own."""
        for widget in self.findChildren(QWidget):
            if widget is self.raw_files.text:
                continue
            if isinstance(widget, QLineEdit | QPlainTextEdit | QAbstractSpinBox):
                widget.installEventFilter(self._undo_keys)
            if isinstance(widget, QPlainTextEdit):
                widget.setUndoRedoEnabled(False)


def _action(parent: QWidget, text: str, keys: str, tip: str) -> QAction:
    action = QAction(text, parent)
    shortcut = QKeySequence(keys)
    action.setShortcut(shortcut)
    action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
    native = shortcut.toString(QKeySequence.SequenceFormat.NativeText)
    action.setToolTip(f"{tip} ({native})")
    parent.addAction(action)
    return action
