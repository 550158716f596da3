"""Waking the sessions that wait on an approval as soon as this process resolves it.

A session waiting for a person polls the store, since another process may resolve its approval.
A resolution made in this process (the app's inbox, the approvals API, the terminal, a timeout)
does not wait for that poll: once it is committed, `resolve_approval` hands the resolved approval
to the waiters of that approval at once, on whatever loop each waits.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

from foundry.store.tables import ApprovalRecord


@dataclass
class Waiting:
    """One coroutine's wait on an approval: `woken` is set, on its loop, when `resolved` holds
    the approval as this process resolved it (then the store need not be read again)."""

    loop: asyncio.AbstractEventLoop
    woken: asyncio.Event = field(default_factory=asyncio.Event)
    resolved: ApprovalRecord | None = None


class ApprovalWakeups:
    """The coroutines waiting on each approval, woken from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: dict[str, list[Waiting]] = {}

    @contextlib.contextmanager
    def waiting(self, approval_id: str) -> Iterator[Waiting]:
        """The wait on `approval_id`'s resolution in this process, while in the block."""
        entry = Waiting(asyncio.get_running_loop())
        with self._lock:
            self._waiting.setdefault(approval_id, []).append(entry)
        try:
            yield entry
        finally:
            with self._lock:
                waiters = self._waiting.get(approval_id, [])
                if entry in waiters:
                    waiters.remove(entry)
                if not waiters:
                    self._waiting.pop(approval_id, None)

    def wake(self, resolved: ApprovalRecord) -> None:
        """Hand `resolved`, committed, to the coroutines waiting on it."""
        with self._lock:
            waiters = list(self._waiting.get(resolved.id, ()))
        for entry in waiters:
            entry.resolved = resolved
            with contextlib.suppress(RuntimeError):  # its loop has closed: no one waits there
                entry.loop.call_soon_threadsafe(entry.woken.set)


APPROVAL_WAKEUPS = ApprovalWakeups()
