"""MetadataBinding: connects the metadata form to the working agent's name, description, version."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic.alias_generators import to_camel
from PySide6.QtCore import QObject

from foundry.agent.models import AgentMetadata
from foundry.ui.editor.sections import MetadataSection

if TYPE_CHECKING:
    from foundry.ui.editor.controller import EditorController


class MetadataBinding(QObject):
    def __init__(self, section: MetadataSection, editor: EditorController) -> None:
        super().__init__(section)
        self.section = section
        self.editor = editor
        editor.register_field("metadata.name", section.name)
        editor.register_field("metadata.version", section.version)
        section.name.textEdited.connect(lambda text: self._set("name", text.strip()))
        section.version.textEdited.connect(lambda text: self._set("version", text.strip() or None))
        section.description.textChanged.connect(
            lambda: self._set("description", section.description.toPlainText())
        )

    def show(self, metadata: AgentMetadata) -> None:
        section = self.section
        if section.name.text().strip() != metadata.name:
            section.name.setText(metadata.name)
        if section.description.toPlainText() != metadata.description:
            section.description.setPlainText(metadata.description)
        if section.version.text().strip() != (metadata.version or ""):
            section.version.setText(metadata.version or "")
        section.created.setText(metadata.created or "not recorded")
        section.last_accessed.setText(metadata.last_accessed or "not recorded")

    def _set(self, name: str, value: Any) -> None:
        self.editor.edit(
            ("metadata", to_camel(name)),
            lambda agent: setattr(agent.metadata, name, value),
        )
