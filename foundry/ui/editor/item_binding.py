"""ItemsBinding: connects a rules or references section to the working agent."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pydantic.alias_generators import to_camel
from PySide6.QtCore import QItemSelection, QObject

from foundry.agent.models import Agent, ContextItem, IncludeMode, Reference, Rule
from foundry.agent.names import free_name
from foundry.ui.editor.sections import ItemsSection

if TYPE_CHECKING:
    from foundry.ui.editor.controller import EditorController


class ItemsBinding(QObject):
    """The section's table and form for `field` ("rules" or "references") of the agent."""

    def __init__(self, section: ItemsSection, field: str, editor: EditorController) -> None:
        super().__init__(section)
        self.section = section
        self.field = field
        self.editor = editor
        self.current: int | None = None
        self.item_class: type[ContextItem] = Rule if field == "rules" else Reference
        section.table.selectionModel().selectionChanged.connect(self._selected)
        section.new.clicked.connect(self.add)
        section.new_shortcut.activated.connect(self.add)
        section.delete.clicked.connect(self.delete)
        section.name.textEdited.connect(lambda text: self._set("name", text))
        section.description.textEdited.connect(lambda text: self._set("description", text))
        section.priority.valueChanged.connect(lambda value: self._set("priority_level", value))
        section.enabled.toggled.connect(lambda value: self._set("enabled", value))
        section.include.currentIndexChanged.connect(
            lambda _: self._set("include", IncludeMode(section.include.currentData()))
        )
        section.text.source.textChanged.connect(
            lambda: self._set("text", section.text.source.toPlainText())
        )
        section.show_form(False)

    def items(self, agent: Agent) -> list[ContextItem]:
        return list(getattr(agent, self.field))

    def show(self, agent: Agent, fill_form: bool) -> None:
        """Show the items of `agent`, keeping the selection; refill the form when asked."""
        if self.current is not None and self.current >= len(self.items(agent)):
            self.current = None
        self.section.model.set_items(self.items(agent))
        row = self.section.model.row_of(self.current) if self.current is not None else None
        if row is None:
            self.section.table.clearSelection()
        else:
            self.section.table.selectRow(row)
        self.section.show_form(self.current is not None)
        self._register_fields()
        if fill_form and self.current is not None:
            self._fill(self.items(agent)[self.current])

    def _register_fields(self) -> None:
        """The selected item's name is flagged by the editor while its input is not valid."""
        self.editor.forget_fields(f"{self.field}[")
        if self.current is not None:
            self.editor.register_field(f"{self.field}[{self.current}].name", self.section.name)

    def _fill(self, item: ContextItem) -> None:
        section = self.section
        pending = f"{self.field}[{self.current}].name" in self.editor.pending_keys()
        if section.name.text() != item.name and not pending:
            section.name.setText(item.name)
        if section.description.text() != item.description:
            section.description.setText(item.description)
        section.priority.setValue(item.priority_level)
        section.enabled.setChecked(item.enabled)
        section.include.setCurrentIndex(section.include.findData(item.include.value))
        section.text.set_text(item.text)

    def select_row(self, row: int) -> None:
        self.section.table.selectRow(row)

    def _selected(self, _selected: QItemSelection, _deselected: QItemSelection) -> None:
        if self.editor.refreshing or self.editor.working is None:
            return
        rows = self.section.table.selectionModel().selectedRows()
        self.current = self.section.model.agent_index(rows[0].row()) if rows else None
        with self.editor.refresh_guard():
            self.show(self.editor.working, fill_form=True)

    def _set(self, name: str, value: Any) -> None:
        index = self.current
        if index is None or self.editor.refreshing:
            return
        self.editor.edit(
            (self.field, index, to_camel(name)),
            lambda agent: setattr(getattr(agent, self.field)[index], name, value),
        )

    def add(self) -> None:
        agent = self.editor.working
        if agent is None:
            return
        names = {item.name for item in self.items(agent)}
        item = self.item_class(
            name=free_name(f"new-{self.section.noun}", names),
            description="",
            priority_level=500,
            enabled=True,
            include=IncludeMode.MANUAL,
            text="",
        )
        previous, self.current = self.current, len(names)
        if not self.editor.edit((self.field,), self._replace([*self.items(agent), item]), False):
            self.current = previous
            return
        with self.editor.refresh_guard():
            self.show(self.editor.working or agent, fill_form=True)
        self.section.name.setFocus()
        self.section.name.selectAll()

    def delete(self) -> None:
        agent, index = self.editor.working, self.current
        if agent is None or index is None:
            return
        kept = [item for i, item in enumerate(self.items(agent)) if i != index]
        self.current = None
        self.editor.edit((self.field,), self._replace(kept), False)

    def _replace(self, items: list[ContextItem]) -> Callable[[Agent], None]:
        return lambda agent: setattr(agent, self.field, items)
