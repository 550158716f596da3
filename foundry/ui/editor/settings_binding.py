"""SettingsBinding: connects the settings form to the working agent's settings."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic.alias_generators import to_camel
from PySide6.QtCore import QObject

from foundry.agent.models import AgentSettings, ToolPermission
from foundry.ui.editor.sections import SettingsSection

if TYPE_CHECKING:
    from foundry.ui.editor.controller import EditorController

NUMBERS = (
    "max_chat_turns",
    "max_output_tokens",
    "temperature",
    "top_p",
    "context_top_k",
    "context_top_n",
    "context_include_score",
)


class SettingsBinding(QObject):
    def __init__(self, section: SettingsSection, editor: EditorController) -> None:
        super().__init__(section)
        self.section = section
        self.editor = editor
        for name in NUMBERS:
            spin = getattr(section, name)
            editor.register_field(f"settings.{to_camel(name)}", spin)
            spin.valueChanged.connect(lambda value, name=name: self._set(name, value))
        editor.register_field("settings.model", section.model)
        section.model.textEdited.connect(lambda text: self._set("model", text.strip() or None))
        section.tool_permission.currentIndexChanged.connect(
            lambda _: self._set(
                "tool_permission", ToolPermission(section.tool_permission.currentData())
            )
        )

    def show(self, settings: AgentSettings) -> None:
        for name in NUMBERS:
            getattr(self.section, name).setValue(getattr(settings, name))
        model = settings.model_reference or ""
        if self.section.model.text() != model:
            self.section.model.setText(model)
        combo = self.section.tool_permission
        combo.setCurrentIndex(combo.findData(settings.tool_permission.value))

    def _set(self, name: str, value: Any) -> None:
        self.editor.edit(
            ("settings", to_camel(name)),
            lambda agent: setattr(agent.settings, name, value),
        )
