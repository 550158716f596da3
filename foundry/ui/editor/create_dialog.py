"""CreateAgentDialog and CloneAgentDialog: a new agent's name and where it goes."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from foundry.agent.clone import clone_agent
from foundry.agent.document import AgentDocument
from foundry.agent.problems import AgentError
from foundry.agent.templates import create_agent, new_agent


class CreateAgentDialog(QDialog):
    """Non-modal: show it with `open()`; `created` carries the new agent's document."""

    created = Signal(object)

    def __init__(
        self, parent: QWidget | None = None, folder: Path | None = None, model: str = ""
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("New agent")
        self.model = model  # the new agent's model ("": none named, the default runs it)
        self.name = QLineEdit()
        self.name.setPlaceholderText("My agent")
        self.location = QLineEdit(str(folder or Path.home()))
        self.location.setToolTip("A new folder, or a file ending in .yaml for the one-file format")
        self.browse = QPushButton("Browse…")
        self.browse.setToolTip("Choose the folder the agent goes in")
        self.policy = QCheckBox("Supervise tool calls with the default policy")
        self.policy.setChecked(True)
        self.policy.setToolTip(
            "Routine work inside the workspace runs, plainly harmful calls are refused, and a "
            "person decides the rest (docs/policy.md)"
        )
        self.error = QLabel()
        self.error.setStyleSheet("color: #c62828;")
        self.error.setWordWrap(True)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Create")
        self.buttons.accepted.connect(self.submit)
        self.buttons.rejected.connect(self.reject)
        self.browse.clicked.connect(self._browse)
        self._tasks: set[asyncio.Task[Any]] = set()
        self._lay_out()

    def _lay_out(self) -> None:
        where = QHBoxLayout()
        where.addWidget(self.location, 1)
        where.addWidget(self.browse)
        form = QFormLayout()
        form.addRow("Name:", self.name)
        form.addRow("Location:", where)
        form.addRow("", self.policy)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.error)
        layout.addWidget(self.buttons)
        self.resize(520, self.sizeHint().height())

    def target(self) -> Path:
        """The location typed; a folder that exists gets a new folder named after the agent."""
        location = Path(self.location.text().strip()).expanduser()
        name = self.name.text().strip()
        if location.is_dir() and name and location.suffix not in (".yaml", ".yml"):
            return location / _folder_name(name)
        return location

    def submit(self) -> None:
        """Create the agent (in a worker thread); errors stay in the dialog."""
        name = self.name.text().strip()
        if not name:
            self.error.setText("Give the agent a name.")
            return
        task = asyncio.ensure_future(self._create(self.target(), name))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def make(self, path: Path, name: str) -> AgentDocument:
        """Write the agent (on a worker thread); raises AgentError with what is wrong."""
        agent = new_agent(name, policy=self.policy.isChecked())
        if self.model:
            agent.settings.model = self.model
        return create_agent(path, agent)

    async def _create(self, path: Path, name: str) -> None:
        try:
            document = await asyncio.to_thread(self.make, path, name)
        except AgentError as error:
            self.error.setText("\n".join(str(problem) for problem in error.problems))
            return
        self.created.emit(document)
        self.accept()

    def _browse(self) -> None:
        dialog = QFileDialog(self, "Folder for the new agent", self.location.text())
        dialog.setFileMode(QFileDialog.FileMode.Directory)
        dialog.fileSelected.connect(self.location.setText)
        dialog.open()


class CloneAgentDialog(CreateAgentDialog):
    """A copy of the agent at `source` under a new name; by default a folder beside it."""

    def __init__(self, source: AgentDocument, parent: QWidget | None = None) -> None:
        super().__init__(parent, folder=source.path.parent)
        self.source = source
        original = source.agent.metadata.name if source.agent else source.path.stem
        self.setWindowTitle(f"Clone {original}")
        self.name.setText(f"{original} copy")
        self.name.selectAll()
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Clone")

    def make(self, path: Path, name: str) -> AgentDocument:
        return clone_agent(self.source.path, path, name)


def _folder_name(name: str) -> str:
    cleaned = "".join(c if c.isalnum() or c in "-_" else "-" for c in name.lower())
    return cleaned.strip("-") or "agent"


def open_create_agent_dialog(parent: QWidget | None = None) -> CreateAgentDialog:
    """Show the dialog without blocking; connect to `created` for the new AgentDocument."""
    dialog = CreateAgentDialog(parent)
    dialog.open()
    return dialog
