"""Who a model call is for: a person waiting on a chat, or a review nothing waits for.

A model run in-process answers one request at a time; its queue serves a chat's requests before
queued reviews. The caller says which by running the call inside `as_review(...)` (reviews after
a reply do); everything else is a chat's. The values ride on a context variable, so they follow
the call into the tasks and providers it awaits without every signature carrying them.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from enum import IntEnum

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


def current_use() -> ModelUse:
    """The use of the model calls made here: a chat's unless inside `as_review`."""
    return _current.get() or _CHAT


@contextmanager
def as_review(reviewer: str) -> Iterator[None]:
    """Model calls made inside (and in tasks started inside) are `reviewer`'s review: they wait
    behind every chat's request, and a chat's request may interrupt them."""
    token = _current.set(ModelUse(priority=Priority.REVIEW, caller=f"review by {reviewer}"))
    try:
        yield
    finally:
        _current.reset(token)


@contextmanager
def as_chat(caller: str = "chat") -> Iterator[None]:
    """Model calls made inside are a chat's, named `caller` (a session's title, say)."""
    token = _current.set(ModelUse(priority=Priority.CHAT, caller=caller))
    try:
        yield
    finally:
        _current.reset(token)


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
