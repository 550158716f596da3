"""RawBinding: the Files page shows the agent's files as on disk, with their problems' lines
marked, and saves the text typed there with raw_files' checks; the form then follows the file.

An agent the form cannot show opens here, on the first problem's line; files broken on disk
while the form shows the agent as last read are shown here too. While the form holds edits not
saved, the text is read-only: the two ways of editing never overwrite each other.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject

from foundry.agent.document import AgentDocument, AgentFormat, read_agent
from foundry.agent.problems import AgentError, AgentProblem
from foundry.agent.raw_files import (
    agent_files,
    editable_text,
    placed,
    problems_in,
    save_text,
    validate_problems,
    written_text,
)
from foundry.agent.textfile import read_text
from foundry.ui.editor.raw_section import RawFilesSection
from foundry.ui.editor.sections import ShownProblem

if TYPE_CHECKING:
    from foundry.ui.editor.controller import EditorController

PAGE = "Files"
FIX_HERE = "\nFix it here, then save the file (Ctrl+S)."


class RawBinding(QObject):
    def __init__(self, section: RawFilesSection, editor: EditorController) -> None:
        super().__init__(section)
        self.section = section
        self.editor = editor
        self.document: AgentDocument | None = None  # the agent as last read from disk
        self.files: list[Path] = []
        self.file: Path | None = None
        self.original = ""  # the file's text as read, to save over only that
        self._filling = False
        section.file.currentIndexChanged.connect(self._file_chosen)
        section.save.clicked.connect(self.save)
        section.text.save_requested.connect(self.save)
        section.revert.clicked.connect(self.revert)
        section.text.modificationChanged.connect(lambda _: self._show_state())
        editor.undo_stack.cleanChanged.connect(self._form_edited)
        editor.view.saved.connect(self._form_saved)
        editor.disk.changed.connect(self._disk_changed)
        editor.view.problems.activated.connect(self._problem_activated)

    @property
    def modified(self) -> bool:
        return self.section.text.document().isModified()

    # -- showing --------------------------------------------------------------------------------

    def show(self, document: AgentDocument) -> None:
        """Show the agent's files as `document` read them: an agent that cannot be used opens
        here, at the first problem's line (the files are listed off the GUI thread)."""
        self.document = document
        broken = self.editor.working is None  # the form has no agent to show
        self.editor.view.enable_form(not broken)
        if broken:
            self.editor.show_page(PAGE)
        self.editor.spawn(self._list_files(document, broken))

    async def _list_files(self, document: AgentDocument, broken: bool) -> None:
        files = await asyncio.to_thread(_files_of, document)
        if document is not self.document:
            return  # another read came meanwhile
        self.files = files
        first = next((p.file for p in document.problems if p.file in files), None)
        keep = self.file if self.file in files else None
        chosen = (first if broken else keep) or first or (files[0] if files else None)
        with self._quiet():
            self.section.file.clear()
            for file in files:
                in_folder = document.format is AgentFormat.FOLDER
                self.section.file.addItem(
                    str(file.relative_to(document.path)) if in_folder else file.name
                )
        if chosen is not None:
            await self._show_file(chosen)

    async def _show_file(self, file: Path) -> None:
        try:
            text = await asyncio.to_thread(read_text, file)
        except AgentError as error:
            text = ""
            self.section.show_problem(str(error.problems[0]))
        line = self.section.text.textCursor().blockNumber() + 1 if file == self.file else 1
        self.file, self.original = file, text
        with self._quiet():
            self.section.file.setCurrentIndex(self.files.index(file))
            self.section.text.setPlainText(editable_text(text))
            self.section.text.document().setModified(False)
            self.section.text.go_to_line(line)  # the same file shown again: where it was
        self._mark(self._problems())
        self._show_state()

    def _problems(self) -> list[AgentProblem]:
        if self.document is None or self.file is None:
            return []
        return placed(problems_in(self.document, self.file), self.file, self.original)

    def _mark(self, problems: list[AgentProblem], banner: str | None = None) -> None:
        """Mark the problems' lines, put the cursor on the first, and say them above."""
        lines = [problem.line for problem in problems if problem.line is not None]
        self.section.text.mark_lines(lines)
        if lines:
            first = next(problem for problem in problems if problem.line is not None)
            self.section.text.go_to_line(first.line or 1, first.column)
        if banner is not None:
            self.section.show_problem(banner)
        elif problems:
            self.section.show_problem(_describe(problems, self.file) + FIX_HERE)
        else:
            self.section.show_problem("")

    def _show_state(self) -> None:
        """Read-only while the form has edits not saved (a save here would reload over them)."""
        form_edited = not self.editor.undo_stack.isClean()
        self.section.text.setReadOnly(form_edited)
        self.section.save.setEnabled(self.modified and not form_edited)
        self.section.revert.setEnabled(self.modified)
        if form_edited:
            self.section.show_problem(
                "The form has edits not saved: save or undo them (Ctrl+S, Ctrl+Z) to edit the "
                "files as text.",
                "note",
            )
        elif not self._problems() and not self.section.problem.text().startswith("Not saved"):
            self.section.show_problem("")

    def _form_edited(self, _clean: bool) -> None:
        self._show_state()

    def _file_chosen(self, index: int) -> None:
        if self._filling or not 0 <= index < len(self.files):
            return
        if self.modified:  # the text typed stays until saved or reverted
            with self._quiet():
                self.section.file.setCurrentIndex(self.files.index(self.file or self.files[0]))
            self.section.outcome.setText("Save or revert this file before showing another.")
            return
        self.editor.spawn(self._show_file(self.files[index]))

    def go_to(self, file: Path, line: int | None, column: int | None = None) -> None:
        """Show `file` at `line` (a problem's place)."""
        self.editor.show_page(PAGE)
        if file in self.files and file != self.file and not self.modified:
            self.editor.spawn(self._go_to(file, line, column))
        elif line is not None:
            self.section.text.go_to_line(line, column)

    def _problem_activated(self, shown: ShownProblem) -> None:
        """A problem of a file itself (no field to show it at: a syntax error, a rule set aside
        unread) double-clicked in the Problems panel: its line, here."""
        if shown.location or shown.editor or self.document is None:
            return
        base = self.document.base_dir
        for problem in self.document.problems:
            listed = problem
            if problem.file.is_relative_to(base):
                listed = problem.model_copy(update={"file": problem.file.relative_to(base)})
            if str(listed) == shown.text and problem.file in self.files:
                self.go_to(problem.file, problem.line, problem.column)
                return

    async def _go_to(self, file: Path, line: int | None, column: int | None) -> None:
        await self._show_file(file)
        if line is not None:
            self.section.text.go_to_line(line, column)

    # -- saving ---------------------------------------------------------------------------------

    def save(self) -> None:
        if self.document is None or self.file is None or not self.modified:
            return
        if self.section.text.isReadOnly():
            self._show_state()
            return
        text = written_text(self.section.text.toPlainText(), self.original)
        self.section.outcome.setText("Checking and saving…")
        self.editor.spawn(self._save(self.document, self.file, text, self.original))

    async def _save(self, document: AgentDocument, file: Path, text: str, shown: str) -> None:
        try:
            saved, left = await asyncio.to_thread(_save_and_validate, document, file, text, shown)
        except AgentError as error:
            self.section.outcome.setText("Not saved. The text typed is kept.")
            problems = placed(error.problems, file, text)
            self._mark(problems, "Not saved: " + _describe(problems, file))
            return
        self.original = text
        self.section.text.document().setModified(False)
        self.section.outcome.setText(
            f"Saved {file.name}: the agent can be used."
            if saved.agent is not None and not left
            else f"Saved {file.name}; {len(left)} problem{'s' if len(left) != 1 else ''} left "
            "(see Problems)."
        )
        self.editor.view.load(saved)  # the form follows the file, and this page
        self.editor.view.saved.emit(saved.path)
        self.editor.put_in_force(saved)  # its open chats and the panels follow it too

    def revert(self) -> None:
        if self.file is not None:
            self.section.outcome.setText("")
            self.editor.spawn(self._show_file(self.file))

    # -- the files on disk ----------------------------------------------------------------------

    def _form_saved(self, _path: Path) -> None:
        """The form wrote the files: show them as written (unless this page saved them)."""
        document = self.editor.document
        if document is not None and document is not self.document:
            self.show(document)

    def _disk_changed(self) -> None:
        if self.document is not None:
            self.editor.spawn(self._reread(self.document.path))

    async def _reread(self, path: Path) -> None:
        """The files changed on disk: show them again, unless text typed here is not saved."""
        file = self.file
        on_disk, text = await asyncio.to_thread(_read_both, path, file)
        shown = self.document
        if shown is not None and on_disk.problems == shown.problems and text == self.original:
            return  # what the page shows (a save of its own, noticed)
        if self.modified:
            self.section.outcome.setText(
                "The file changed on disk: Revert shows it (the text typed here is dropped)."
            )
            return
        self.show(on_disk)

    def _quiet(self) -> _Filling:
        return _Filling(self)


class _Filling:
    """While the page is filled from disk, its change signals are not choices."""

    def __init__(self, binding: RawBinding) -> None:
        self.binding = binding

    def __enter__(self) -> None:
        self.binding._filling = True

    def __exit__(self, *_: object) -> None:
        self.binding._filling = False


def _files_of(document: AgentDocument) -> list[Path]:
    return agent_files(document) if document.path.exists() else []


def _save_and_validate(
    document: AgentDocument, file: Path, text: str, shown: str
) -> tuple[AgentDocument, list[AgentProblem]]:
    """`save_text`, and what `foundry validate` then finds in the agent."""
    saved = save_text(document, file, text, shown)
    return saved, validate_problems(saved)


def _read_both(path: Path, file: Path | None) -> tuple[AgentDocument, str | None]:
    """The agent at `path` as on disk, and the text of its `file` (None: it cannot be read)."""
    try:
        text = read_text(file) if file is not None else None
    except AgentError:
        text = None
    return read_agent(path), text


def _describe(problems: list[AgentProblem], file: Path | None) -> str:
    """The problems, the ones of `file` first, each with its line."""
    shown = sorted(problems, key=lambda problem: problem.file != file)
    lines = [_one(problem, file) for problem in shown[:3]]
    more = len(problems) - len(lines)
    return "\n".join(lines) + (f"\n(and {more} more)" if more > 0 else "")


def _one(problem: AgentProblem, file: Path | None) -> str:
    where = f"line {problem.line}" if problem.line is not None else ""
    if problem.file != file:
        where = f"{problem.file.name}{' ' + where if where else ''}"
    field = f"{problem.field}: " if problem.field else ""
    return f"{where}: {field}{problem.message}" if where else f"{field}{problem.message}"
