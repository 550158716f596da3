"""Connects a TaskView to the engine: the task's events in, stop and run again out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QTimer, QUrl, Signal
from PySide6.QtGui import QDesktopServices

from foundry.session.events import Event
from foundry.ui.background import BackgroundTasks
from foundry.ui.bridge import EngineBridge
from foundry.ui.tasks.view import TaskView

REFRESH_MS = 250


class TaskController(QObject):
    """Follows one task run. Its stored events are read first, then live ones (by number, so
    none is shown twice or missed however the two overlap)."""

    open_session_requested = Signal(str)
    run_again_requested = Signal(object)  # the task file's Path
    failed = Signal(str)

    def __init__(self, view: TaskView, bridge: EngineBridge, task_id: str, task_file: Path) -> None:
        super().__init__(view)
        self.view = view
        self.bridge = bridge
        self.task_id = task_id
        self.task_file = task_file
        self._last_seq = 0
        self._early: list[Event] = []
        self._loaded = False
        self._tasks = BackgroundTasks("task view action", view.status.setText)
        bridge.event_arrived.connect(self._on_event)
        view.stop_requested.connect(lambda: self._spawn(self.stop()))
        view.run_again_requested.connect(lambda: self.run_again_requested.emit(self.task_file))
        view.open_workspace_requested.connect(self._open_workspace)
        view.open_session_requested.connect(self.open_session_requested)
        self._timer = QTimer(self)  # the elapsed time and the tables, a few times a second
        self._timer.setInterval(REFRESH_MS)
        self._timer.timeout.connect(self._tick)
        self._timer.start()

    def _running(self) -> bool:
        return self.view.progress.summary.status in ("running", "starting")

    def _tick(self) -> None:
        self.view.refresh()
        if not self._running():  # a finished task's elapsed time and tables no longer change
            self._timer.stop()

    def _spawn(self, coroutine: Any) -> None:
        self._tasks.spawn(coroutine)

    async def load(self) -> None:
        history = await self.bridge.call(self.bridge.engine.events(self.task_id))
        for event in [*history, *self._early]:
            self._apply(event)
        self._early.clear()
        self._loaded = True
        self.view.refresh()

    def _on_event(self, event: Event) -> None:
        if event.session_id != self.task_id:
            return
        if not self._loaded:
            self._early.append(event)
            return
        self._apply(event)

    def _apply(self, event: Event) -> None:
        if event.seq <= self._last_seq:
            return
        self._last_seq = event.seq
        self.view.progress.apply(event)
        if event.kind == "task_finished":
            self.view.refresh()
        elif self._running() and not self._timer.isActive():  # resumed
            self._timer.start()

    async def stop(self) -> None:
        await self.bridge.call(self.bridge.engine.cancel_task(self.task_id))
        summary = self.view.progress.summary
        if summary.status == "running":
            summary.status = "stopped"
            summary.reason = "stopped by you; run it again to resume from its last finished phase"
        self.view.refresh()

    def _open_workspace(self) -> None:
        workspace = self.view.progress.summary.workspace
        if workspace:
            QDesktopServices.openUrl(QUrl.fromLocalFile(workspace))

    def close(self) -> None:
        self._timer.stop()
        self.bridge.event_arrived.disconnect(self._on_event)
