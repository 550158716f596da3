"""The Agent panel docked at the window's left: the current agent, or why it cannot be used."""

from __future__ import annotations

import html
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QDockWidget, QLabel, QWidget

if TYPE_CHECKING:
    from foundry.agent import AgentProblem
    from foundry.agent.document import AgentDocument

NO_AGENT = "Open an agent to start (Ctrl+O)."
LOADING = "Loading the engine…"
BUILT_IN_MODEL = "embedded:smollm2"  # foundry.llm.registry's default, named without importing it


def agent_name(document: AgentDocument) -> str:
    """The name in the agent's file; its file's name while it cannot be read."""
    return document.agent.metadata.name if document.agent else document.path.name


def describe_agent(
    document: AgentDocument, default_model: str = "", failed_servers: dict[str, str] | None = None
) -> str:
    """The agent's name, model (the default, when it names none), counts and supervisors, and
    the tool servers of the chat shown that failed, with why."""
    agent = document.agent
    assert agent is not None
    model = agent.settings.model_reference or f"{default_model or BUILT_IN_MODEL} (the default)"
    supervisors = "".join(
        f"<li>{entry.name or entry.id} <i>({entry.type})</i></li>" for entry in agent.supervisors
    )
    return (
        f"<h3>{agent.metadata.name}</h3><p>{agent.metadata.description}</p>"
        f"<p><b>Model:</b> {html.escape(model)}<br>"
        f"<b>Rules:</b> {len(agent.rules)} · <b>References:</b> {len(agent.references)} · "
        f"<b>Tool servers:</b> {len(agent.mcp_servers)}</p>"
        f"{_failures(failed_servers or {})}"
        f"<p><b>Supervisors</b></p><ul>{supervisors or '<li>none</li>'}</ul>"
        f"<p style='color:#757575'>{document.path}</p>"
    )


def _failures(failed_servers: dict[str, str]) -> str:
    items = "".join(
        f"<li><b>{html.escape(name)}</b>: {html.escape(why)}</li>"
        for name, why in failed_servers.items()
    )
    if not items:
        return ""
    heading = "<p style='color:#c62828'>Tool servers that did not start in this chat:</p>"
    return f"{heading}<ul>{items}</ul>"


def describe_problems(path: Path, problems: list[AgentProblem], editable: bool = True) -> str:
    """The problems of an agent that cannot be used, as `foundry validate` prints them."""
    items = "".join(f"<li>{html.escape(str(problem))}</li>" for problem in problems)
    then = (
        "<p><a href='edit'>Open it in the editor to fix it</a> (Ctrl+E): it opens at the "
        "problem, and the agent can be used once saved. New Chat (Ctrl+N) reads it again "
        "after a fix made elsewhere.</p>"
        if editable
        else "<p>Open another agent (Ctrl+O).</p>"
    )
    return (
        f"<h3>This agent cannot be used</h3><p style='color:#757575'>{html.escape(str(path))}</p>"
        "<p>These problems stop it (<code>foundry validate</code> lists the same):</p>"
        f"<ul>{items}</ul>{then}"
    )


def describe_engine_failure(error: Exception) -> str:
    return (
        "<h3>The engine could not start</h3>"
        f"<p>{html.escape(str(error))}</p>"
        "<p><code>foundry doctor</code> checks the installation and says how to fix it.</p>"
    )


class AgentDock(QDockWidget):
    """The dock and its panel (a rich-text label); `fix_requested` is the panel's link to open
    a broken agent in the editor."""

    fix_requested = Signal()

    def __init__(self, parent: QWidget) -> None:
        super().__init__("Agent", parent)
        self.setObjectName("agent-dock")
        self.panel = QLabel(LOADING)
        self.panel.setWordWrap(True)
        self.panel.setAlignment(Qt.AlignmentFlag.AlignTop)
        self.panel.setMargin(10)
        self.panel.linkActivated.connect(self._link)
        self.setWidget(self.panel)

    def _link(self, link: str) -> None:
        if link == "edit":
            self.fix_requested.emit()

    def show_agent(
        self,
        document: AgentDocument,
        default_model: str = "",
        failed_servers: dict[str, str] | None = None,
    ) -> None:
        self.panel.setText(describe_agent(document, default_model, failed_servers))

    def show_problems(self, path: Path, problems: list[AgentProblem], editable: bool) -> None:
        self.panel.setText(describe_problems(path, problems, editable=editable))

    def show_no_agent(self) -> None:
        self.panel.setText(NO_AGENT)

    def show_engine_failure(self, error: Exception) -> None:
        self.panel.setText(describe_engine_failure(error))
