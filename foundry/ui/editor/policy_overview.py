"""The head of the Policy page: the policy in one plain sentence, and a filter for its rules.

The sentence is derived from the rules (supervision/policy_summary.py) on a worker thread, the
newest edit winning; the filter hides the rules table's rows that do not mention what is typed
(rows are hidden, not re-ordered, so the table's rows stay the policy's rules by number).
"""

from __future__ import annotations

import asyncio
import html
import logging
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QTableView, QVBoxLayout, QWidget

from foundry.agent.models import PolicyConfig
from foundry.supervision.policy_summary import SummaryClause, plain_summary, summarise_policy
from foundry.ui.editor.policy_models import RulesModel
from foundry.ui.theme import quiet

log = logging.getLogger(__name__)


def rule_matches(row: dict[str, Any], words: list[str]) -> bool:
    """Whether every word typed is in one of the rule's cells (any case)."""
    text = " ".join(str(value) for value in row.values()).lower()
    return all(word in text for word in words)


def clauses_tip(clauses: list[SummaryClause]) -> str:
    """Which rule decides each part of the sentence."""
    lines = [
        f"{clause.subject}: {clause.rule or 'no rule matches, denied by default'}"
        for clause in clauses
    ]
    return "Decided by these rules (a typical call of each kind, tried):\n" + "\n".join(lines)


class PolicyOverview(QWidget):
    """`show_config(config)` after every change of the policy; `filter` narrows `table`."""

    def __init__(self, table: QTableView, model: RulesModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.table = table
        self.model = model
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Filter the rules: a name, tool or word (Ctrl+F)")
        self.filter.setClearButtonEnabled(True)
        self.filter.setToolTip("Shows only the rules that mention every word typed (Ctrl+F)")
        self.filter.textChanged.connect(lambda _: self.apply_filter())
        self.shown = QLabel()
        quiet(self.shown)
        self.shown.setMinimumWidth(self.shown.fontMetrics().horizontalAdvance("9999 of 9999 rules"))
        find = QShortcut(QKeySequence.StandardKey.Find, self.parentWidget() or self)
        find.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        find.activated.connect(self.filter.setFocus)
        model.modelReset.connect(self.apply_filter)
        self._summarising: asyncio.Task[None] | None = None
        self.clauses: list[SummaryClause] = []
        self._lay_out()

    def _lay_out(self) -> None:
        search = QHBoxLayout()
        search.addWidget(self.filter, 1)
        search.addWidget(self.shown)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.summary)
        layout.addLayout(search)

    def show_config(self, config: PolicyConfig) -> None:
        """Say what `config` does, once derived off the GUI thread (an older derivation still
        running is dropped)."""
        if self._summarising is not None:
            self._summarising.cancel()
        self._summarising = asyncio.ensure_future(self._summarise(config.model_copy(deep=True)))

    async def _summarise(self, config: PolicyConfig) -> None:
        try:
            clauses = await asyncio.to_thread(summarise_policy, config)
        except Exception:  # a rule the engine cannot compile: the Problems panel says which
            log.warning("could not summarise the policy", exc_info=True)
            self.summary.setText(
                "<i>This policy cannot be summarised until its rules are valid.</i>"
            )
            return
        self.clauses = clauses
        self.summary.setText(f"<b>In short:</b> {html.escape(plain_summary(clauses))}")
        self.summary.setToolTip(clauses_tip(clauses))

    def apply_filter(self) -> None:
        words = self.filter.text().lower().split()
        rows = self.model.rows
        for number, row in enumerate(rows):
            self.table.setRowHidden(number, bool(words) and not rule_matches(row, words))
        matching = sum(1 for row in rows if not words or rule_matches(row, words))
        self.shown.setText(f"{matching} of {len(rows)} rules" if words else f"{len(rows)} rules")

    def close_tasks(self) -> None:
        if self._summarising is not None:
            self._summarising.cancel()
