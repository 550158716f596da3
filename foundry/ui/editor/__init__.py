"""The agent editor: prompt, settings, rules, references and supervisors of one agent."""

from foundry.ui.editor.controller import EditorController
from foundry.ui.editor.create_dialog import CreateAgentDialog
from foundry.ui.editor.view import AgentEditor

__all__ = ["AgentEditor", "CreateAgentDialog", "EditorController"]
