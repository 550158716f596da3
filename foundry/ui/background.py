"""BackgroundTasks: coroutines run on the GUI's loop, each owned until done, each failure logged
and shown."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any

log = logging.getLogger(__name__)


class BackgroundTasks:
    """The background work of one part of the window (`what` names it in the log).

    A failure is logged with its traceback and, when `show` is given, shown to the user (the
    status bar, say); a cancelled task is neither.
    """

    def __init__(self, what: str, show: Callable[[str], None] | None = None) -> None:
        self._what = what
        self._show = show
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, coroutine: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return task

    def cancel_all(self) -> None:
        for task in list(self._tasks):
            task.cancel()

    def __len__(self) -> int:
        return len(self._tasks)

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if task.cancelled() or task.exception() is None:
            return
        error = task.exception()
        log.error("%s failed", self._what, exc_info=error)
        if self._show is not None:
            self._show(f"Error: {error}")
