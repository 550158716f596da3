"""Who a model call is for: a person waiting on a chat, or a review nothing waits for.

A model run in-process answers one request at a time; its queue serves a chat's requests before
queued reviews. The caller says which by running the call inside `as_review(...)` (reviews after
a reply do); everything else is a chat's. The values ride on a context variable, so they follow
the call into the tasks and providers it awaits without every signature carrying them.

Waiting for the model's turn is not working: a call's limits leave out its waits in the queue
(`WaitClock`), and `within_limit` gives a review its time limit for the review's own work.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Awaitable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from enum import IntEnum
from typing import TypeVar

from pydantic import BaseModel, ConfigDict


class Priority(IntEnum):
    """Lower goes first."""

    CHAT = 0
    REVIEW = 1


class ModelUse(BaseModel):
    """What one queued or running model call is for: its priority and, in words, whose it is
    (`"chat"`, `"review by Conversation architect"`)."""

    model_config = ConfigDict(frozen=True)

    priority: Priority = Priority.CHAT
    caller: str = "chat"

    @property
    def is_review(self) -> bool:
        return self.priority is Priority.REVIEW


_CHAT = ModelUse()
_current: ContextVar[ModelUse | None] = ContextVar("foundry_model_use", default=None)


class WaitClock:
    """How long one model call has waited for its turn in a model's queue: the queue says when
    it waits and when it runs; a time limit reads `waited()` to leave the wait out (any thread)."""

    def __init__(self, waiting: bool = True) -> None:
        self._lock = threading.Lock()
        self._total = 0.0
        self._since = time.monotonic() if waiting else None  # a queued call starts waiting

    def waiting(self) -> None:
        with self._lock:
            if self._since is None:
                self._since = time.monotonic()

    def running(self) -> None:
        with self._lock:
            if self._since is not None:
                self._total += time.monotonic() - self._since
                self._since = None

    def lost(self, run_started_at: float) -> None:
        """The run begun at `run_started_at` (monotonic) was stopped for another call's: it
        counts as waiting, and the call waits again from now."""
        with self._lock:
            self._total += time.monotonic() - run_started_at
            self._since = time.monotonic()

    def waited(self) -> float:
        with self._lock:
            now = 0.0 if self._since is None else time.monotonic() - self._since
            return self._total + now


class QueueWaits:
    """The wait clocks of the model calls made inside `counting_queue_waits`."""

    def __init__(self) -> None:
        self._clocks: list[WaitClock] = []

    def clock(self) -> WaitClock:
        """A clock for one more call, counted here."""
        clock = WaitClock()
        self._clocks.append(clock)
        return clock

    def waited(self) -> float:
        """How long the calls have waited for their turn, all told."""
        return sum(clock.waited() for clock in self._clocks)


_waits: ContextVar[QueueWaits | None] = ContextVar("foundry_queue_waits", default=None)


def current_use() -> ModelUse:
    """The use of the model calls made here: a chat's unless inside `as_review`."""
    return _current.get() or _CHAT


@contextmanager
def as_review(reviewer: str) -> Iterator[None]:
    """Model calls made inside (and in tasks started inside) are `reviewer`'s review: they wait
    behind every chat's request, and a chat's request may interrupt them."""
    with _set(_current, ModelUse(priority=Priority.REVIEW, caller=f"review by {reviewer}")):
        yield


@contextmanager
def counting_queue_waits(waits: QueueWaits) -> Iterator[None]:
    """Model calls made inside count their waits for a model's turn in `waits`, so that a time
    limit around them can leave the waits out: a review's limit is for the review, not for the
    chats the model served first."""
    with _set(_waits, waits):
        yield


class LimitExpired(TimeoutError):
    """`within_limit`'s limit passed (a timeout of the work's own is another TimeoutError)."""


T = TypeVar("T")
V = TypeVar("V")


async def within_limit(work: Awaitable[T], limit_s: float) -> T:
    """`work`'s result within `limit_s` seconds, not counting its model calls' waits for their
    turn in a model's queue; past that it is cancelled and LimitExpired raised."""
    waits = QueueWaits()
    with counting_queue_waits(waits):
        task = asyncio.ensure_future(work)  # the task takes the counting context with it
    loop = asyncio.get_running_loop()
    started = loop.time()
    try:
        while (left := started + limit_s + waits.waited() - loop.time()) > 0:
            done, _ = await asyncio.wait({task}, timeout=left)
            if done:
                return task.result()
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
    raise LimitExpired


def wait_clock() -> WaitClock:
    """The wait clock of a model call made here: counted by `counting_queue_waits` if inside."""
    waits = _waits.get()
    return waits.clock() if waits is not None else WaitClock()


@contextmanager
def as_chat(caller: str = "chat") -> Iterator[None]:
    """Model calls made inside are a chat's, named `caller` (a session's title, say)."""
    with _set(_current, ModelUse(priority=Priority.CHAT, caller=caller)):
        yield


@contextmanager
def _set(variable: ContextVar[V], value: V) -> Iterator[None]:
    token = variable.set(value)
    try:
        yield
    finally:
        variable.reset(token)


class QueueState(BaseModel):
    """A model's queue at one moment: the call it is running and the calls waiting, in the
    order they will run. A status line reads it: "waiting for the model: a review by ... is
    using it", or "2 requests ahead of yours"."""

    model_config = ConfigDict(frozen=True)

    running: ModelUse | None = None
    waiting: tuple[ModelUse, ...] = ()

    @property
    def busy(self) -> bool:
        return self.running is not None
