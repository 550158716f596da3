"""The Supervisors page: the chain as a list, a form for the selected supervisor, the JSON beside.

The widgets only; SupervisorsBinding connects them to the working agent.
"""

from __future__ import annotations

from PySide6.QtCore import QStringListModel, Qt
from PySide6.QtGui import QFontDatabase, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QListWidget,
    QMenu,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSplitter,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from foundry.agent.models import DIRECTIONS, PII_KINDS, SupervisionPermission
from foundry.ui.clamped_spin import ClampedSpinBox
from foundry.ui.editor.code_editor import CodeEditor
from foundry.ui.editor.sections import column, heading, hint

TYPE_LABELS = {
    "guardian": "Guardian: masks personal data, blocks keywords",
    "agent": "Agent supervisor: another agent reviews each message",
    "policy": "Policy: rules that decide every tool call",
    "collection": "Collection: statistics of the conversation",
    "architect": "Architect: watches for patterns, never blocks",
}
PERMISSION_TIPS = {
    SupervisionPermission.READ_ONLY: "Read the conversation; change nothing",
    SupervisionPermission.MODIFY_CONTEXT: "Change rules and references for later turns",
    SupervisionPermission.MODIFY_MESSAGES: "Rewrite or block the message under review",
    SupervisionPermission.FULL_CONTROL: "Everything above",
}


def checkboxes(names: tuple[str, ...], tips: dict[str, str] | None = None) -> dict[str, QCheckBox]:
    return {name: _checkbox(name, (tips or {}).get(name, "")) for name in names}


def _checkbox(name: str, tip: str) -> QCheckBox:
    box = QCheckBox(name)
    box.setToolTip(tip)
    return box


def column_of(boxes: dict[str, QCheckBox]) -> QVBoxLayout:
    """The boxes one under the other (long names: two side by side widened the form)."""
    layout = QVBoxLayout()
    for box in boxes.values():
        layout.addWidget(box)
    return layout


def row_of(boxes: dict[str, QCheckBox]) -> QGridLayout:
    """The boxes in rows of two, so that the form stays narrow."""
    grid = QGridLayout()
    for index, box in enumerate(boxes.values()):
        grid.addWidget(box, index // 2, index % 2)
    grid.setColumnStretch(2, 1)
    return grid


class GuardianForm(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.mask_pii = checkboxes(PII_KINDS)
        self.block_keywords = QPlainTextEdit()
        self.block_keywords.setPlaceholderText("One word or phrase per line")
        self.block_keywords.setToolTip("A message containing one of these is blocked")
        self.block_keywords.setFixedHeight(120)
        self.apply_to = checkboxes(DIRECTIONS)
        form = QFormLayout(self)
        form.addRow("Mask:", row_of(self.mask_pii))
        form.addRow("Block keywords:", self.block_keywords)
        form.addRow("Apply to:", row_of(self.apply_to))


class AgentSupervisorForm(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.agent_path = QLineEdit()
        self.agent_path.setPlaceholderText("../reviewer (relative to this agent's folder)")
        self.agent_path.setToolTip("The supervising agent, relative to this agent's folder")
        self.browse = QPushButton("Browse…")
        self.browse.setToolTip("Pick the supervising agent's folder")
        self.open = QPushButton("Open")
        self.open.setToolTip("Open the supervising agent in an editor tab (Ctrl+Shift+O)")
        path_buttons = QHBoxLayout()  # under the path, so that the form stays narrow
        path_buttons.addWidget(self.browse)
        path_buttons.addWidget(self.open)
        path_buttons.addStretch(1)
        path_row = QVBoxLayout()
        path_row.addWidget(self.agent_path)
        path_row.addLayout(path_buttons)
        tips = {permission.value: tip for permission, tip in PERMISSION_TIPS.items()}
        self.allowed_actions = checkboxes(tuple(SupervisionPermission), tips)
        self.max_modifications = ClampedSpinBox(
            0, 1000, "Changes it may make per conversation (0 to 1000)"
        )
        self.fallback = QComboBox()
        self.fallback.addItem("allow the message", "allow")
        self.fallback.addItem("block the message", "block")
        self.fallback.setToolTip("What happens when the supervisor fails or runs out of time")
        self.timeout = ClampedSpinBox(0, 3600)
        self.timeout.setSuffix(" s")
        self.timeout.setSpecialValueText("default")
        self.timeout.setToolTip(
            "How long a message may wait for this supervisor; then its fallback applies "
            "(0 to 3600 s; 0: the default, 30 s for one that can block or rewrite)"
        )
        self.apply_to = checkboxes(DIRECTIONS)
        form = QFormLayout(self)
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)  # a narrow pane: fields
        form.addRow("Agent:", path_row)  # go under their labels rather than off its edge
        form.addRow("Allowed actions:", column_of(self.allowed_actions))
        form.addRow("Max modifications:", self.max_modifications)
        form.addRow("When it fails:", self.fallback)
        form.addRow("Time budget:", self.timeout)
        form.addRow("Apply to:", row_of(self.apply_to))


class PolicyForm(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.summary = hint("")
        self.edit_rules = QPushButton("Edit the rules on the Policy page")
        self.edit_rules.setToolTip("The rules, limits and the try panel (Policy page)")
        self.shadow_mode = QCheckBox("Shadow mode")
        self.shadow_mode.setToolTip(
            "Measure the supervisor on your own calls: its verdicts change nothing and no one "
            "sees them; foundry approvals agreement compares them with your decisions"
        )
        self.shadow_what = hint("The supervisor also judges, unseen, the calls a person decides.")
        self.shadow_cost = hint("")
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addWidget(self.edit_rules, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(self.shadow_mode)
        layout.addWidget(self.shadow_what)
        layout.addWidget(self.shadow_cost)
        layout.addStretch(1)


class CollectionForm(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.export_path = QLineEdit()
        self.export_path.setPlaceholderText("stats.json (empty: not exported)")
        self.export_path.setToolTip("Where the statistics are written, relative to the agent")
        form = QFormLayout(self)
        form.addRow("Export to:", self.export_path)


class ArchitectForm(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.addWidget(
            hint(
                "tsagent's architect watches the conversation for patterns and suggests rules "
                "and references. It never blocks a message and has no settings; fields it does "
                "not know are kept as they are."
            )
        )
        layout.addStretch(1)


class SupervisorForms(QWidget):
    """The selected supervisor: its id, name and switch, then the form of its type."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.id = QLineEdit()
        self.id.setToolTip("Unique id: letters, digits, _ and -")
        self.name = QLineEdit()
        self.name.setPlaceholderText("shown in the timeline (empty: the id)")
        self.enabled = QCheckBox("Enabled")
        self.kind = QLabel()
        self.kind.setWordWrap(True)
        self.guardian = GuardianForm()
        self.agent = AgentSupervisorForm()
        self.policy = PolicyForm()
        self.collection = CollectionForm()
        self.architect = ArchitectForm()
        self.by_type = {
            "guardian": self.guardian,
            "agent": self.agent,
            "policy": self.policy,
            "collection": self.collection,
            "architect": self.architect,
        }
        self.stack = QStackedWidget()
        for form in self.by_type.values():
            self.stack.addWidget(form)
        self.stack.currentChanged.connect(self._size_to_current)
        self._size_to_current()
        common = QFormLayout()
        common.addRow("Type:", self.kind)
        common.addRow("Id:", self.id)
        common.addRow("Name:", self.name)
        common.addRow("", self.enabled)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(common)
        layout.addWidget(self.stack)
        layout.addStretch(1)

    def _size_to_current(self) -> None:
        """The stack is as wide as the form shown needs, not as the widest of them: a pane
        narrower than that cut the shown form off at its right edge."""
        current = self.stack.currentWidget()
        for form in self.by_type.values():
            policy = QSizePolicy.Policy.Preferred if form is current else QSizePolicy.Policy.Ignored
            form.setSizePolicy(policy, policy)
        self.stack.updateGeometry()

    def show_type(self, kind: str) -> None:
        self.kind.setText(TYPE_LABELS.get(kind, kind))
        self.stack.setCurrentWidget(self.by_type[kind])


class SupervisorsSection(QWidget):
    """The chain in order (drag or Alt+Up/Down to reorder), the selected one's form, the JSON."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.entries = QListWidget()
        self.entries.setDragDropMode(QAbstractItemView.DragDropMode.InternalMove)
        self.entries.setDefaultDropAction(Qt.DropAction.MoveAction)
        self.entries.setToolTip("The chain, first to last: drag to reorder")
        self.entries.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.entries.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.add = QToolButton()
        self.add.setText("Add")
        self.add.setToolTip("Add a supervisor of a type")
        self.add.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.add_menu = QMenu(self.add)
        for kind, label in TYPE_LABELS.items():
            self.add_menu.addAction(label).setData(kind)
        self.add.setMenu(self.add_menu)
        self.remove = QPushButton("Remove")
        self.remove.setToolTip("Remove the selected supervisor (undo with Ctrl+Z)")
        self.up = _small_button("↑", "Earlier in the chain (Alt+Up)")
        self.down = _small_button("↓", "Later in the chain (Alt+Down)")
        self.up_shortcut = _shortcut(self, "Alt+Up")
        self.down_shortcut = _shortcut(self, "Alt+Down")
        self.forms = SupervisorForms()
        self.empty = hint("No supervisor selected. Add one with Add, or pick one on the left.")
        self.json = CodeEditor()
        self.json.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.json.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.json.setToolTip("The same supervisors as JSON; checked as you type")
        self.problems_model = QStringListModel(self)
        self.problems = QListView()
        self.problems.setModel(self.problems_model)
        self.problems.setMaximumHeight(90)
        self.problems.setToolTip("Click a problem to go to its line")
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.open_agent = QPushButton("Open supervisor agent")
        self.open_agent.setToolTip(
            "Open the agent of the selected supervisor, or of the JSON entry under the cursor "
            "(Ctrl+Shift+O)"
        )
        self.open_shortcut = _shortcut(self, "Ctrl+Shift+O")
        self._lay_out()

    def _lay_out(self) -> None:
        buttons = (self.add, self.remove, self.up, self.down)
        left = column(self.entries, _row(*buttons), stretch=self.entries)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(column(self.forms, self.empty, stretch=self.forms))
        json_header = _row(QLabel("JSON"), self.open_agent)
        right = column(json_header, self.json, self.status, self.problems, stretch=self.json)
        split = QSplitter(Qt.Orientation.Horizontal)
        for part in (left, scroll, right):
            split.addWidget(part)
        split.setChildrenCollapsible(False)
        split.setSizes([230, 450, 400])
        layout = QVBoxLayout(self)
        layout.addWidget(heading("Supervisors"))
        layout.addWidget(
            hint(
                "Each message passes the supervisors in this order. The form and the JSON edit "
                "the same list; fields the form does not show are kept."
            )
        )
        layout.addWidget(split, 1)

    def show_form(self, kind: str | None) -> None:
        self.forms.setVisible(kind is not None)
        self.empty.setVisible(kind is None)
        self.remove.setEnabled(kind is not None)
        if kind is not None:
            self.forms.show_type(kind)


def _row(*widgets: QWidget) -> QHBoxLayout:
    row = QHBoxLayout()
    for widget in widgets:
        row.addWidget(widget)
    row.addStretch(1)
    return row


def _small_button(text: str, tip: str) -> QPushButton:
    button = QPushButton(text)
    button.setToolTip(tip)
    button.setFixedWidth(32)
    return button


def _shortcut(parent: QWidget, keys: str) -> QShortcut:
    shortcut = QShortcut(QKeySequence(keys), parent)
    shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
    return shortcut
