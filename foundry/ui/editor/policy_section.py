"""The Policy page: the policy in a plain sentence and its rules as a table that can be filtered
(PolicyOverview), the selected rule's conditions, what happens when the rules are not enough,
the questions its rules asked (QuestionsPanel), and the panel to try calls (TryPanel).

The widgets only; PolicyBinding connects them to the working agent.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSplitter,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from foundry.ui.editor.policy_models import (
    ACTIONS,
    GROUPS,
    OPERATORS,
    ConditionsModel,
    RateLimitsModel,
    RulesModel,
)
from foundry.ui.editor.policy_overview import PolicyOverview
from foundry.ui.editor.questions_panel import QuestionsPanel
from foundry.ui.editor.sections import column, heading, hint
from foundry.ui.editor.try_panel import TryPanel

Index = QModelIndex | QPersistentModelIndex


class ChoiceDelegate(QStyledItemDelegate):
    """A cell edited by picking one of `choices`."""

    def __init__(self, choices: tuple[str, ...], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.choices = choices

    def createEditor(self, parent: QWidget, option: QStyleOptionViewItem, index: Index) -> QWidget:
        combo = QComboBox(parent)
        combo.addItems(self.choices)
        return combo

    def setEditorData(self, editor: QWidget, index: Index) -> None:
        assert isinstance(editor, QComboBox)
        editor.setCurrentText(str(index.data(Qt.ItemDataRole.EditRole)))

    def setModelData(self, editor: QWidget, model: object, index: Index) -> None:
        assert isinstance(editor, QComboBox)
        index.model().setData(index, editor.currentText(), Qt.ItemDataRole.EditRole)


def table(model: object, tip: str) -> QTableView:
    view = QTableView()
    view.setModel(model)  # type: ignore[arg-type]
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    view.setEditTriggers(
        QAbstractItemView.EditTrigger.DoubleClicked
        | QAbstractItemView.EditTrigger.EditKeyPressed
        | QAbstractItemView.EditTrigger.AnyKeyPressed
    )
    view.verticalHeader().hide()
    view.setAlternatingRowColors(True)
    view.setWordWrap(False)
    view.setToolTip(tip)
    return view


def button(text: str, tip: str) -> QPushButton:
    widget = QPushButton(text)
    widget.setToolTip(tip)
    return widget


def buttons_row(*widgets: QWidget, stretch_first: bool = False) -> QHBoxLayout:
    row = QHBoxLayout()
    if stretch_first:
        row.addStretch(1)
    for widget in widgets:
        row.addWidget(widget)
    if not stretch_first:
        row.addStretch(1)
    return row


class PolicySection(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.entry = QLabel()
        self.entry.setStyleSheet("color: #616161;")
        self.missing = hint(
            "This agent has no policy: its tool calls follow its Tool approval setting. Add "
            "the careful default: routine work runs, plain harm is refused, a person decides "
            "the rest."
        )
        self.add_policy = button("Add the careful default policy", "Add a policy supervisor")
        self._rules_part()
        self.overview = PolicyOverview(self.rules, self.rules_model, self)
        self._conditions_part()
        self._limits_part()
        self.try_panel = TryPanel()
        self.questions = QuestionsPanel()
        self._lay_out()

    # -- parts ----------------------------------------------------------------------------------

    def _rules_part(self) -> None:
        self.rules_model = RulesModel(lambda *_: None)
        self.rules = table(
            self.rules_model,
            "First match wins: the first rule whose agent, tool "
            "and conditions match decides; a call no rule matches is denied",
        )
        self.rules.setItemDelegateForColumn(5, ChoiceDelegate(ACTIONS, self.rules))
        header = self.rules.horizontalHeader()
        for section, mode in enumerate(
            (
                QHeaderView.ResizeMode.ResizeToContents,
                QHeaderView.ResizeMode.Interactive,
                QHeaderView.ResizeMode.ResizeToContents,
                QHeaderView.ResizeMode.Interactive,
                QHeaderView.ResizeMode.Stretch,
                QHeaderView.ResizeMode.ResizeToContents,
                QHeaderView.ResizeMode.ResizeToContents,
            )
        ):
            header.setSectionResizeMode(section, mode)
        header.resizeSection(1, 300)
        header.resizeSection(3, 170)
        self.new_rule = button("New rule", "Add a rule above the selected one (Ctrl+Shift+R)")
        self.new_rule_shortcut = _shortcut(self, "Ctrl+Shift+R")
        self.delete_rule = button("Delete", "Delete the selected rule (undo with Ctrl+Z)")
        self.rule_up = button("↑", "Earlier: decides before the rules below it (Alt+Up)")
        self.rule_down = button("↓", "Later (Alt+Down)")
        for small in (self.rule_up, self.rule_down):
            small.setFixedWidth(32)
        self.up_shortcut = _shortcut(self.rules, "Alt+Up")
        self.down_shortcut = _shortcut(self.rules, "Alt+Down")
        self.reset = button(
            "Reset to the careful default",
            "Replace the rules and settings with Foundry's default policy (undo with Ctrl+Z)",
        )

    def _conditions_part(self) -> None:
        self.conditions_model = ConditionsModel(lambda *_: None)
        self.conditions = table(
            self.conditions_model,
            "All conditions of the 'all' group must hold, and one of the 'any' group if it has any",
        )
        self.conditions.setItemDelegateForColumn(0, ChoiceDelegate(GROUPS, self.conditions))
        self.conditions.setItemDelegateForColumn(2, ChoiceDelegate(OPERATORS, self.conditions))
        self.conditions.horizontalHeader().setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        self.add_condition = button("Add condition", "A condition on a parameter of the call")
        self.remove_condition = button("Remove condition", "Remove the selected condition")
        self.conditions_hint = hint(
            "Operators: == != < <= > >= in contains starts_with matches (a regular expression) "
            "larger_than (bytes), within (a path inside a folder: '.' is the workspace; "
            "symlinks and '..' are resolved; '*' as the parameter: every path of the call); "
            "judged by real parsers: read_only_sql, several_sql_statements (a dialect or true), "
            "read_only_command, command_names (a regular expression), reaches (public or "
            "inside), carries_data, holds_secret (true); gives_only (a list of parameter names; "
            "'*': the call's). Values are JSON or plain text."
        )

    def _limits_part(self) -> None:
        self.loop_detection = QCheckBox("Stop a call repeated in a loop")
        self.approval_timeout = QDoubleSpinBox()
        self.approval_timeout.setRange(1, 86400)
        self.approval_timeout.setDecimals(0)
        self.approval_timeout.setSuffix(" s")
        self.approval_timeout.setToolTip("How long a person has to decide an escalated call")
        self.on_timeout = QComboBox()
        self.on_timeout.addItem("deny the call", "deny")
        self.on_timeout.addItem("allow the call", "allow")
        self.supervisor_path = QLineEdit()
        self.supervisor_path.setPlaceholderText("../reviewer (empty: escalate to a person)")
        self.supervisor_path.setToolTip(
            "The L1 supervisor agent for rules whose action is "
            "'supervisor', relative to this agent's folder"
        )
        self.threshold = QDoubleSpinBox()
        self.threshold.setRange(0, 1)
        self.threshold.setSingleStep(0.05)
        self.threshold.setToolTip("Below this confidence the L1 verdict goes to a person")
        self.limits_model = RateLimitsModel(lambda *_: None)
        self.limits = table(self.limits_model, "At most this many calls of a tool in a window")
        self.limits.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.limits.setMaximumHeight(110)
        self.add_limit = button("Add limit", "Limit how often a tool may be called")
        self.remove_limit = button("Remove limit", "Remove the selected rate limit")

    # -- layout ---------------------------------------------------------------------------------

    def _lay_out(self) -> None:
        rules_bar = buttons_row(self.new_rule, self.delete_rule, self.rule_up, self.rule_down)
        rules_bar.addWidget(self.reset)
        rules = column(self.overview, rules_bar, self.rules, stretch=self.rules)
        conditions = column(
            self.conditions,
            buttons_row(self.add_condition, self.remove_condition),
            self.conditions_hint,
            stretch=self.conditions,
        )
        self.questions_tab = _scrolled(self.questions)  # scrolls rather than overlaps
        self.details = QTabWidget()
        for page, name, tip in (
            (conditions, "Conditions", "The conditions of the rule selected above"),
            (self._limits_form(), "Limits and escalation", "Loops, rate limits, timeouts, L1"),
            (self.questions_tab, "Questions asked", "How a person answered what rules asked"),
        ):
            self.details.setTabToolTip(self.details.addTab(page, name), tip)
        lower = QSplitter(Qt.Orientation.Horizontal)
        lower.addWidget(self.details)
        lower.addWidget(_scrolled(self.try_panel))  # never squeezes the rules table
        lower.setChildrenCollapsible(False)
        lower.setSizes([560, 520])
        self.body = QSplitter(Qt.Orientation.Vertical)
        self.body.addWidget(rules)
        self.body.addWidget(lower)
        self.body.setChildrenCollapsible(False)
        self.body.setSizes([330, 330])
        title = QHBoxLayout()
        title.addWidget(heading("Policy"))
        title.addWidget(self.entry, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(title)
        layout.addWidget(self.missing)
        layout.addLayout(buttons_row(self.add_policy))
        layout.addWidget(self.body, 1)

    def _limits_form(self) -> QWidget:
        form_widget = QWidget()
        form = QFormLayout(form_widget)
        form.addRow("Loops:", self.loop_detection)
        form.addRow("A person decides within:", self.approval_timeout)
        form.addRow("Then:", self.on_timeout)
        form.addRow("L1 supervisor:", self.supervisor_path)
        form.addRow("L1 confidence needed:", self.threshold)
        form.addRow("Rate limits:", self.limits)
        form.addRow("", buttons_row(self.add_limit, self.remove_limit))
        return form_widget

    def show_policy(self, present: bool, entry: str = "") -> None:
        self.body.setVisible(present)
        self.missing.setVisible(not present)
        self.add_policy.setVisible(not present)
        self.entry.setText(entry)


def _scrolled(widget: QWidget) -> QScrollArea:
    area = QScrollArea()
    area.setWidget(widget)
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    return area


def _shortcut(parent: QWidget, keys: str) -> QShortcut:
    shortcut = QShortcut(QKeySequence(keys), parent)
    shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
    return shortcut
