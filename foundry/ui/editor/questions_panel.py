"""The Policy page's "Questions asked" tab: how a person answered what each rule asked, and the
rules that would have settled the needless questions, each to add to the policy unsaved.

The widgets and their read-only models only; QuestionsBinding fills them off the GUI thread.
"""

from __future__ import annotations

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from foundry.supervision.needless import NeedlessReport, ProposedRule, QuestionCounts
from foundry.supervision.policy import describe_condition

Index = QModelIndex | QPersistentModelIndex
COUNT_COLUMNS = ("Rule", "Tool", "Asked", "Unchanged", "Denied", "Edited", "Median wait")
PROPOSAL_COLUMNS = ("Rule to add", "Above", "Settles", "Made from")


def wait_text(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds < 60:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min"


class QuestionsModel(QAbstractTableModel):
    """The questions of one agent by rule and tool, the most asked first."""

    def __init__(self) -> None:
        super().__init__()
        self.counts: list[QuestionCounts] = []

    def show_counts(self, counts: list[QuestionCounts]) -> None:
        self.beginResetModel()
        self.counts = list(counts)
        self.endResetModel()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.counts)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return len(COUNT_COLUMNS)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid() or role not in (
            Qt.ItemDataRole.DisplayRole,
            Qt.ItemDataRole.TextAlignmentRole,
        ):
            return None
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return (
                None
                if index.column() < 2
                else Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
            )
        count = self.counts[index.row()]
        values = (
            count.rule,
            count.tool,
            count.asked,
            count.unchanged,
            count.denied,
            count.edited,
            wait_text(count.median_wait_s),
        )
        return str(values[index.column()])

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> object:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COUNT_COLUMNS[section]
        return None


class ProposalsModel(QAbstractTableModel):
    """The rules proposed, each with the rule it goes above and the questions it settles."""

    def __init__(self) -> None:
        super().__init__()
        self.proposals: list[ProposedRule] = []

    def show_proposals(self, proposals: list[ProposedRule]) -> None:
        self.beginResetModel()
        self.proposals = list(proposals)
        self.endResetModel()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.proposals)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return len(PROPOSAL_COLUMNS)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid():
            return None
        proposal = self.proposals[index.row()]
        if role == Qt.ItemDataRole.ToolTipRole:
            return describe_proposal(proposal)
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        values = (
            proposal.rule.name,
            proposal.before,
            f"{proposal.settles} questions",
            f"{proposal.approvals} approvals",
        )
        return values[index.column()]

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> object:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return PROPOSAL_COLUMNS[section]
        return None


def describe_proposal(proposal: ProposedRule) -> str:
    """What a proposed rule lets through, in words a person checks before adding it."""
    rule = proposal.rule
    conditions = rule.when.all if rule.when is not None else []
    words = [describe_condition(c).replace("* ", "the call ", 1) for c in conditions]
    some = rule.when.any if rule.when is not None else []
    if some:
        words.append(f"one of the {len(some)} other conditions of {proposal.before} holds")
    return (
        f"Allows {rule.tool} for {rule.agent} when {'; '.join(words) or 'it is called'}. It "
        f"would have settled {proposal.settles} of the questions {proposal.before} asked, and "
        "decides no call that was denied, edited or flagged differently."
    )


def _table(model: QAbstractTableModel, tip: str) -> QTableView:
    view = QTableView()
    view.setModel(model)
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    view.verticalHeader().hide()
    view.setAlternatingRowColors(True)
    view.setWordWrap(False)
    view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    view.horizontalHeader().setStretchLastSection(True)
    view.setToolTip(tip)
    return view


class QuestionsPanel(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.summary = QLabel("Counting the questions this agent's calls asked…")
        self.summary.setWordWrap(True)
        self.counts_model = QuestionsModel()
        self.counts = _table(self.counts_model, "How a person answered each rule's questions")
        self.proposals_model = ProposalsModel()
        self.proposals = _table(
            self.proposals_model,
            "Rules that would have settled questions approved as asked again and again",
        )
        self.counts.setMinimumHeight(80)
        self.proposals.setMinimumHeight(60)
        self.detail = QLabel()
        self.detail.setWordWrap(True)
        self.detail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.add_rule = QPushButton("Add this rule")
        self.add_rule.setToolTip(
            "Add the selected rule above the rule that asked, unsaved: review it in the rules "
            "table and the try panel, then save (Ctrl+S) or undo (Ctrl+Z)"
        )
        self.add_rule.setEnabled(False)
        self.count_again = QPushButton("Count again")
        self.count_again.setToolTip("Read the questions and answers in the store again")
        self.summary.setToolTip(
            "A question is needless when a person approved it as asked, nothing flagged. A rule "
            "is proposed only from 3 or more such approvals of one tool, asked by one rule, "
            "never refused; and only if it changes no denied, edited or flagged call."
        )
        buttons = QHBoxLayout()
        buttons.addWidget(self.add_rule)
        buttons.addWidget(self.count_again)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.summary)  # what to act on first, then the counts behind it
        layout.addWidget(self.proposals, 1)
        layout.addLayout(buttons)
        layout.addWidget(self.detail)
        layout.addWidget(self.counts, 2)
        self.proposals.selectionModel().selectionChanged.connect(lambda *_: self._selected())

    def show_report(self, report: NeedlessReport) -> None:
        self.summary.setText(report.summary())
        self.counts_model.show_counts(report.counts)
        self.proposals_model.show_proposals(report.proposals)
        if report.proposals:
            self.proposals.selectRow(0)
        self._selected()

    def show_problem(self, text: str) -> None:
        self.summary.setText(text)
        self.counts_model.show_counts([])
        self.proposals_model.show_proposals([])
        self._selected()

    def selected(self) -> ProposedRule | None:
        rows = self.proposals.selectionModel().selectedRows()
        proposals = self.proposals_model.proposals
        return proposals[rows[0].row()] if rows and rows[0].row() < len(proposals) else None

    def _selected(self) -> None:
        proposal = self.selected()
        self.add_rule.setEnabled(proposal is not None)
        self.detail.setText("" if proposal is None else describe_proposal(proposal))
