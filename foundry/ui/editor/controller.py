"""EditorController: keeps the working copy of the agent, its undo stack, saves and reloads."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError
from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QUndoStack
from PySide6.QtWidgets import QAbstractItemDelegate, QAbstractItemView, QApplication, QWidget

from foundry.agent.checks import check_agent
from foundry.agent.document import AgentDocument, read_agent, save_agent, to_document
from foundry.agent.models import Agent
from foundry.agent.problems import (
    AgentError,
    AgentProblem,
    field_path,
    parse_field_path,
    problems_from_validation,
)
from foundry.agent.salvage import Salvaged, salvage
from foundry.ui.background import BackgroundTasks
from foundry.ui.bridge import EngineBridge
from foundry.ui.editor.commands import SnapshotCommand
from foundry.ui.editor.disk_watch import DiskWatch
from foundry.ui.editor.edit_labels import edit_label, page_of
from foundry.ui.editor.item_binding import ItemsBinding
from foundry.ui.editor.metadata_binding import MetadataBinding
from foundry.ui.editor.policy_binding import PolicyBinding
from foundry.ui.editor.providers_binding import ProvidersBinding
from foundry.ui.editor.save_status import SaveStatus
from foundry.ui.editor.sections import ShownProblem
from foundry.ui.editor.settings_binding import SettingsBinding
from foundry.ui.editor.supervisors_binding import SupervisorsBinding
from foundry.ui.editor.tools_binding import ToolsBinding

if TYPE_CHECKING:
    from foundry.ui.editor.view import AgentEditor

log = logging.getLogger(__name__)
Location = tuple[str | int, ...]
CHECK_DELAY_MS = 300
UNDO_LABEL_CHARACTERS = 40
INVALID_FIELD_STYLE = "border: 1px solid #c62828; background: #ffebee;"


class EditorController(QObject):
    """Applies every edit to a working copy of the agent; the document on disk changes on save.
    `agent_saved` gives the document as saved, once its open chats have been told."""

    agent_saved = Signal(object)

    def __init__(self, view: AgentEditor, bridge: EngineBridge | None = None) -> None:
        super().__init__(view)
        self.view = view
        self.bridge = bridge
        self.document: AgentDocument | None = None
        self.working: Agent | None = None
        self.refreshing = False
        self.undo_stack = QUndoStack(self)
        self._field_problems: dict[str, list[AgentProblem]] = {}
        self._save_problems: list[AgentProblem] = []
        self._broken_on_disk: list[AgentProblem] = []  # why the files on disk cannot be shown
        self._checked: list[AgentProblem] = []  # what `validate` finds in the agent as edited
        self._tasks = BackgroundTasks("editor task", view.status.setText)
        self._status = SaveStatus()
        self._save_task: asyncio.Task[None] | None = None
        self._closed = False
        self._check_timer = QTimer(self)
        self._check_timer.setSingleShot(True)
        self._check_timer.setInterval(CHECK_DELAY_MS)
        self._check_timer.timeout.connect(self.show_problems)
        self._check_generation = 0
        self._was_modified = False
        self.field_widgets: dict[str, tuple[QWidget, str]] = {}
        self.disk = DiskWatch(self)
        self.metadata = MetadataBinding(view.metadata, self)
        self.settings = SettingsBinding(view.settings, self)
        self.rules = ItemsBinding(view.rules, "rules", self)
        self.references = ItemsBinding(view.references, "references", self)
        self.supervisors = SupervisorsBinding(view.supervisors, self)
        self.policy = PolicyBinding(view.policy, self)
        self.tools = ToolsBinding(view.tools, self, bridge)
        self.providers = ProvidersBinding(view.providers, self, bridge)
        self._connect()

    def _connect(self) -> None:
        view = self.view
        view.prompt.editor.source.textChanged.connect(self._prompt_typed)
        view.save_action.triggered.connect(self.save)
        view.undo_action.triggered.connect(self.undo_stack.undo)
        view.redo_action.triggered.connect(self.undo_stack.redo)
        self.undo_stack.canUndoChanged.connect(view.undo_action.setEnabled)
        self.undo_stack.canRedoChanged.connect(view.redo_action.setEnabled)
        self.undo_stack.cleanChanged.connect(self._clean_changed)
        self.undo_stack.undoTextChanged.connect(self._name_undo)
        self.undo_stack.redoTextChanged.connect(self._name_redo)
        view.problems.activated.connect(self.go_to_problem)
        self.disk.changed.connect(self._disk_changed)
        view.disk_bar.reload.clicked.connect(self.reload)
        view.disk_bar.keep.clicked.connect(view.disk_bar.hide)
        view.undo_action.setEnabled(False)
        view.redo_action.setEnabled(False)
        view.save_action.setEnabled(False)

    # -- state ----------------------------------------------------------------------------------

    @property
    def modified(self) -> bool:
        """Edits not saved yet, applied or not (input that is not valid yet counts too)."""
        return not self.undo_stack.isClean() or bool(self.pending_problems())

    def pending_keys(self) -> set[str]:
        """The fields whose input is not valid yet (kept in their widgets, not in the agent)."""
        return set(self._field_problems)

    def pending_problems(self) -> list[AgentProblem]:
        """Why input typed into the editor is not in the agent yet: saving waits for a fix."""
        problems = [problem for found in self._field_problems.values() for problem in found]
        return [*problems, *self.supervisors.problems]

    @property
    def title(self) -> str:
        name = self.working.metadata.name if self.working else ""
        if not name and self.document is not None:
            name = self.document.path.name
        return f"{name} *" if self.modified else name

    @property
    def base_dir(self) -> Path | None:
        return self.document.base_dir if self.document else None

    def file_of(self, location: Location) -> Path:
        if self.document is None:
            return Path()
        if self.document.source is None:
            return self.document.path
        return self.document.source.locate(location)[0]

    @contextmanager
    def refresh_guard(self) -> Iterator[None]:
        """While widgets are filled from the agent, their change signals are not edits."""
        before, self.refreshing = self.refreshing, True
        try:
            yield
        finally:
            self.refreshing = before

    # -- loading --------------------------------------------------------------------------------

    def load(self, document: AgentDocument) -> None:
        """Show `document`; an agent that does not validate opens with the parts that fail set
        aside as input still to fix (see agent/salvage.py)."""
        self.document = document
        salvaged = _salvaged(document)
        agent = document.agent or (salvaged.agent if salvaged else None)
        self.working = agent.model_copy(deep=True) if agent else None
        self._field_problems.clear()
        self._save_problems = []
        self._broken_on_disk = []
        self._checked = []
        self._status = SaveStatus()
        self.supervisors.discard_pending()
        self.undo_stack.clear()
        self.view.disk_bar.hide()
        self.disk.watch(document)
        self._show_all()
        if salvaged is not None and salvaged.agent is not None:
            self._show_set_aside(salvaged.set_aside)
        self.view.save_action.setEnabled(self.working is not None)
        self.show_problems()
        self._modified_maybe_changed()
        self._title_changed()

    def _show_set_aside(self, parts: dict[str, Any]) -> None:
        for key, value in parts.items():
            if key == "supervisors":
                self.supervisors.show_set_aside(value)
                continue
            message = (
                f"{value!r} was read from the file and is not valid; the field shows the "
                "default until you set a value (the save waits for it)"
            )
            file = self.file_of(parse_field_path(key))
            self._field_problems[key] = [AgentProblem(file=file, field=key, message=message)]
        self.problems_changed()

    def _show_all(self) -> None:
        agent = self.working
        self.view.enable_form(agent is not None)  # the Files page stays usable
        if agent is None:
            self.view.heading.setText(self.document.path.name if self.document else "")
            return
        with self.refresh_guard():
            self.metadata.show(agent.metadata)
            self.view.prompt.editor.set_text(agent.system_prompt)
            self.settings.show(agent.settings)
            self.rules.show(agent, fill_form=True)
            self.references.show(agent, fill_form=True)
            self.supervisors.show(agent)
            self.policy.show(agent)
            self.tools.show(agent)
            self.providers.show(agent)

    # -- editing --------------------------------------------------------------------------------

    def edit(
        self, location: Location, change: Callable[[Agent], None], mergeable: bool = True
    ) -> bool:
        """Apply `change` to the working agent as one undoable step; False if it is invalid."""
        if self.working is None or self.refreshing:
            return False
        key = field_path(location)
        before = self.working.model_copy(deep=True)
        page = page_of(location, before)
        try:
            change(self.working)
        except ValidationError as error:
            self.working = before
            prefix = location[:-1] if len(location) > 1 else ()
            self._field_problems[key] = problems_from_validation(
                error, self.file_of(location), prefix
            )
            self.problems_changed()
            return False
        self._field_problems.pop(key, None)
        after = self.working.model_copy(deep=True)
        label = edit_label(location, before, after)
        self.undo_stack.push(SnapshotCommand(self, key, before, after, mergeable, label, page))
        if location[:1] == ("supervisors",):
            with self.refresh_guard():
                self.supervisors.follow(after)
        return True  # the push's redo() restored the agent and refreshed the problems

    def snapshot(self) -> Agent | None:
        """The agent as edited, as an object no later edit changes (for work off the GUI
        thread): the undo stack's copy when there is one, else a copy made now."""
        index = self.undo_stack.index()
        command = self.undo_stack.command(index - 1) if index > 0 else None
        if isinstance(command, SnapshotCommand):
            return command.after
        if index == 0 and self.document is not None and self.document.agent is not None:
            return self.document.agent
        return self.working.model_copy(deep=True) if self.working is not None else None

    def show_page(self, page: str) -> None:
        self.view.show_section(page)

    def problem_at(self, location: Location) -> str | None:
        """Why the last input for the field at `location` was not taken, if it was not."""
        problems = self._field_problems.get(field_path(location))
        return problems[0].message if problems else None

    def refresh_all(self) -> None:
        """Show the working agent on every page (after an edit that changes several)."""
        self._show_all()

    def restore(self, agent: Agent, refresh: bool) -> None:
        """Make `agent` the working copy (an undo, a redo or a new edit)."""
        self.working = agent
        if refresh:
            self._field_problems.clear()
            self._show_all()
        else:
            with self.refresh_guard():
                self.rules.show(agent, fill_form=False)
                self.references.show(agent, fill_form=False)
        self._title_changed()
        self.problems_changed()

    def _prompt_typed(self) -> None:
        text = self.view.prompt.editor.source.toPlainText()
        self.edit(("systemPrompt",), lambda agent: setattr(agent, "system_prompt", text))

    # -- problems -------------------------------------------------------------------------------

    def problems_changed(self) -> None:
        self._check_timer.start()
        self._flag_fields()
        self._modified_maybe_changed()

    def register_field(self, key: str, widget: QWidget) -> None:
        """`widget` shows the field `key` (`settings.model`): it is flagged when its input is
        not valid."""
        self.field_widgets[key] = (widget, widget.toolTip())

    def forget_fields(self, prefix: str) -> None:
        for key in [key for key in self.field_widgets if key.startswith(prefix)]:
            widget, tip = self.field_widgets.pop(key)
            widget.setStyleSheet("")
            widget.setToolTip(tip)

    def _flag_fields(self) -> None:
        """Fields whose input is not valid keep it, outlined, with the reason as their tip."""
        for key, (widget, tip) in self.field_widgets.items():
            problems = self._field_problems.get(key, [])
            style = INVALID_FIELD_STYLE if problems else ""
            if widget.styleSheet() != style:  # setting it re-polishes the widget: only on change
                widget.setStyleSheet(style)
            widget.setToolTip(f"Not valid: {problems[0].message}" if problems else tip)

    def show_problems(self) -> None:
        """Refresh the problems panel; the checks that read supervisor agents from disk run on a
        worker thread, and only the newest run's result is shown."""
        self._check_timer.stop()
        self._check_generation += 1
        self.spawn(self._show_problems(self._check_generation))

    async def _show_problems(self, generation: int) -> None:
        problems, self._checked = await self._current_problems_off_thread()
        if generation != self._check_generation:
            return
        self._show_status()
        pending = set(self.supervisors.problems)
        shown = [
            self.supervisors.shown(problem) if problem in pending else self._shown(problem)
            for problem in problems
        ]
        self.view.problems.show_problems(shown)

    def _shown(self, problem: AgentProblem) -> ShownProblem:
        """The problem with its file named relative to the agent's folder, when inside it, and
        the page of the field it is about."""
        location = parse_field_path(problem.field)
        page = page_of(location, self.working) if location else _page_of_file(problem.file)
        if self.document is not None and problem.file.is_relative_to(self.document.base_dir):
            problem = problem.model_copy(
                update={"file": problem.file.relative_to(self.document.base_dir)}
            )
        return ShownProblem(str(problem), page, location)

    def go_to_problem(self, problem: ShownProblem) -> None:
        """Show the page of the problem, at its line when it is about text typed in the editor."""
        if problem.page:
            self.view.show_section(problem.page)
        if problem.editor == "supervisors":
            self.supervisors.go_to(problem.line, problem.column)
        elif problem.location[:1] in (("rules",), ("references",)):
            binding = self.rules if problem.location[0] == "rules" else self.references
            if len(problem.location) > 1 and isinstance(problem.location[1], int):
                binding.select_row(problem.location[1])

    async def _current_problems_off_thread(self) -> tuple[list[AgentProblem], list[AgentProblem]]:
        """The problems of the agent as edited (load, fields, supervisors, checks, last save),
        and of those the checks' (which stop a save)."""
        if self.document is None:
            return [], []
        pending_fields = set(self._field_problems)
        read = [p for p in self.document.problems if p.field not in pending_fields]
        problems = [*self._broken_on_disk, *read, *self._save_problems]
        for field_problems in self._field_problems.values():
            problems.extend(field_problems)
        problems.extend(self.supervisors.problems)
        checked: list[AgentProblem] = []
        if self.working is not None:
            edited = replace(self.document, agent=self.working.model_copy(deep=True))
            checked = await asyncio.to_thread(_checked, edited)
        return list(dict.fromkeys([*problems, *checked])), checked

    def _stopping_save(self) -> list[AgentProblem]:
        """What stops a save now: input not valid yet, what `validate` finds, the last save's."""
        return [*self.pending_problems(), *self._checked, *self._save_problems]

    def _show_status(self) -> None:
        self.view.status.setText(self._status.line(self.modified, self._stopping_save()))

    def _say(self, text: str) -> None:
        """What an action did, in the status line until the next action or edit."""
        self._status.action(text)
        self._show_status()

    # -- saving and reloading -------------------------------------------------------------------

    def save(self) -> asyncio.Task[None] | None:
        """Start saving; the save under way (this one or one already started), None if none."""
        if self.document is None or self.working is None:
            return None
        if self._broken_on_disk and not self.modified:
            self._say(
                "Not saved: nothing is edited, and saving would write over the broken file on "
                "disk. Fix it there (the editor reloads it), or edit, then save."
            )
            return None
        if self._save_task is None or self._save_task.done():
            self._commit_field_being_edited()
            self.supervisors.check()
            if self._refuse_save():
                return None
            document = replace(self.document, agent=self.working.model_copy(deep=True))
            self._save_task = self.spawn(self._save(document, self.undo_stack.index()))
        return self._save_task

    def _commit_field_being_edited(self) -> None:
        """A table cell still open in its editor commits what it holds first: Ctrl+S leaves the
        focus where it is, and the cell would commit only after the save."""
        focus = QApplication.focusWidget()
        if focus is None or not self.view.isAncestorOf(focus):
            return
        table = _table_editing(focus)
        if table is not None:
            table.commitData(focus)
            table.closeEditor(focus, QAbstractItemDelegate.EndEditHint.NoHint)

    def _refuse_save(self) -> bool:
        """Input that is not valid is never dropped by a save: the save waits for a fix."""
        if not self.pending_problems():
            return False
        self._refused()
        return True

    def _refused(self) -> None:
        self._status.action()
        self._status.refused = True
        self._show_status()
        self.show_problems()

    async def save_and_wait(self) -> bool:
        """Save, and wait until that save is done (not the editor's other work, such as a tool
        being tried); True when no edit is left unsaved."""
        saving = self.save()
        if saving is not None:
            await asyncio.gather(saving, return_exceptions=True)
        return not self.modified

    async def _save(self, document: AgentDocument, index: int) -> None:
        """Write `document` unless `foundry validate` would refuse it (then nothing is written
        and the line says why, as validate does)."""
        self._status.saving = True
        self._show_status()
        try:
            if not await asyncio.to_thread(document.path.exists):  # deleted while open
                self._status.action(
                    f"Not saved: the agent was deleted on disk ({document.path}). Your edits "
                    "are kept."
                )
                return
            self._checked = await asyncio.to_thread(_checked, document)
            if self._checked:
                self._refused()
                return
            saved = await asyncio.to_thread(save_agent, document)
        except AgentError as error:
            self._save_problems = error.problems
            self._refused()
            return
        finally:
            self._status.saving = False
            self._show_status()
        self._saved(saved, index)

    def _saved(self, saved: AgentDocument, index: int) -> None:
        self.document = saved
        self._save_problems = []
        self.disk.watch(saved)
        if self.undo_stack.index() == index and saved.agent is not None:
            self.working = saved.agent.model_copy(deep=True)
            self.undo_stack.setClean()
            self._show_all()
        self._status.action()
        self.show_problems()
        self._title_changed()
        self.view.saved.emit(saved.path)
        self.put_in_force(saved)

    def put_in_force(self, saved: AgentDocument) -> None:
        """The agent's open chats take a save from their next step (runtime/agent_changes),
        then `agent_saved` says it: the form's saves, and the Files page's."""
        self._status.saved_to, self._status.chats = saved.path, 0
        self._show_status()
        self.spawn(self._put_in_force(saved))

    async def _put_in_force(self, saved: AgentDocument) -> None:
        if self.bridge is not None and saved.agent is not None:
            engine = self.bridge.engine
            try:
                chats = await self.bridge.call(engine.apply_saved_agent(saved.path))
            except AgentError as error:  # saved with problems left (the Files page says which)
                self._say(
                    f"Saved to {saved.path}; its open chats go on as they run, since it does "
                    f"not load: {error.problems[0]}"
                )
                return
            if self._status.saved_to == saved.path:
                self._status.chats = len(chats)
                self._show_status()
        self.agent_saved.emit(saved)

    def reload(self) -> None:
        """Show the agent as it is on disk, dropping unsaved edits."""
        if self.document is not None:
            self.spawn(self._reload())

    async def _reload(self) -> None:
        assert self.document is not None
        document = await asyncio.to_thread(read_agent, self.document.path)
        if self._cannot_show(document):
            self._keep_shown(document)
            return
        self.load(document)
        self._say("Reloaded from disk.")

    def _cannot_show(self, on_disk: AgentDocument) -> bool:
        """Whether loading `on_disk` would grey out the agent the editor shows."""
        if self.working is None or on_disk.agent is not None:
            return False
        salvaged = _salvaged(on_disk)
        return salvaged is None or salvaged.agent is None

    def _keep_shown(self, on_disk: AgentDocument) -> None:
        """The agent's files on disk are broken: keep showing what was last read (edits too),
        say what is wrong there, and leave the files as they are."""
        self._broken_on_disk = on_disk.problems
        first = self._shown(on_disk.problems[0]).text if on_disk.problems else str(on_disk.path)
        more = len(on_disk.problems) - 1
        self.view.disk_bar.show_broken(first + (f" (and {more} more)" if more > 0 else ""))
        self._say("Not reloaded: the agent's file on disk is broken (see above).")
        self.show_problems()

    def _disk_changed(self) -> None:
        if self.document is not None and not self._status.saving:
            self.spawn(self._compare_with_disk(self.document))

    async def _compare_with_disk(self, shown: AgentDocument) -> None:
        on_disk = await asyncio.to_thread(read_agent, shown.path)
        gone = not await asyncio.to_thread(shown.path.exists)
        if self._status.saving or self.document is not shown:
            return
        if gone:  # loading it would empty the editor: what it shows stays
            self._say("")
            self.view.disk_bar.show_deleted(shown.path)
            return
        if self.view.disk_bar.deleted:  # back on disk: compared as any change is
            self.view.disk_bar.deleted = False
            self.view.disk_bar.hide()
            self._say("")
        if self._broken_on_disk and not self._cannot_show(on_disk):  # mended
            self._broken_on_disk = []
            self.view.disk_bar.hide()
            self._say("The agent's file on disk is readable again.")
            self.show_problems()
        if _same(on_disk, shown):
            return
        if self.modified:
            self.view.disk_bar.show_changed()
        elif self._cannot_show(on_disk):
            self._keep_shown(on_disk)
        else:
            self.load(on_disk)
            self._say("Reloaded: the agent changed on disk.")

    def spawn(self, coroutine: Coroutine[Any, Any, None]) -> asyncio.Task[Any]:
        """Run `coroutine` on the GUI's loop, owned by the editor; a failure shows in the status."""
        return self._tasks.spawn(coroutine)

    def close(self) -> None:
        """Cancel saves and reads still under way, stop watching the files and stop its servers
        (the editor is closing); closed once."""
        if self._closed:
            return
        self._closed = True
        self._check_timer.stop()
        self.disk.stop()
        self._tasks.cancel_all()
        self.tools.close()
        self.policy.close()

    # -- signals out ----------------------------------------------------------------------------

    def _name_undo(self, what: str) -> None:
        _name_action(self.view.undo_action, "Undo", what)

    def _name_redo(self, what: str) -> None:
        _name_action(self.view.redo_action, "Redo", what)

    def _clean_changed(self, _clean: bool) -> None:
        self._modified_maybe_changed()

    def _modified_maybe_changed(self) -> None:
        modified = self.modified
        if modified != self._was_modified:
            self._was_modified = modified
            if not self._status.refused:  # an edit or an undo: what an action said is past
                self._status.said = ""
            self.view.modified_changed.emit(modified)
        self._title_changed()
        self._show_status()

    def _title_changed(self) -> None:
        self.view.heading.setText(self.title)
        self.view.title_changed.emit(self.title)


def _name_action(action: Any, verb: str, what: str) -> None:
    """ "Undo: edit rule 'be-brief'", shortened on the button, whole in the tip."""
    if not what:
        action.setText(verb)
        action.setToolTip(verb)
        return
    short = what if len(what) <= UNDO_LABEL_CHARACTERS else what[: UNDO_LABEL_CHARACTERS - 1] + "…"
    action.setText(f"{verb}: {short}")
    shortcut = action.shortcut().toString()
    action.setToolTip(f"{verb}: {what} ({shortcut})")
    for widget in action.associatedObjects():
        if isinstance(widget, QWidget):
            widget.updateGeometry()  # a button sized for "Undo" fits the longer text


def _checked(document: AgentDocument) -> list[AgentProblem]:
    """What `foundry validate` finds across the fields and files of `document`'s agent as it
    would be written (blocking: it reads supervisor agents from disk)."""
    if document.agent is None or document.source is None:
        return []
    return check_agent(replace(document, data=to_document(document.agent)))


def _table_editing(widget: QWidget) -> QAbstractItemView | None:
    """The table whose cell `widget` is the open editor of (its viewport's child), if any."""
    viewport = widget.parentWidget()
    table = viewport.parentWidget() if viewport is not None else None
    if isinstance(table, QAbstractItemView) and table.state() == table.State.EditingState:
        return table
    return None


def _page_of_file(file: Path) -> str:
    """The page of a problem that names no field: a rule's or reference's own file."""
    parts = file.parts
    if "rules" in parts:
        return "Rules"
    if "refs" in parts:
        return "References"
    return ""


def _salvaged(document: AgentDocument) -> Salvaged | None:
    """What of an agent that does not validate can be shown (None: it validates, or nothing
    was read)."""
    return salvage(document.data) if document.agent is None and document.data else None


def _same(first: AgentDocument, second: AgentDocument) -> bool:
    """Whether two reads of an agent found the same agent and the same problems."""
    if first.problems != second.problems:
        return False
    if first.agent is None or second.agent is None:
        return first.agent is second.agent
    return to_document(first.agent) == to_document(second.agent)
