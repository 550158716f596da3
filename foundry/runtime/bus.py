"""The event bus: every persisted event is handed to each subscriber, in order."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from foundry.session.events import Event

Subscriber = Callable[[Event], None]
log = logging.getLogger(__name__)


class EventBus:
    """Subscribers run on the engine's loop thread and must return quickly: a UI hands the event
    to its own thread (a queued Qt signal), a CLI prints it."""

    def __init__(self) -> None:
        self._subscribers: list[Subscriber] = []
        self._lock = threading.Lock()

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        """Add a subscriber; call the returned function to remove it."""
        with self._lock:
            self._subscribers.append(subscriber)

        def unsubscribe() -> None:
            with self._lock:
                if subscriber in self._subscribers:
                    self._subscribers.remove(subscriber)

        return unsubscribe

    def publish(self, event: Event) -> None:
        with self._lock:
            subscribers = list(self._subscribers)
        for subscriber in subscribers:
            try:
                subscriber(event)
            except Exception:  # a broken subscriber must not stop the engine or the others
                log.exception("event subscriber %r failed on %s", subscriber, event.kind)
