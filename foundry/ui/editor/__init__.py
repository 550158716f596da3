"""The agent editor: every part of one agent, from its prompt to its tools and supervisors."""

from foundry.ui.editor.controller import EditorController
from foundry.ui.editor.create_dialog import CloneAgentDialog, CreateAgentDialog
from foundry.ui.editor.view import AgentEditor

__all__ = ["AgentEditor", "CloneAgentDialog", "CreateAgentDialog", "EditorController"]
