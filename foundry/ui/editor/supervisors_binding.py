"""SupervisorsBinding: the supervisors list, the selected one's form and the JSON, one document.

Every change, from a form, the list or the JSON, is one edit of the working agent on the
editor's undo stack; each view is refreshed from the agent after it. JSON that does not parse
yet stays as typed (it is pending input: the editor is unsaved and a save waits for a fix).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import TypeAdapter
from pydantic.alias_generators import to_camel
from PySide6.QtCore import QModelIndex, QObject, Qt, QTimer
from PySide6.QtGui import QColor, QTextCursor, QTextFormat
from PySide6.QtWidgets import QCheckBox, QFileDialog, QListWidgetItem, QTextEdit

from foundry.agent.models import (
    Agent,
    AgentSupervisorConfig,
    CollectionConfig,
    GuardianConfig,
    PolicyConfig,
    SupervisorEntry,
)
from foundry.agent.names import free_name
from foundry.agent.problems import AgentError, AgentProblem
from foundry.supervision.agreement import questions, shadow_cost_note
from foundry.supervision.l1 import supervisor_provider
from foundry.ui.editor.sections import ShownProblem
from foundry.ui.editor.supervisors_json import entry_spans, parse_supervisors, supervisors_text
from foundry.ui.editor.supervisors_section import SupervisorsSection

if TYPE_CHECKING:
    from foundry.ui.editor.controller import EditorController

CHECK_DELAY_MS = 300
PROBLEM_LINE = QColor("#ffebee")
ENTRY: TypeAdapter[SupervisorEntry] = TypeAdapter(SupervisorEntry)
NEW_ENTRY_CONFIG: dict[str, dict[str, Any]] = {"agent": {"agentPath": "../supervisor"}}
ORIGINAL_ROW = Qt.ItemDataRole.UserRole


class SupervisorsBinding(QObject):
    def __init__(self, section: SupervisorsSection, editor: EditorController) -> None:
        super().__init__(section)
        self.section = section
        self.editor = editor
        self.problems: list[AgentProblem] = []
        self.current: int | None = None
        self._typed_json = False  # the JSON was typed in since the agent was last shown in it
        self._shadow_cost_of: tuple[Any, ...] | None = None  # the supervisor its cost is shown for
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(CHECK_DELAY_MS)
        self.timer.timeout.connect(self.check)
        self._connect_list()
        self._connect_forms()
        section.json.textChanged.connect(self._typed)
        section.open_agent.clicked.connect(self.open_agent)
        section.open_shortcut.activated.connect(self.open_agent)
        section.problems.clicked.connect(self._go_to_problem)

    def _connect_list(self) -> None:
        section = self.section
        section.entries.currentRowChanged.connect(self._selected)
        section.entries.model().rowsMoved.connect(self._dragged)
        section.add_menu.triggered.connect(lambda action: self.add(action.data()))
        section.remove.clicked.connect(self.remove)
        section.up.clicked.connect(lambda: self.move(-1))
        section.down.clicked.connect(lambda: self.move(1))
        section.up_shortcut.activated.connect(lambda: self.move(-1))
        section.down_shortcut.activated.connect(lambda: self.move(1))

    def _connect_forms(self) -> None:
        forms = self.section.forms
        forms.id.textEdited.connect(lambda text: self._set_entry("id", text))
        forms.name.textEdited.connect(lambda text: self._set_entry("name", text))
        forms.enabled.toggled.connect(lambda on: self._set_entry("enabled", on))
        guardian, agent = forms.guardian, forms.agent
        self._bind_boxes(guardian.mask_pii, "mask_pii")
        self._bind_boxes(guardian.apply_to, "apply_to")
        guardian.block_keywords.textChanged.connect(
            lambda: self._set_config("block_keywords", _lines(guardian.block_keywords))
        )
        agent.agent_path.textEdited.connect(lambda text: self._set_config("agent_path", text))
        self._bind_boxes(agent.allowed_actions, "allowed_actions")
        self._bind_boxes(agent.apply_to, "apply_to")
        agent.max_modifications.valueChanged.connect(
            lambda value: self._set_config("max_modifications", value)
        )
        agent.timeout.valueChanged.connect(
            lambda value: self._set_config("timeout_seconds", value or None)
        )
        agent.fallback.currentIndexChanged.connect(
            lambda _: self._set_config("fallback_behavior", agent.fallback.currentData())
        )
        agent.browse.clicked.connect(self.browse)
        agent.open.clicked.connect(self.open_agent)
        forms.collection.export_path.textEdited.connect(
            lambda text: self._set_config("export_path", text.strip() or None)
        )
        forms.policy.edit_rules.clicked.connect(lambda: self.editor.show_page("Policy"))
        forms.policy.shadow_mode.toggled.connect(lambda on: self._set_config("shadow_mode", on))

    def _bind_boxes(self, boxes: dict[str, QCheckBox], name: str) -> None:
        for box in boxes.values():
            box.toggled.connect(lambda _, boxes=boxes: self._set_config(name, _checked(boxes)))

    # -- showing --------------------------------------------------------------------------------

    def show(self, agent: Agent) -> None:
        """Show the agent's supervisors; JSON typed that does not parse yet is kept."""
        entries = list(agent.supervisors)
        self._fill_list(entries)
        self._fill_form(entries)
        if not self.problems:
            self.timer.stop()
            self._set_json(supervisors_text(entries))

    def follow(self, agent: Agent) -> None:
        """Another page changed the supervisors (the Policy page): show them, unless the JSON
        holds typing not applied yet."""
        if not self._typed_json and not self.problems:
            self.show(agent)

    def show_set_aside(self, raw: Any) -> None:
        """Supervisors read from the file that do not validate: shown as JSON to fix, pending."""
        with self.editor.refresh_guard():
            self.section.json.setPlainText(json.dumps(raw, indent=2, ensure_ascii=False) + "\n")
        self._typed_json = True
        self.check()

    def discard_pending(self) -> None:
        """A new document is shown: JSON typed for the one before is dropped."""
        self.timer.stop()
        self._typed_json = False
        self.problems = []
        self.current = None

    def _fill_list(self, entries: list[SupervisorEntry]) -> None:
        """List the entries, keeping the selection on a row that exists (the first if none)."""
        if self.current is not None and self.current >= len(entries):
            self.current = len(entries) - 1 if entries else None
        if self.current is None and entries:
            self.current = 0
        widget = self.section.entries
        with self.editor.refresh_guard():
            widget.clear()
            for index, entry in enumerate(entries):
                item = QListWidgetItem(_entry_label(entry))
                item.setData(ORIGINAL_ROW, index)
                item.setToolTip(f"{entry.type} supervisor '{entry.id}'")
                if not entry.enabled:
                    item.setForeground(QColor("#9e9e9e"))
                widget.addItem(item)
            widget.setCurrentRow(-1 if self.current is None else self.current)

    def _fill_form(self, entries: list[SupervisorEntry]) -> None:
        entry = entries[self.current] if self.current is not None else None
        self.section.show_form(entry.type if entry else None)
        self._register_fields()
        if entry is None:
            return
        forms, prefix = self.section.forms, f"supervisors[{self.current}]"
        with self.editor.refresh_guard():
            self._set_text(forms.id, entry.id, f"{prefix}.id")
            _set_text(forms.name, entry.name)
            forms.enabled.setChecked(entry.enabled)
            self._fill_config(entry)

    def _fill_config(self, entry: SupervisorEntry) -> None:
        forms, config = self.section.forms, entry.config
        key = f"supervisors[{self.current}].config"
        if isinstance(config, GuardianConfig):
            _check(forms.guardian.mask_pii, config.mask_pii)
            _check(forms.guardian.apply_to, config.apply_to)
            if _lines(forms.guardian.block_keywords) != config.block_keywords:
                forms.guardian.block_keywords.setPlainText("\n".join(config.block_keywords))
        elif isinstance(config, AgentSupervisorConfig):
            agent = forms.agent
            self._set_text(agent.agent_path, config.agent_path, f"{key}.agentPath")
            _check(agent.allowed_actions, config.allowed_actions)
            _check(agent.apply_to, config.apply_to)
            agent.max_modifications.setValue(config.max_modifications)
            agent.timeout.setValue(round(config.timeout_seconds or 0))
            agent.fallback.setCurrentIndex(agent.fallback.findData(config.fallback_behavior))
        elif isinstance(config, PolicyConfig):
            forms.policy.summary.setText(_policy_summary(config))
            forms.policy.shadow_mode.setChecked(config.shadow_mode)
            self._show_shadow_cost(config)
        elif isinstance(config, CollectionConfig):
            self._set_text(
                forms.collection.export_path, config.export_path or "", f"{key}.exportPath"
            )

    def _show_shadow_cost(self, config: PolicyConfig) -> None:
        """Say beside the shadow-mode switch what it costs: read off the GUI thread (the
        supervisor agent's model, the verdicts recorded so far), once per supervisor shown."""
        document = self.editor.document
        key = (config.supervisor_agent_path, document.base_dir if document else None)
        if key == self._shadow_cost_of:
            return
        self._shadow_cost_of = key
        if document is None or not config.supervisor_agent_path:
            self.section.forms.policy.shadow_cost.setText(shadow_cost_note(None, []))
            return
        self.section.forms.policy.shadow_cost.setText("")
        name = self.editor.working.metadata.name if self.editor.working else None
        self.editor.spawn(self._shadow_cost(config, document.base_dir, name))

    async def _shadow_cost(self, config: PolicyConfig, base_dir: Any, agent: str | None) -> None:
        try:
            provider = await asyncio.to_thread(supervisor_provider, base_dir, config)
        except (AgentError, ValueError) as error:
            text = f"The supervisor cannot be read: {str(error).splitlines()[0]}"
        else:
            bridge = self.editor.bridge
            recorded = (
                [] if bridge is None else await asyncio.to_thread(bridge.engine.approvals.listed)
            )
            text = shadow_cost_note(provider, questions(recorded, agent))
        self.section.forms.policy.shadow_cost.setText(text)

    def _set_text(self, line: Any, text: str, key: str) -> None:
        """Fill a field, unless it holds input not valid yet: that is kept as typed."""
        if key not in self.editor.pending_keys():
            _set_text(line, text)

    def _register_fields(self) -> None:
        """The form's fields are flagged by the editor when their input is not valid."""
        self.editor.forget_fields("supervisors[")
        if self.current is None:
            return
        forms, prefix = self.section.forms, f"supervisors[{self.current}]"
        self.editor.register_field(f"{prefix}.id", forms.id)
        self.editor.register_field(f"{prefix}.config.agentPath", forms.agent.agent_path)
        self.editor.register_field(f"{prefix}.config.exportPath", forms.collection.export_path)

    def _set_json(self, text: str) -> None:
        self._typed_json = False
        if self.section.json.toPlainText() != text:
            with self.editor.refresh_guard():
                self.section.json.setPlainText(text)
        self._show_problems([])

    def _refresh_views(self) -> None:
        """After an edit from the list or a form: the list, the form and the JSON follow it."""
        agent = self.editor.working
        if agent is None:
            return
        self._fill_list(list(agent.supervisors))
        self._fill_form(list(agent.supervisors))
        self.problems = []
        self._set_json(supervisors_text(list(agent.supervisors)))

    # -- editing from the list and the forms ----------------------------------------------------

    def _selected(self, row: int) -> None:
        if self.editor.refreshing or self.editor.working is None:
            return
        self.current = row if row >= 0 else None
        self._fill_form(list(self.editor.working.supervisors))
        self._show_entry_in_json()

    def _show_entry_in_json(self) -> None:
        """Scroll the JSON to the selected entry, so that both show the same supervisor."""
        spans = entry_spans(self.section.json.toPlainText()) if not self.problems else []
        if self.current is None or self.current >= len(spans):
            return
        cursor = self.section.json.textCursor()
        cursor.setPosition(spans[self.current][0])
        self.section.json.setTextCursor(cursor)
        self.section.json.centerCursor()

    def _set_entry(self, name: str, value: Any) -> None:
        index = self.current
        if index is None or self.editor.refreshing:
            return
        self._edit(
            ("supervisors", index, to_camel(name)),
            lambda agent: setattr(agent.supervisors[index], name, value),
        )

    def _set_config(self, name: str, value: Any) -> None:
        index = self.current
        if index is None or self.editor.refreshing:
            return
        self._edit(
            ("supervisors", index, "config", to_camel(name)),
            lambda agent: setattr(agent.supervisors[index].config, name, value),
        )

    def _edit(
        self, location: tuple[str | int, ...], change: Callable[[Agent], None], merge: bool = True
    ) -> bool:
        if not self.editor.edit(location, change, merge):
            return False
        self._refresh_views()
        return True

    def add(self, kind: str) -> None:
        agent = self.editor.working
        if agent is None:
            return
        taken = {entry.id for entry in agent.supervisors}
        new_id = free_name(kind, taken)
        config = NEW_ENTRY_CONFIG.get(kind, {})
        entry = ENTRY.validate_python({"type": kind, "id": new_id, "config": config})
        entries = [*agent.supervisors, entry]
        previous, self.current = self.current, len(entries) - 1
        if not self._edit(("supervisors",), _replace(entries), merge=False):
            self.current = previous
            return
        self.section.forms.id.setFocus()

    def remove(self) -> None:
        agent, index = self.editor.working, self.current
        if agent is None or index is None:
            return
        kept = [entry for i, entry in enumerate(agent.supervisors) if i != index]
        self.current = min(index, len(kept) - 1) if kept else None
        self._edit(("supervisors",), _replace(kept), merge=False)

    def move(self, step: int) -> None:
        agent, index = self.editor.working, self.current
        if agent is None or index is None or not 0 <= index + step < len(agent.supervisors):
            return
        order = list(range(len(agent.supervisors)))
        order[index], order[index + step] = order[index + step], order[index]
        self.current = index + step
        self._reorder(order)

    def _dragged(self, *_: Any) -> None:
        if self.editor.refreshing:
            return
        widget = self.section.entries
        order = [widget.item(row).data(ORIGINAL_ROW) for row in range(widget.count())]
        self.current = widget.currentRow() if widget.currentRow() >= 0 else None
        self._reorder(order)

    def _reorder(self, order: list[int]) -> None:
        agent = self.editor.working
        if agent is None or order == sorted(order):
            return
        entries = [agent.supervisors[i] for i in order]
        self._edit(("supervisors",), _replace(entries), merge=False)

    def browse(self) -> None:
        base_dir = self.editor.base_dir
        start = str(base_dir) if base_dir else ""
        folder = QFileDialog.getExistingDirectory(self.section, "The supervising agent", start)
        if folder:
            relative = os.path.relpath(folder, base_dir) if base_dir else folder
            self.section.forms.agent.agent_path.setText(relative)
            self._set_config("agent_path", relative)

    # -- the JSON -------------------------------------------------------------------------------

    def _typed(self) -> None:
        if not self.editor.refreshing:
            self._typed_json = True
            self.section.status.setText("Checking…")
            self.timer.start()

    def check(self) -> None:
        """Validate the JSON; when valid, it becomes the agent's supervisors (one undo step)."""
        self.timer.stop()
        if not self._typed_json:
            return  # the JSON shows the agent as it is: nothing to apply
        text = self.section.json.toPlainText()
        entries, problems = parse_supervisors(text, self.editor.file_of(("supervisors",)))
        self._show_problems(problems)
        self._typed_json = entries is None
        agent = self.editor.working
        if entries is None or agent is None:
            return
        unchanged = supervisors_text(entries) == supervisors_text(list(agent.supervisors))
        if not unchanged and self.editor.edit(("supervisors",), _replace(entries)):
            self._fill_list(entries)
            self._fill_form(entries)

    def _show_problems(self, problems: list[AgentProblem]) -> None:
        self.problems = problems
        self.section.problems_model.setStringList([_short(problem) for problem in problems])
        self.section.problems.setVisible(bool(problems))
        self.section.status.setText(
            f"{len(problems)} problem(s) in the JSON: not applied yet; your text is kept"
            if problems
            else "Valid supervisors."
        )
        self._highlight({problem.line for problem in problems if problem.line is not None})
        self.editor.problems_changed()

    def shown(self, problem: AgentProblem) -> ShownProblem:
        """A problem of the JSON box as the editor's problems panel lists it: at its line in the
        box (not in the file, whose lines differ), leading there on a double-click."""
        text = f"Supervisors page, JSON: {_short(problem)}"
        return ShownProblem(text, "Supervisors", (), "supervisors", problem.line, problem.column)

    def go_to(self, line: int | None, column: int | None) -> None:
        if line is not None:
            self.section.json.go_to_line(line, column)

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
        if index.row() < len(self.problems):
            problem = self.problems[index.row()]
            self.go_to(problem.line, problem.column)

    # -- opening supervisor agents --------------------------------------------------------------

    def open_agent(self) -> None:
        """Ask to open the agent of the JSON entry under the cursor, or the selected one."""
        target = self._entry_agent_path() if self.section.json.hasFocus() else None
        target = target or self._selected_agent_path()
        if target is None:
            self.section.status.setText(
                "Select a supervisor that has an agent (agentPath or supervisorAgentPath)."
            )
            return
        base_dir = self.editor.base_dir
        if base_dir is not None:
            self.editor.view.open_agent_requested.emit((base_dir / target).resolve())

    def _selected_agent_path(self) -> str | None:
        agent = self.editor.working
        if agent is None or self.current is None or self.current >= len(agent.supervisors):
            return None
        entry = agent.supervisors[self.current]
        return _agent_path_of(entry.model_dump(mode="json", by_alias=True))

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


def _replace(entries: list[SupervisorEntry]) -> Callable[[Agent], None]:
    return lambda agent: setattr(agent, "supervisors", entries)


def _entry_label(entry: SupervisorEntry) -> str:
    name = entry.name or entry.id
    return f"{name} ({entry.type})" + ("" if entry.enabled else " — off")


def _policy_summary(config: PolicyConfig) -> str:
    return (
        f"{len(config.rules)} rule(s), first match wins; a call no rule matches is denied. A "
        f"person has {config.approval_timeout_seconds:g} s to decide an escalated call."
    )


def _checked(boxes: dict[str, QCheckBox]) -> list[str]:
    return [name for name, box in boxes.items() if box.isChecked()]


def _check(boxes: dict[str, QCheckBox], names: Sequence[str]) -> None:
    for name, box in boxes.items():
        box.setChecked(name in names)


def _lines(edit: Any) -> list[str]:
    return [line.strip() for line in edit.toPlainText().splitlines() if line.strip()]


def _set_text(line: Any, text: str) -> None:
    if line.text() != text:
        line.setText(text)


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
