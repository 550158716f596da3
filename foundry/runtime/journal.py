"""The journal: writes events to the store on the writer thread, in groups, then publishes them.

Events queued while a write is under way go into the next write, in one transaction (a group
commit), so a fast stream of tokens costs one commit per group rather than one per token. Every
event is published on the bus only after the transaction holding it has committed, and events
are published in the order they were recorded.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from dataclasses import dataclass

from foundry.runtime.bus import EventBus
from foundry.session.events import Event, EventBody, MessageAdded, event_payload
from foundry.store import EventRecord, MessageRecord, Store
from foundry.store.store import NewEvent

log = logging.getLogger(__name__)


@dataclass
class _Pending:
    session_id: str
    body: EventBody
    future: asyncio.Future[Event]


class EventJournal:
    def __init__(
        self,
        store: Store,
        bus: EventBus,
        loop: asyncio.AbstractEventLoop,
        writer: concurrent.futures.Executor,
    ) -> None:
        self._store = store
        self._bus = bus
        self._loop = loop
        self._writer = writer
        self._pending: list[_Pending] = []
        self._lock = threading.Lock()
        self._flush_scheduled = False

    def record(self, session_id: str, body: EventBody) -> asyncio.Future[Event]:
        """Queue an event; the future resolves once it is stored and published. Call on the loop."""
        future: asyncio.Future[Event] = self._loop.create_future()
        with self._lock:
            self._pending.append(_Pending(session_id, body, future))
            schedule = not self._flush_scheduled
            self._flush_scheduled = True
        if schedule:
            self._writer.submit(self._flush)
        return future

    def _flush(self) -> None:
        """On the writer thread: store everything queued so far, then hand it back to the loop."""
        with self._lock:
            batch, self._pending = self._pending, []
            self._flush_scheduled = False
        try:
            records = self._store.events.append_many([_new_event(item) for item in batch])
        except Exception as error:
            log.exception("could not store %d event(s)", len(batch))
            self._loop.call_soon_threadsafe(self._fail, batch, error)
            return
        self._loop.call_soon_threadsafe(self._deliver, batch, records)

    def _deliver(self, batch: list[_Pending], records: list[EventRecord]) -> None:
        for item, record in zip(batch, records, strict=True):
            event = Event(
                session_id=item.session_id, seq=record.seq, time=record.time, body=item.body
            )
            self._bus.publish(event)
            if not item.future.done():
                item.future.set_result(event)

    def _fail(self, batch: list[_Pending], error: Exception) -> None:
        for item in batch:
            if not item.future.done():
                item.future.set_exception(error)


def _new_event(item: _Pending) -> NewEvent:
    message = None
    if isinstance(item.body, MessageAdded):
        said = item.body.message
        message = MessageRecord(
            session_id=item.session_id,
            seq=0,
            role=said.role,
            content=said.content,
            data=said.model_dump(mode="json", exclude={"role", "content"}),
        )
    return NewEvent(item.session_id, item.body.kind, event_payload(item.body), message)
