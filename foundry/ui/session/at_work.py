"""The supervisors reviewing a session's messages right now, as the line the status bar shows."""

from __future__ import annotations

import time
from dataclasses import dataclass

from foundry.session.events import (
    EventBody,
    SupervisorDecided,
    SupervisorDeferred,
    SupervisorStarted,
)

Key = tuple[str, str, int]  # supervisor id, direction, message index


@dataclass(frozen=True)
class _Review:
    name: str
    holds: bool
    since: float  # time.monotonic() when its start arrived


class SupervisorsAtWork:
    """Fed with a session's live events; `line()` names each supervisor at work and how long
    it has been at it, the ones the message waits for first."""

    def __init__(self) -> None:
        self._reviews: dict[Key, _Review] = {}

    def apply(self, body: EventBody, now: float | None = None) -> None:
        if isinstance(body, SupervisorStarted):
            since = time.monotonic() if now is None else now
            key = (body.supervisor_id, body.direction, body.message_index)
            self._reviews[key] = _Review(body.supervisor, body.holds, since)
        elif isinstance(body, SupervisorDecided | SupervisorDeferred):
            self._reviews.pop((body.supervisor_id, body.direction, body.message_index), None)

    def __bool__(self) -> bool:
        return bool(self._reviews)

    def line(self, now: float | None = None) -> str:
        """ "Guardian reviewing… 0.2 s · Conversation architect reviewing… 3.2 s", or ""."""
        moment = time.monotonic() if now is None else now
        reviews = sorted(self._reviews.values(), key=lambda r: (not r.holds, r.since))
        return " · ".join(f"{r.name} reviewing… {moment - r.since:.1f} s" for r in reviews)
