"""The detail of one approval: what is asked, why, the agent's recent calls, and the decision."""

from __future__ import annotations

import glob
from datetime import timedelta
from html import escape

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QFont, QFontDatabase, QKeyEvent
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QStackedWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from foundry.runtime.approvals import ApprovalContext, ApprovalRecord, GrantRecord, utc_now
from foundry.runtime.grant_scopes import describe_duration, describe_scope, grant_scopes
from foundry.ui.clock import local_time
from foundry.ui.inbox.concerns import ConcernsPanel
from foundry.ui.inbox.model import (
    LEVELS,
    describe_remaining,
    remaining,
    status_colour,
    waited,
)
from foundry.ui.inbox.params import ParamNode
from foundry.ui.theme import quiet, themed_colour

GRANT_DURATIONS = (
    ("15 minutes", timedelta(minutes=15)),
    ("1 hour", timedelta(hours=1)),
    ("8 hours", timedelta(hours=8)),
    ("24 hours", timedelta(hours=24)),
    ("7 days", timedelta(days=7)),
)
ESCALATED_BY = {
    "L0": "The policy sends this call to a person",
    "L1": "The supervisor escalated it",
    "supervisor": "A message supervisor asks for a person's review",
}
EDITOR_HEIGHT = 260
WARNING_STYLE = "background: #ffebee; color: #b71c1c; border: 1px solid #ef9a9a; padding: 6px;"


def _heading(text: str) -> QLabel:
    label = QLabel(text)
    font = label.font()
    font.setBold(True)
    label.setFont(font)
    return label


class ParamsEditor(QPlainTextEdit):
    """The JSON editor of edit-then-approve: Ctrl+Enter approves, Esc cancels. (A text field
    takes these keys before any shortcut sees them, so the field turns them into signals.)"""

    submitted = Signal()
    cancelled = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        enter = event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
        if enter and event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            self.submitted.emit()
            return
        if event.key() == Qt.Key.Key_Escape:
            self.cancelled.emit()
            return
        super().keyPressEvent(event)


class ReasoningField(QLineEdit):
    """The reasoning of a decision; Esc hands the keyboard back to the list."""

    cancelled = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Escape:
            self.cancelled.emit()
            return
        super().keyPressEvent(event)


class ApprovalDetailView(QWidget):
    """Shows one approval; its buttons and fields are connected by the InboxController."""

    open_session = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.record: ApprovalRecord | None = None
        self._tree_height = 0
        self.title = QLabel()
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.facts = QLabel()
        self.facts.setTextFormat(Qt.TextFormat.RichText)
        self.facts.setWordWrap(True)
        self.facts.linkActivated.connect(lambda link: self.open_session.emit(link.split(":", 1)[1]))
        self.countdown = QLabel()
        self.injection = QLabel(
            "⚠ <b>Possible prompt injection.</b> The parameters contain phrases used to steer a "
            "reviewing model (a heuristic: it flags, it does not prove). Read the content "
            "before approving."
        )
        self.injection.setWordWrap(True)
        self.injection.setStyleSheet(WARNING_STYLE)
        self.concerns = ConcernsPanel()
        self.why = QLabel()
        self.why.setWordWrap(True)
        self.why.setTextFormat(Qt.TextFormat.RichText)
        self.verdict = QLabel()
        self.verdict.setWordWrap(True)
        self.verdict.setTextFormat(Qt.TextFormat.RichText)
        self.params = QTreeWidget()
        self.params.setHeaderLabels(["Parameter", "Value", ""])
        self.params.setAlternatingRowColors(True)
        # The values take the width the names leave (cut with …, whole in their tips): a
        # horizontal scroll bar would hide the row of a single parameter.
        self.params.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        header = self.params.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.params.setColumnWidth(2, 120)
        self.show_content = QPushButton("Show content")
        self.show_content.setCheckable(True)
        self.show_content.setToolTip(
            "Show the text inside content parameters (hidden by default: it is what an "
            "injection would hide in)"
        )
        self.editor = ParamsEditor()
        self.editor.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.editor_problem = QLabel()
        self.apply_edit = QPushButton("Approve with these parameters")
        self.apply_edit.setToolTip("Run the call with the edited parameters (Ctrl+Enter)")
        self.cancel_edit = QPushButton("Cancel")
        self.cancel_edit.setToolTip("Back to the parameters as asked (Esc)")
        self.params_stack = QStackedWidget()
        self.recent = QTreeWidget()
        self.recent.setHeaderLabels(["When", "Tool", "Decision", "By"])
        self.recent.setRootIsDecorated(False)
        self.recent.setMinimumHeight(130)
        self.grants = QLabel()
        self.grants.setWordWrap(True)
        self.grants.setTextFormat(Qt.TextFormat.RichText)
        self.outcome = QLabel()
        self.outcome.setWordWrap(True)
        self.outcome.setTextFormat(Qt.TextFormat.RichText)
        self.reasoning = ReasoningField()
        self.reasoning.setPlaceholderText("Why? The agent reads it if you deny (D, then Enter)")
        self.approve = QPushButton("Approve  (A)")
        self.approve.setToolTip("Let the call run as asked (A)")
        self.deny = QPushButton("Deny  (D)")
        self.deny.setToolTip("Refuse it; the reasoning is the tool result the agent reads (D)")
        self.edit = QPushButton("Edit…  (E)")
        self.edit.setToolTip("Edit the parameters as JSON, then approve (E)")
        self.grant_glob = QLineEdit()
        self.grant_glob.setToolTip("Tools the grant covers, a glob such as time.*")
        self.grant_duration = QComboBox()
        for text, duration in GRANT_DURATIONS:
            self.grant_duration.addItem(text, duration)
        self.grant_duration.setCurrentIndex(1)
        self.grant_scope = QComboBox()
        self.grant_scope.setMinimumContentsLength(len("the workspace"))  # never clipped
        self.grant_scope.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.grant_scope.setToolTip(
            "Where the grant reaches: every path a covered call names must lie in this folder.\n"
            "No grant ever reaches outside the agent's workspace, or covers a call whose\n"
            "parameters read like a prompt injection."
        )
        self.make_rule = QPushButton("Make a rule from this  (R)")
        self.make_rule.setToolTip(
            "Open the agent's policy with a rule for calls like this one, and see what it "
            "would change among the recorded calls"
        )
        self.grant = QPushButton("Approve + grant  (G)")
        self.grant.setToolTip(
            "Approve, and let this agent call matching tools without asking for the chosen time (G)"
        )
        self.action_panel = self._action_panel()
        self.placeholder = QLabel()
        quiet(self.placeholder)
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self._tick = QTimer(self)
        self._tick.setInterval(1000)
        self._tick.timeout.connect(self._show_countdown)
        self._lay_out()
        self.show_approval(None)

    # -- layout ---------------------------------------------------------------------------------

    def _params_panel(self) -> QWidget:
        editing = QWidget()
        layout = QVBoxLayout(editing)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.editor, 1)
        layout.addWidget(self.editor_problem)
        buttons = QHBoxLayout()
        buttons.addWidget(self.apply_edit)
        buttons.addWidget(self.cancel_edit)
        buttons.addStretch(1)
        layout.addLayout(buttons)
        self.params_stack.addWidget(self.params)
        self.params_stack.addWidget(editing)
        panel = QWidget()
        column = QVBoxLayout(panel)
        column.setContentsMargins(0, 0, 0, 0)
        header = QHBoxLayout()
        header.addWidget(_heading("Parameters"))
        header.addStretch(1)
        header.addWidget(self.show_content)
        column.addLayout(header)
        column.addWidget(self.params_stack)
        return panel

    def _action_panel(self) -> QFrame:
        panel = QFrame()
        panel.setFrameShape(QFrame.Shape.StyledPanel)
        grid = QGridLayout(panel)
        grid.addWidget(self.reasoning, 0, 0, 1, 4)
        grid.addWidget(self.approve, 1, 0)
        grid.addWidget(self.deny, 1, 1)
        grid.addWidget(self.edit, 1, 2)
        grid.addWidget(self.make_rule, 1, 3)
        grant = QHBoxLayout()  # on two lines: the tools glob gets a whole line to be read
        grant.addWidget(QLabel("Grant"))
        grant.addWidget(self.grant_glob, 1)
        grid.addLayout(grant, 2, 0, 1, 4)
        reach = QHBoxLayout()
        reach.addWidget(QLabel("in"))
        reach.addWidget(self.grant_scope, 1)
        reach.addWidget(QLabel("for"))
        reach.addWidget(self.grant_duration)
        reach.addWidget(self.grant)
        grid.addLayout(reach, 3, 0, 1, 4)
        return panel

    def _lay_out(self) -> None:
        body = QWidget()
        column = QVBoxLayout(body)
        column.addWidget(self.title)
        column.addWidget(self.facts)
        column.addWidget(self.countdown)
        column.addWidget(self.injection)
        column.addWidget(self.concerns)
        column.addWidget(_heading("Why it needs you"))
        column.addWidget(self.why)
        column.addWidget(self.verdict)
        column.addWidget(self.outcome)
        column.addWidget(self._params_panel())
        column.addWidget(_heading("Active grants for this agent"))
        column.addWidget(self.grants)
        column.addWidget(_heading("The agent's recent tool calls"))
        column.addWidget(self.recent, 1)
        scroll = QScrollArea()
        scroll.setWidget(body)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.body = scroll
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.placeholder, 1)
        layout.addWidget(scroll, 1)
        layout.addWidget(self.action_panel)

    # -- what it shows --------------------------------------------------------------------------

    def show_nothing(self, why: str) -> None:
        self.placeholder.setText(why)
        self.show_approval(None)

    def show_approval(self, record: ApprovalRecord | None) -> None:
        """Show `record` (None: nothing selected); its context follows with `show_context`."""
        same = record is not None and self.record is not None and record.id == self.record.id
        self.record = record
        self.placeholder.setVisible(record is None)
        self.body.setVisible(record is not None)
        self.action_panel.setVisible(record is not None and record.status == "pending")
        if record is None:
            self._tick.stop()
            return
        if not same:
            self.end_edit()
            self.reasoning.clear()
            self.show_content.setChecked(False)
            self.show_params_loading()
            # the tool itself, even one named like a glob (`web.*`): a wider grant is typed
            self.grant_glob.setText(glob.escape(record.tool))
            self.grant_glob.setCursorPosition(0)  # a long name shows its start, not its end
            self._propose_scopes(record)
            self.recent.clear()
            self.grants.setText("<i>loading…</i>")
            self.why.setText(_why_before_context(record))
            self.concerns.show_concerns(record.concerns)
        colour = status_colour(record.status)
        status = record.status.replace("_", " ")
        self.title.setText(
            f"<span style='font-size:15pt; font-weight:600'>{escape(record.tool)}</span>"
            f"&nbsp;&nbsp;<span style='color:{colour}; font-weight:600'>{status}</span>"
        )
        self._show_facts(record)
        self.injection.setVisible(record.injection_risk)
        self._show_verdict(record)
        self._show_outcome(record)
        self._show_countdown()
        if record.status == "pending":
            self._tick.start()
        else:
            self._tick.stop()

    def show_params_loading(self) -> None:
        """While the parameters' tree is built (masking secrets in long text takes a while)."""
        loading = QTreeWidgetItem(["", "Loading…", ""])
        loading.setDisabled(True)
        self._show_param_items([loading])

    def show_params(self, nodes: list[ParamNode]) -> None:
        """The parameters' tree, built (secrets masked) off the GUI thread."""
        self._show_param_items([_tree_item(node) for node in nodes])

    def _show_param_items(self, items: list[QTreeWidgetItem]) -> None:
        self.params.clear()
        self.params.addTopLevelItems(items)
        self.params.expandAll()
        self._tree_height = _fit_height(self.params, max_rows=10)
        if not self.editing:
            self.params_stack.setFixedHeight(self._tree_height)

    def _show_verdict(self, record: ApprovalRecord) -> None:
        verdict = record.supervisor_verdict
        self.verdict.setVisible(verdict is not None)
        if verdict is None:
            return
        confidence = float(verdict.get("confidence", 0.0))
        self.verdict.setText(
            f"<b>Supervisor verdict (L1):</b> {escape(str(verdict.get('decision', '?')))} · "
            f"confidence <b>{confidence:.2f}</b> (its reasoning is above)"
        )

    def _show_facts(self, record: ApprovalRecord, session_title: str = "") -> None:
        """Who asks, in which session (named after its client, for the gateway), when, why."""
        title = f" ({escape(session_title)})" if session_title else ""
        session = (
            f" · <a href='session:{record.session_id}'>open the session</a>{title}"
            if record.session_id
            else ""
        )
        self.facts.setText(
            f"Agent <b>{escape(record.agent_id)}</b>{session}<br>"
            f"Asked at {local_time(record.created_at)} · escalated by "
            f"{LEVELS.get(record.level, record.level)}"
            + (
                f" · policy rule <code>{escape(record.policy_rule)}</code>"
                if record.policy_rule
                else ""
            )
        )

    def show_context(self, context: ApprovalContext) -> None:
        """The request reason, recent calls and grants, once loaded off the GUI thread."""
        record = self.record
        if record is None or context.approval_id != record.id:
            return
        self._show_facts(record, context.session_title)
        self.why.setText(escape(self._why(record, context), quote=False))
        self.recent.clear()
        for trace in context.recent_calls:
            by = f"{trace.resolved_by} ({trace.resolved_level})"
            item = QTreeWidgetItem([local_time(trace.created_at), trace.tool, trace.decision, by])
            item.setToolTip(3, trace.reasoning or "")
            self.recent.addTopLevelItem(item)
        if not context.recent_calls:
            none = QTreeWidgetItem(["", "none yet", "", ""])
            none.setDisabled(True)
            self.recent.addTopLevelItem(none)
        for column in range(3):
            self.recent.resizeColumnToContents(column)
        now = utc_now()
        grants = [
            f"<code>{escape(grant.tool_glob)}</code> {escape(describe_scope(grant.path_scope))}"
            f" · {describe_duration(grant.expires_at - now)} left · by {escape(grant.granted_by)}"
            f"{_by_name(grant)}"
            for grant in context.grants
        ]
        self.grants.setText("<br>".join(grants) if grants else "<i>none</i>")

    def _why(self, record: ApprovalRecord, context: ApprovalContext) -> str:
        lead = ESCALATED_BY.get(record.level, "It was escalated")
        if context.request_reason:
            return f"{lead}: {context.request_reason}"
        if record.supervisor_verdict:
            return f"{lead}: {record.supervisor_verdict.get('reasoning', '')}"
        if record.policy_rule:
            return f"{lead}: rule {record.policy_rule} matched."
        return f"{lead}."

    def _show_outcome(self, record: ApprovalRecord) -> None:
        self.outcome.setVisible(record.status != "pending")
        if record.status == "pending":
            return
        colour = status_colour(record.status)
        reasoning = f": {escape(record.reasoning)}" if record.reasoning else ""
        self.outcome.setText(
            f"<span style='color:{colour}; font-weight:600'>"
            f"{record.status.replace('_', ' ').capitalize()}</span> by "
            f"<b>{escape(record.resolved_by or 'unknown')}</b> at {local_time(record.resolved_at)}"
            f" after {describe_duration(waited(record, utc_now()))}{reasoning}"
        )

    def _show_countdown(self) -> None:
        record = self.record
        left = remaining(record, utc_now()) if record is not None else None
        self.countdown.setVisible(left is not None)
        if left is None:
            return
        shown = describe_remaining(left)
        urgent = left < timedelta(minutes=1)
        colour = themed_colour("#c62828" if urgent else "#ef6c00")
        text = (
            "Expired: the policy's timeout outcome applies"
            if shown == "expired"
            else (f"Times out in <b>{shown}</b>")
        )
        self.countdown.setText(f"<span style='color:{colour}'>{text}</span>")

    # -- editing --------------------------------------------------------------------------------

    def begin_edit(self, text: str) -> None:
        self.editor.setPlainText(text)
        self.editor_problem.clear()
        self.params_stack.setCurrentIndex(1)
        self.params_stack.setMaximumHeight(EDITOR_HEIGHT)
        self.params_stack.setMinimumHeight(EDITOR_HEIGHT)
        self.editor.setFocus()

    def end_edit(self) -> None:
        self.params_stack.setCurrentIndex(0)
        self.params_stack.setFixedHeight(self._tree_height)
        self.editor_problem.clear()

    @property
    def editing(self) -> bool:
        return self.params_stack.currentIndex() == 1

    def show_edit_problem(self, problem: str | None) -> None:
        colour, said = ("#2e7d32", "Valid JSON object") if problem is None else ("#c62828", problem)
        self.editor_problem.setText(
            f"<span style='color:{themed_colour(colour)}'>{escape(said)}</span>"
        )
        self.apply_edit.setEnabled(problem is None)

    def _propose_scopes(self, record: ApprovalRecord) -> None:
        """The scopes for a grant from this approval, the proposed one selected."""
        self.grant_scope.clear()
        for scope in grant_scopes(record.params):
            self.grant_scope.addItem(scope.label, scope.path_scope)
        self.grant_scope.setCurrentIndex(0)

    def grant_choice(self) -> tuple[str, timedelta, str | None]:
        """The tools, the duration and the folder (None: none) chosen for a grant."""
        duration = self.grant_duration.currentData()
        assert isinstance(duration, timedelta)
        scope = self.grant_scope.currentData()
        assert scope is None or isinstance(scope, str)
        return self.grant_glob.text().strip(), duration, scope

    def set_busy(self, busy: bool) -> None:
        for button in (self.approve, self.deny, self.edit, self.grant, self.apply_edit):
            button.setEnabled(not busy)


def _why_before_context(record: ApprovalRecord) -> str:
    lead = ESCALATED_BY.get(record.level, "It was escalated")
    return f"{lead}…"


def _fit_height(tree: QTreeWidget, max_rows: int) -> int:
    """As tall as its rows (up to `max_rows`; it scrolls beyond), so short lists leave room."""
    rows, item = 0, tree.topLevelItem(0)
    while item is not None and rows < max_rows:
        rows += 1
        item = tree.itemBelow(item)
    row_height = tree.fontMetrics().height() + 6
    frame = tree.header().sizeHint().height() + 2 * tree.frameWidth() + 4
    height = frame + max(rows, 1) * row_height
    tree.setFixedHeight(height)
    return height


def _tree_item(node: ParamNode) -> QTreeWidgetItem:
    value = node.value if len(node.value) <= 200 else node.value[:200] + "…"
    item = QTreeWidgetItem([node.key, value.replace("\n", " ⏎ "), node.note])
    item.setToolTip(1, node.value[:4000])
    item.setToolTip(2, node.note)
    if node.hidden:
        font = QFont(item.font(1))
        font.setItalic(True)
        item.setFont(1, font)
    item.addChildren([_tree_item(child) for child in node.children])
    return item


def _by_name(grant: GrantRecord) -> str:
    """What a grant bound to no agent file (the API's, or one from before grants were bound)
    is said to cover: every agent its glob names, wherever its file is."""
    if grant.agent_path is not None:
        return ""
    return f" · for any agent named <code>{escape(grant.agent_glob)}</code>"
