"""The bridge between the engine's thread and the GUI thread: events in, calls out."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

from PySide6.QtCore import QObject, Signal

from foundry.runtime.engine import Engine
from foundry.session.events import Event

T = TypeVar("T")


class EngineBridge(QObject):
    """Re-emits every engine event as a Qt signal. The engine publishes on its own thread; a
    signal emitted there reaches slots of GUI objects queued, on the GUI thread."""

    event_arrived = Signal(object)

    def __init__(self, engine: Engine, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.engine = engine
        self._unsubscribe = engine.bus.subscribe(self.event_arrived.emit)

    async def call(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run `coroutine` on the engine's loop and await its result on the GUI's loop."""
        return await asyncio.wrap_future(self.engine.submit(coroutine))

    def close(self) -> None:
        self._unsubscribe()


def is_for(event: Event, session_id: str | None) -> bool:
    return session_id is not None and event.session_id == session_id
