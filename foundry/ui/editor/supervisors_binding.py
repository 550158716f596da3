"""SupervisorsBinding: the supervisors JSON, checked as you type, and opening supervisor agents."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QModelIndex, QObject, QTimer
from PySide6.QtGui import QColor, QTextCursor, QTextFormat
from PySide6.QtWidgets import QTextEdit

from foundry.agent.models import Agent
from foundry.agent.problems import AgentProblem
from foundry.ui.editor.sections import SupervisorsSection
from foundry.ui.editor.supervisors_json import entry_spans, parse_supervisors, supervisors_text

if TYPE_CHECKING:
    from foundry.ui.editor.controller import EditorController

CHECK_DELAY_MS = 300
PROBLEM_LINE = QColor("#ffebee")


class SupervisorsBinding(QObject):
    def __init__(self, section: SupervisorsSection, editor: EditorController) -> None:
        super().__init__(section)
        self.section = section
        self.editor = editor
        self.problems: list[AgentProblem] = []
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(CHECK_DELAY_MS)
        self.timer.timeout.connect(self.check)
        section.json.textChanged.connect(self._typed)
        section.open_agent.clicked.connect(self.open_agent)
        section.open_shortcut.activated.connect(self.open_agent)
        section.problems.clicked.connect(self._go_to_problem)

    def show(self, agent: Agent) -> None:
        """Show the agent's supervisors; text that does not parse yet is replaced."""
        self.timer.stop()
        self.section.json.setPlainText(supervisors_text(list(agent.supervisors)))
        self._show_problems([])

    def _typed(self) -> None:
        if not self.editor.refreshing:
            self.section.status.setText("Checking…")
            self.timer.start()

    def check(self) -> None:
        """Validate the text; when valid, it becomes the agent's supervisors (one undo step)."""
        self.timer.stop()
        text = self.section.json.toPlainText()
        entries, problems = parse_supervisors(text, self.editor.file_of(("supervisors",)))
        self._show_problems(problems)
        agent = self.editor.working
        if entries is None or agent is None:
            return
        if supervisors_text(entries) != supervisors_text(list(agent.supervisors)):
            self.editor.edit(("supervisors",), lambda agent: setattr(agent, "supervisors", entries))

    def _show_problems(self, problems: list[AgentProblem]) -> None:
        self.problems = problems
        self.section.problems_model.setStringList([_short(problem) for problem in problems])
        self.section.problems.setVisible(bool(problems))
        self.section.status.setText(
            f"{len(problems)} problem(s) in the supervisors" if problems else "Valid supervisors."
        )
        self._highlight({problem.line for problem in problems if problem.line is not None})
        self.editor.problems_changed()

    def _highlight(self, lines: set[int]) -> None:
        selections = []
        document = self.section.json.document()
        for line in sorted(lines):
            block = document.findBlockByLineNumber(line - 1)
            if not block.isValid():
                continue
            selection = QTextEdit.ExtraSelection()
            selection.format.setBackground(PROBLEM_LINE)
            selection.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
            selection.cursor = QTextCursor(block)
            selections.append(selection)
        self.section.json.setExtraSelections(selections)

    def _go_to_problem(self, index: QModelIndex) -> None:
        line = self.problems[index.row()].line if index.row() < len(self.problems) else None
        if line is None:
            return
        block = self.section.json.document().findBlockByLineNumber(line - 1)
        self.section.json.setTextCursor(QTextCursor(block))
        self.section.json.setFocus()

    def open_agent(self) -> None:
        """Ask to open the agent named by the entry under the cursor."""
        target = self._entry_agent_path()
        if target is None:
            self.section.status.setText("Put the cursor in an entry that has an agentPath.")
            return
        base_dir = self.editor.base_dir
        if base_dir is not None:
            self.editor.view.open_agent_requested.emit((base_dir / target).resolve())

    def _entry_agent_path(self) -> str | None:
        text = self.section.json.toPlainText()
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            return None
        position = self.section.json.textCursor().position()
        spans = entry_spans(text)
        index = max((i for i, (start, _) in enumerate(spans) if start <= position), default=0)
        entry = data[index] if isinstance(data, list) and index < len(data) else None
        return _agent_path_of(entry)


def _agent_path_of(entry: Any) -> str | None:
    config = entry.get("config") if isinstance(entry, dict) else None
    if not isinstance(config, dict):
        return None
    for key in ("agentPath", "supervisorAgentPath"):
        value = config.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return None


def _short(problem: AgentProblem) -> str:
    where = f"line {problem.line}" if problem.line is not None else "supervisors"
    if problem.column is not None:
        where += f", column {problem.column}"
    field = f"{problem.field}: " if problem.field and problem.field != "supervisors" else ""
    return f"{where}: {field}{problem.message}"
