"""The window's editor tabs: an agent opened to edit, created, cloned, or given a rule."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QWidget

from foundry.ui.settings import default_model
from foundry.ui.window.agent_dock import agent_name
from foundry.ui.window.tabs import short_title

if TYPE_CHECKING:
    from foundry.agent.document import AgentDocument
    from foundry.runtime.approvals import ApprovalRecord
    from foundry.supervision.needless import NeedlessReport
    from foundry.ui.editor import AgentEditor
    from foundry.ui.window.main_window import MainWindow


class EditorTabs:
    """One editor tab per agent file in `window`'s tabs."""

    def __init__(self, window: MainWindow) -> None:
        self.window = window

    def edit_agent(self) -> None:
        """Open the current agent in an editor tab (or show the one already open); an agent
        shown with its problems opens in the editor to be fixed."""
        window = self.window
        if window.agent is None and window.broken_agent is not None:
            window.spawn(self.edit_agent_at(window.broken_agent))
            return
        if window.agent is None:
            window.statusBar().showMessage("Open an agent first (Ctrl+O).", 4000)
            return
        self.open_editor(window.agent)

    async def edit_agent_at(self, path: Path) -> None:
        """Open the agent at `path` in an editor tab (a supervisor's agent), without a chat."""
        from foundry.agent import AgentError, read_agent

        try:
            document = await asyncio.to_thread(read_agent, path)
        except AgentError as error:
            self.window.statusBar().showMessage(f"Cannot open {path}: {error.problems[0]}")
            return
        self.open_editor(document)

    async def make_rule(self, record: ApprovalRecord) -> None:
        """The policy of the approval's agent, open with a rule made from its call."""
        from foundry.agent import AgentError, read_agent

        status = self.window.statusBar().showMessage
        approvals = self.window.bridge.engine.approvals
        agent_file = await asyncio.to_thread(approvals.agent_file, record)
        if agent_file is None:
            status("This approval names no stored session, so no agent.", 6000)
            return
        try:
            document = await asyncio.to_thread(read_agent, agent_file)
        except AgentError as error:
            status(f"Cannot open its agent: {error.problems[0]}", 8000)
            return
        editor = self.open_editor(document)
        await editor.controller.policy.propose_rule(
            record.agent_id, record.tool, dict(record.params), record.policy_rule
        )

    async def review_proposals(self, agent_file: Path, report: NeedlessReport) -> None:
        """The agent's policy, open with the rules that would have settled its needless
        questions added unsaved, and its questions shown."""
        from foundry.agent import AgentError, read_agent

        try:
            document = await asyncio.to_thread(read_agent, agent_file)
        except AgentError as error:
            self.window.statusBar().showMessage(f"Cannot open its agent: {error.problems[0]}", 8000)
            return
        questions = self.open_editor(document).controller.policy.questions
        for proposal in report.proposals:
            questions.add(proposal)
        questions.show(report)

    def open_editor(self, document: AgentDocument) -> AgentEditor:
        """An editor tab for `document`, or the one already showing it."""
        from foundry.ui.editor import AgentEditor

        window, tabs = self.window, self.window.tabs
        for index in range(tabs.count()):
            widget = tabs.widget(index)
            shown = widget.controller.document if isinstance(widget, AgentEditor) else None
            if isinstance(widget, AgentEditor) and shown and shown.path == document.path:
                tabs.setCurrentIndex(index)
                return widget
        editor = AgentEditor(bridge=window.bridge)
        editor.load(document)
        index = tabs.addTab(editor, "")
        self.retitle()
        editor.title_changed.connect(lambda _title: self.retitle())
        editor.open_agent_requested.connect(lambda path: window.spawn(self.edit_agent_at(path)))
        editor.saved.connect(window.chats.repair.saved)  # a broken agent repaired is usable
        editor.controller.agent_saved.connect(window.follow_saved_agent)  # panels follow it
        tabs.setCurrentIndex(index)
        return editor

    def retitle(self) -> None:
        """Every editor's tab, told apart from the chats of its agent (named after it too) and,
        by its folder, from another open agent of the same name."""
        from foundry.ui.editor import AgentEditor

        tabs = self.window.tabs
        editors = [
            (index, widget)
            for index in range(tabs.count())
            if isinstance(widget := tabs.widget(index), AgentEditor)
        ]
        names = [widget.title.removesuffix(" *") for _, widget in editors]
        for (index, widget), name in zip(editors, names, strict=True):
            document = widget.controller.document
            ending = " *" if widget.title.endswith(" *") else ""
            if document is not None and names.count(name) > 1:
                ending = f" ({document.path.parent.name or document.path.parent}){ending}"
            tabs.setTabText(index, short_title(f"Edit: {name}", ending))
            label = f"Edit: {name}{ending}"
            tabs.setTabToolTip(index, label if document is None else f"{label}\n{document.path}")

    def create_agent(self) -> None:
        from foundry.ui.editor import CreateAgentDialog

        dialog = CreateAgentDialog(parent=self.window, folder=Path.home(), model=default_model())
        dialog.created.connect(self.agent_created)
        dialog.open()

    def agent_created(self, document: AgentDocument) -> AgentEditor:
        """A new agent becomes the current one and opens in its editor on its first page, its
        name ready to change (the policy is a page further)."""
        window = self.window
        if document.agent is not None:
            window.show_agent(document)
            window.spawn(window.recent.remember(document.path, agent_name(document)))
        editor = self.open_editor(document)
        editor.show_section("Agent")
        editor.metadata.name.setFocus()
        editor.metadata.name.selectAll()
        return editor

    def clone_agent(self) -> None:
        from foundry.ui.editor import CloneAgentDialog

        window = self.window
        if window.agent is None:
            window.statusBar().showMessage("Open an agent first (Ctrl+O).", 4000)
            return
        dialog = CloneAgentDialog(window.agent, parent=window)
        dialog.created.connect(lambda document: window.spawn(window.open_agent(document.path)))
        dialog.open()

    @staticmethod
    def release(view: QWidget | None) -> None:
        """Stop a closed editor's tool servers."""
        from foundry.ui.editor import AgentEditor

        if isinstance(view, AgentEditor):
            view.controller.close()
