"""The journal: writes events to the store on the writer thread, in groups, then publishes them.

Events queued while a write is under way go into the next write, in one transaction (a group
commit), so a fast stream of tokens costs one commit per group rather than one per token. A
token that follows another within TOKEN_GROUP_S waits for the rest of that interval, so that a
stream is stored (and shown) in groups at most that often; any other event is written at once,
with every token queued before it. Every event is published on the bus only after the
transaction holding it has committed, and events are published in the order they were recorded.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from dataclasses import dataclass

from foundry.runtime.bus import EventBus
from foundry.session.events import Event, EventBody, MessageAdded, TokenDelta, event_payload
from foundry.store import EventRecord, MessageRecord, Store
from foundry.store.store import NewEvent

log = logging.getLogger(__name__)

# On a 2-core machine every commit (about 2 ms of CPU while the model runs), thread wake-up and
# loop hop is taken from the model's own threads: a group per 100 ms is ten commits a second
# rather than one per token, and text still appears ten times a second.
TOKEN_GROUP_S = 0.1


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
        self._lock = threading.Lock()
        self._flush_scheduled = False
        self._gathering: asyncio.TimerHandle | None = None  # a group of tokens, until it is due
        self._tokens_written_at = float("-inf")

    def record(self, session_id: str, body: EventBody) -> asyncio.Future[Event]:
        """Queue an event; the future resolves once it is stored and published. Call on the loop."""
        future: asyncio.Future[Event] = self._loop.create_future()
        with self._lock:
            self._pending.append(_Pending(session_id, body, future))
        if isinstance(body, TokenDelta):
            self._write_tokens()
        else:
            self.write_now()
        return future

    def _write_tokens(self) -> None:
        """The first token of a stream goes at once; later ones join a group until it is due."""
        if self._gathering is not None:
            return
        wait = self._tokens_written_at + self._token_group_s - self._loop.time()
        if wait > 0:
            self._gathering = self._loop.call_later(wait, self.write_now)
        else:
            self._tokens_written_at = self._loop.time()
            self._schedule_flush()

    def write_now(self) -> None:
        """Write everything queued now, a group of tokens gathering included."""
        if self._gathering is not None:
            self._gathering.cancel()
            self._gathering = None
            self._tokens_written_at = self._loop.time()
        self._schedule_flush()

    async def drain(self) -> None:
        """Return once everything recorded so far is stored and published."""
        self.write_now()
        await asyncio.wrap_future(self._writer.submit(lambda: None))  # it runs after the flush

    def _schedule_flush(self) -> None:
        with self._lock:
            schedule = bool(self._pending) and not self._flush_scheduled
            self._flush_scheduled = self._flush_scheduled or schedule
        if schedule:
            self._writer.submit(self._flush)

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
