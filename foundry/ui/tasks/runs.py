"""Starting task files and showing task runs as tabs: File > Run Task…, File > Task Runs…."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QMessageBox,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from foundry.agent import AgentError
from foundry.orchestration.taskfile import load_task
from foundry.ui.background import BackgroundTasks
from foundry.ui.bridge import EngineBridge
from foundry.ui.tasks.controller import TaskController
from foundry.ui.tasks.progress import TaskProgress
from foundry.ui.tasks.view import TaskView


class TaskRuns(QObject):
    """Owns the task tabs of a window."""

    open_session_requested = Signal(str)

    def __init__(self, tabs: QTabWidget, bridge: EngineBridge, say: Callable[[str], None]) -> None:
        super().__init__(tabs)
        self.tabs = tabs
        self.bridge = bridge
        self.say = say
        self.controllers: dict[str, TaskController] = {}
        self.problems: QMessageBox | None = None
        self.last_folder: Path | None = None
        self._tasks = BackgroundTasks("task run", say)

    def _spawn(self, coroutine: Any) -> None:
        self._tasks.spawn(coroutine)

    def choose_file(self) -> None:
        dialog = QFileDialog(self.tabs.window(), "Run a task file")
        dialog.setNameFilters(["Task files (*.yaml *.yml)", "All files (*)"])
        if self.last_folder is not None:
            dialog.setDirectory(str(self.last_folder))
        dialog.fileSelected.connect(lambda path: self._spawn(self.run(Path(path))))
        dialog.open()

    async def run(self, path: Path, new: bool = False) -> str | None:
        """Start (or resume) the task file at `path` and show it; None if it cannot start."""
        self.last_folder = path.parent
        try:
            task = await asyncio.to_thread(load_task, path)
            task_id = await self.bridge.call(self.bridge.engine.start_task(path, new=new))
        except AgentError as error:
            problems = "\n".join(str(problem) for problem in error.problems)
            self.problems = QMessageBox(
                QMessageBox.Icon.Warning,
                "The task file has problems",
                f"{path} cannot run:\n\n{problems}",
                parent=self.tabs.window(),
            )
            self.problems.open()
            return None
        except Exception as error:  # shown to the user, the window goes on
            self.say(f"Could not start {path.name}: {error}")
            return None
        await self.show(task_id, path, task.spec.name, task.spec.goal)
        return task_id

    async def show(self, task_id: str, path: Path, name: str, goal: str) -> TaskController:
        existing = self.controllers.get(task_id)
        if existing is not None:
            self.tabs.setCurrentWidget(existing.view)
            return existing
        view = TaskView(TaskProgress(), goal)
        controller = TaskController(view, self.bridge, task_id, path)
        controller.open_session_requested.connect(self.open_session_requested)
        controller.run_again_requested.connect(lambda file: self._spawn(self.run(file, new=True)))
        self.controllers[task_id] = controller
        self.tabs.setCurrentIndex(self.tabs.addTab(view, f"Task: {name}"))
        await controller.load()
        return controller

    def forget(self, view: QWidget | None) -> None:
        for task_id, controller in list(self.controllers.items()):
            if controller.view is view:
                controller.close()
                del self.controllers[task_id]

    def choose_run(self) -> None:
        self._spawn(self._choose_run())

    async def _choose_run(self) -> None:
        runs = await self.bridge.call(self.bridge.engine.task_runs())
        if not runs:
            self.say("No task has run yet: File > Run Task… starts one.")
            return
        picker = TaskRunPicker(runs, self.tabs.window())
        picker.chosen.connect(lambda run: self._spawn(self._show_run(run)))
        picker.open()

    async def reopen(self, task_id: str) -> bool:
        """The stored run `task_id` shown again (a restored window); False, and said, when the
        store no longer has it."""
        runs = await self.bridge.call(self.bridge.engine.task_runs())
        run = next((run for run in runs if run.id == task_id), None)
        if run is None:
            self.say(f"The task run {task_id} is no longer stored: its tab was not reopened.")
            return False
        await self._show_run(run)
        return True

    async def _show_run(self, run: Any) -> None:
        goal = await asyncio.to_thread(_goal_of, Path(run.task_file))
        await self.show(run.id, Path(run.task_file), run.name, goal)


def _goal_of(path: Path) -> str:
    try:
        return load_task(path).spec.goal
    except AgentError:
        return f"(the task file {path} cannot be read now)"


class TaskRunPicker(QDialog):
    """The task runs in the store, newest first; Enter or a double-click opens one. Non-modal:
    `chosen` carries the run."""

    chosen = Signal(object)

    def __init__(self, runs: list[Any], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Task Runs")
        self.resize(720, 420)
        self.runs = runs
        self.table = QTableWidget(len(runs), 4)
        self.table.setHorizontalHeaderLabels(["Task", "Status", "Started", "File"])
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        for row, run in enumerate(runs):
            started = run.created_at.astimezone().strftime("%Y-%m-%d %H:%M")
            for column, text in enumerate((run.name, run.status, started, run.task_file)):
                self.table.setItem(row, column, QTableWidgetItem(text))
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.resizeColumnsToContents()
        self.table.selectRow(0)
        self.table.doubleClicked.connect(self.accept)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Open | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table)
        layout.addWidget(buttons)
        self.table.setFocus(Qt.FocusReason.OtherFocusReason)

    def accept(self) -> None:
        row = self.table.currentRow()
        if 0 <= row < len(self.runs):
            self.chosen.emit(self.runs[row])
        super().accept()
