"""The journal: writes events to the store on the writer thread, in groups, then publishes them.

Events queued while a write is under way go into the next write, in one transaction (a group
commit), so a fast stream of tokens costs one commit per group rather than one per token. A
token that follows another within TOKEN_GROUP_S waits for the rest of that interval, so that a
stream is stored (and shown) in groups at most that often. What nothing waits for (the gateway
records its calls after replying) may be recorded later: it waits for the next write, at most
GATHER_S, so that fewer, larger transactions leave the writer idle most of the time instead of
taking turns with the loop for the interpreter. Any other event is written at once, with
everything queued before it. Records kept with the events (a decision's trace) go into the same
transaction as the events queued at the time; they are made there too, on the writer thread (a
record of the store's tables takes longer to make than many a decision takes). Every event is
published on the bus only after the transaction holding it has committed, and events are
published in the order they were recorded.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

from sqlmodel import SQLModel

from foundry.runtime.bus import EventBus
from foundry.session.events import Event, EventBody, MessageAdded, TokenDelta, event_payload
from foundry.store import EventRecord, MessageRecord, Row, Store
from foundry.store.store import NewEvent

log = logging.getLogger(__name__)

# On a 2-core machine every commit (about 2 ms of CPU while the model runs), thread wake-up and
# loop hop is taken from the model's own threads: a group per 100 ms is ten commits a second
# rather than one per token, and text still appears ten times a second.
TOKEN_GROUP_S = 0.1
# The longest an event recorded later waits to be written. A write holds the interpreter for
# several ms (the ORM, the metric aggregates) whatever it writes, and the loop then waits for it
# at each step of a call (a read, a write, a wake-up): at 50 ms an allowed call through the
# gateway took about twice as long at the median as at 250 ms (bench/gateway.py).
GATHER_S = 0.25


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
        token_group_s: float | None = None,
    ) -> None:
        self._store = store
        self._bus = bus
        self._loop = loop
        self._writer = writer
        self._token_group_s = TOKEN_GROUP_S if token_group_s is None else token_group_s
        self._pending: list[_Pending] = []
        self._kept: list[Callable[[], SQLModel | Row]] = []
        self._lock = threading.Lock()
        self._flush_scheduled = False
        self._gathering: asyncio.TimerHandle | None = None  # a group, until it is due
        self._tokens_written_at = float("-inf")

    def record(self, session_id: str, body: EventBody) -> asyncio.Future[Event]:
        """Queue an event; the future resolves once it is stored and published. Call on the loop."""
        if not isinstance(body, TokenDelta):
            return self._queue(session_id, body, 0.0)
        wait = max(0.0, self._tokens_written_at + self._token_group_s - self._loop.time())
        if not wait:  # the first token of a stream, or the first after a pause: a group begins
            self._tokens_written_at = self._loop.time()
        return self._queue(session_id, body, wait)

    def record_later(self, session_id: str, body: EventBody) -> asyncio.Future[Event]:
        """`record`, written with the next write or within GATHER_S."""
        return self._queue(session_id, body, GATHER_S)

    def keep(self, build: Callable[[], SQLModel | Row]) -> None:
        """Queue a record, made by `build` when it is written like an event recorded later;
        nothing waits for it (a failure is logged). It is stored by the time any event recorded
        after it is."""
        with self._lock:
            self._kept.append(build)
        self._write_within(GATHER_S)

    async def drain(self) -> None:
        """Return once everything recorded so far is stored and published. Call on the loop."""
        self.write_now()
        await asyncio.wrap_future(self._writer.submit(_nothing))  # it runs after the flush

    def write_now(self) -> None:
        """Write everything queued now, a group gathering included."""
        if self._gathering is not None:
            self._gathering.cancel()
            self._gathering = None
            self._tokens_written_at = self._loop.time()
        with self._lock:
            submit = bool(self._pending or self._kept) and not self._flush_scheduled
            self._flush_scheduled = self._flush_scheduled or submit
        if submit:
            self._writer.submit(self._flush)

    def _queue(self, session_id: str, body: EventBody, wait: float) -> asyncio.Future[Event]:
        future: asyncio.Future[Event] = self._loop.create_future()
        with self._lock:
            self._pending.append(_Pending(session_id, body, future))
        self._write_within(wait)
        return future

    def _write_within(self, wait: float) -> None:
        """A write is due within `wait` seconds: now, or when a group is due (cut short by
        anything due sooner)."""
        if wait <= 0:
            self.write_now()
            return
        due = self._loop.time() + wait
        if self._gathering is not None:
            if self._gathering.when() <= due:
                return
            self._gathering.cancel()
        self._gathering = self._loop.call_at(due, self.write_now)

    def _flush(self) -> None:
        """On the writer thread: store everything queued so far, then hand it back to the loop."""
        with self._lock:
            batch, self._pending = self._pending, []
            kept, self._kept = self._kept, []
            self._flush_scheduled = False
        try:
            new_events = [_new_event(item) for item in batch]
            records = self._store.events.append_many(new_events, also=[make() for make in kept])
        except Exception as error:
            log.exception("could not store %d event(s) and %d record(s)", len(batch), len(kept))
            self._loop.call_soon_threadsafe(self._fail, batch, error)
            return
        self._loop.call_soon_threadsafe(self._deliver, batch, records)

    def _deliver(self, batch: list[_Pending], records: list[EventRecord]) -> None:
        for item, record in zip(batch, records, strict=True):
            # built from what was just validated and stored: no second validation per token
            event = Event.model_construct(
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
