"""QuestionsBinding: the Policy page's "Questions asked" tab, counted off the GUI thread from the
store (the engine's, or one opened for the count), and its proposals added to the working
policy unsaved, as "Make a rule from this" adds one."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject

from foundry.agent.problems import AgentError
from foundry.runtime.questions import QuestionsAsked
from foundry.supervision.needless import NeedlessReport, ProposedRule

if TYPE_CHECKING:
    from foundry.ui.editor.controller import EditorController
    from foundry.ui.editor.policy_binding import PolicyBinding
    from foundry.ui.editor.policy_section import PolicySection

ADDED = (
    "Rule '{name}' was added above the rule that asked those questions, unsaved. Review it "
    "(the recorded calls are replayed with it below), then save (Ctrl+S); Undo (Ctrl+Z) takes "
    "it back."
)


class QuestionsBinding(QObject):
    def __init__(
        self, section: PolicySection, editor: EditorController, policy: PolicyBinding
    ) -> None:
        super().__init__(section)
        self.panel = section.questions
        self.editor = editor
        self.policy = policy
        self.report: NeedlessReport | None = None
        self._counts = 0  # the counts started: only the newest one shows
        section.details.currentChanged.connect(self._tab_changed)
        self._tabs, self._tab = section.details, section.questions_tab
        self.panel.count_again.clicked.connect(self.count)
        self.panel.add_rule.clicked.connect(self.add_selected)

    def _tab_changed(self, index: int) -> None:
        if self._tabs.widget(index) is self._tab:
            self.count()

    def count(self) -> None:
        self.editor.spawn(self.load())

    async def load(self) -> None:
        """Count the agent's questions (as saved) and show them."""
        document = self.editor.document
        if document is None or not document.path.exists():
            self.panel.show_problem("Save the agent first: its questions are counted by its file.")
            return
        self._counts += 1
        attempt = self._counts
        try:
            report = await asyncio.to_thread(self._report, document.path)
        except AgentError as error:
            self.panel.show_problem(f"The saved agent cannot be read: {error.problems[0]}")
            return
        if attempt == self._counts:
            self.report = report
            self.panel.show_report(report)

    def _report(self, path: Path) -> NeedlessReport:
        bridge = self.editor.bridge
        if bridge is None:
            return QuestionsAsked.report_of_own_store(path)
        return bridge.engine.questions.report(path)

    def show(self, report: NeedlessReport) -> None:
        """A report counted elsewhere (the inbox's), shown on this tab."""
        self._counts += 1
        self.report = report
        self.panel.show_report(report)
        self._tabs.blockSignals(True)  # shown as counted: not counted again for the tab
        self._tabs.setCurrentWidget(self._tab)
        self._tabs.blockSignals(False)

    def add_selected(self) -> None:
        proposal = self.panel.selected()
        if proposal is not None:
            self.add(proposal)

    def add(self, proposal: ProposedRule) -> str | None:
        """Add the proposal to the working policy, unsaved: the name it got."""
        return self.policy.offer_rule(proposal.rule, proposal.before, ADDED)
