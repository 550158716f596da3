"""Waking the sessions that wait on an approval as soon as this process resolves it.

A session waiting for a person polls the store, since another process may resolve its approval.
A resolution made in this process (the app's inbox, the approvals API, the terminal, a timeout)
does not wait for that poll: `resolve_approval` wakes the waiters of that approval at once, on
whatever loop each waits.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator


class ApprovalWakeups:
    """The events of the coroutines waiting on each approval, set from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: dict[str, list[tuple[asyncio.AbstractEventLoop, asyncio.Event]]] = {}

    @contextlib.contextmanager
    def waiting(self, approval_id: str) -> Iterator[asyncio.Event]:
        """An event set when `approval_id` is resolved in this process, while in the block."""
        entry = (asyncio.get_running_loop(), asyncio.Event())
        with self._lock:
            self._waiting.setdefault(approval_id, []).append(entry)
        try:
            yield entry[1]
        finally:
            with self._lock:
                waiters = self._waiting.get(approval_id, [])
                if entry in waiters:
                    waiters.remove(entry)
                if not waiters:
                    self._waiting.pop(approval_id, None)

    def wake(self, approval_id: str) -> None:
        with self._lock:
            waiters = list(self._waiting.get(approval_id, ()))
        for loop, event in waiters:
            with contextlib.suppress(RuntimeError):  # its loop has closed: no one waits there
                loop.call_soon_threadsafe(event.set)


APPROVAL_WAKEUPS = ApprovalWakeups()
