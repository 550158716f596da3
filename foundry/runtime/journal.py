"""The journal: writes events to the store on the writer thread, in groups, then publishes them.

Events queued while a write is under way go into the next write, in one transaction (a group
commit), so a fast stream of tokens costs one commit per group rather than one per token. Every
event is published on the bus only after the transaction holding it has committed, and events
are published in the order they were recorded. Records kept with them (a decision's trace) go
into the same transaction as the events queued at the time.

What nothing waits for (the gateway records its calls after replying) may be recorded later:
it waits for the next write, at most GATHER_S, so that fewer, larger transactions leave the
writer idle most of the time instead of taking turns with the loop for the interpreter.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from dataclasses import dataclass

from sqlmodel import SQLModel

from foundry.runtime.bus import EventBus
from foundry.session.events import Event, EventBody, MessageAdded, event_payload
from foundry.store import EventRecord, MessageRecord, Store
from foundry.store.store import NewEvent

log = logging.getLogger(__name__)
GATHER_S = 0.05  # the longest an event recorded later waits to be written


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
        self._kept: list[SQLModel] = []
        self._lock = threading.Lock()
        self._flush_scheduled = False
        self._gathering: asyncio.TimerHandle | None = None

    def record(self, session_id: str, body: EventBody) -> asyncio.Future[Event]:
        """Queue an event; the future resolves once it is stored and published. Call on the loop."""
        return self._queue(session_id, body, at_once=True)

    def record_later(self, session_id: str, body: EventBody) -> asyncio.Future[Event]:
        """`record`, written with the next write or within GATHER_S."""
        return self._queue(session_id, body, at_once=False)

    def keep(self, record: SQLModel) -> None:
        """Queue a record, written like an event recorded later; nothing waits for it (a failure
        is logged). It is stored by the time any event recorded after it is."""
        with self._lock:
            self._kept.append(record)
        self._schedule(at_once=False)

    def _queue(self, session_id: str, body: EventBody, at_once: bool) -> asyncio.Future[Event]:
        future: asyncio.Future[Event] = self._loop.create_future()
        with self._lock:
            self._pending.append(_Pending(session_id, body, future))
        self._schedule(at_once)
        return future

    async def settle(self) -> None:
        """Write what is queued now, without waiting out the gathering, and wait until it is
        stored and published. Call on the loop."""
        if self._gathering is not None:
            self._gathering.cancel()
            self._write()
        await self._loop.run_in_executor(self._writer, _nothing)  # after every write before

    def _schedule(self, at_once: bool) -> None:
        """A write is submitted once per group: at once, or when the gathering ends (cut short
        by anything recorded to be written at once)."""
        with self._lock:
            submit = not self._flush_scheduled
            self._flush_scheduled = True
        if at_once and self._gathering is not None:
            self._gathering.cancel()
            self._write()
        elif submit and at_once:
            self._writer.submit(self._flush)
        elif submit:
            self._gathering = self._loop.call_later(GATHER_S, self._write)

    def _write(self) -> None:
        self._gathering = None
        self._writer.submit(self._flush)

    def _flush(self) -> None:
        """On the writer thread: store everything queued so far, then hand it back to the loop."""
        with self._lock:
            batch, self._pending = self._pending, []
            kept, self._kept = self._kept, []
            self._flush_scheduled = False
        try:
            new_events = [_new_event(item) for item in batch]
            records = self._store.events.append_many(new_events, also=kept)
        except Exception as error:
            log.exception("could not store %d event(s) and %d record(s)", len(batch), len(kept))
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


def _nothing() -> None:
    pass


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
