"""The journal's group commits: tokens written in groups, everything in the order recorded,
nothing lost when a turn stops mid-stream, and a failed write reported to every event in it."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from foundry.llm.base import ChatMessage
from foundry.runtime import journal
from foundry.runtime.bus import EventBus
from foundry.runtime.journal import EventJournal
from foundry.session.events import (
    Event,
    EventBody,
    MessageAdded,
    TokenDelta,
    TurnFinished,
    TurnStarted,
)
from foundry.store import Store, TraceRecord

from .conftest import engine_over, write_agent

FOREVER_S = 3600.0  # a group window nothing in a test waits out


class Writes:
    """The store's appends, as the journal makes them: one list of kinds per commit."""

    def __init__(self, store: Store, fail: bool = False) -> None:
        self.commits: list[list[str]] = []
        self.fail = fail
        self._append_many = store.events.append_many
        store.events.append_many = self._record  # type: ignore[method-assign]

    def _record(self, events: Any, also: Any = ()) -> Any:
        if self.fail:
            raise OSError("disk full")
        self.commits.append([event.kind for event in events])
        return self._append_many(events, also=also)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store.open(f"sqlite:///{tmp_path / 'journal.sqlite3'}")
    yield opened
    opened.close()


@pytest.fixture
def s(store: Store) -> str:
    """A session of the store, for the events to belong to."""
    return store.sessions.create("agent").id


async def _journal(store: Store, bus: EventBus, window_s: float) -> EventJournal:
    return EventJournal(
        store, bus, asyncio.get_running_loop(), concurrent.futures.ThreadPoolExecutor(1), window_s
    )


def _said(text: str) -> MessageAdded:
    return MessageAdded(message=ChatMessage(role="assistant", content=text))


async def test_a_stream_is_written_in_groups_in_the_order_recorded(store: Store, s: str) -> None:
    bus, published = EventBus(), []
    bus.subscribe(published.append)
    writes = Writes(store)
    log = await _journal(store, bus, FOREVER_S)
    bodies: list[EventBody] = [TurnStarted()]
    bodies += [TokenDelta(text=f"t{n} ") for n in range(20)]
    bodies += [_said("reply"), TurnFinished(reply="reply", model_calls=1, ended_by="reply")]

    first = log.record(s, bodies[0])
    await first
    first_token = log.record(s, bodies[1])
    await first_token  # the first token of a stream is written at once
    rest = [log.record(s, body) for body in bodies[2:]]
    await asyncio.gather(*rest)

    assert writes.commits[:2] == [["turn_started"], ["token"]]
    # the other tokens waited for company and went with the events that followed them
    assert writes.commits[2:] == [["token"] * 19 + ["message", "turn_finished"]]
    assert [event.body for event in published] == bodies
    assert [event.seq for event in published] == list(range(1, len(bodies) + 1))
    stored = store.events.list(s)
    assert [(r.seq, r.kind) for r in stored] == [(e.seq, e.kind) for e in published]


async def test_a_group_of_tokens_is_written_when_its_time_is_up(store: Store, s: str) -> None:
    writes = Writes(store)
    log = await _journal(store, EventBus(), 0.01)
    await log.record(s, TokenDelta(text="a"))
    later = [log.record(s, TokenDelta(text=text)) for text in "bcd"]
    events = await asyncio.wait_for(asyncio.gather(*later), 10)  # no other event comes
    assert writes.commits == [["token"], ["token"] * 3]
    assert [event.seq for event in events] == [2, 3, 4]


async def test_draining_writes_a_group_still_gathering(store: Store, s: str) -> None:
    bus, published = EventBus(), []
    bus.subscribe(published.append)
    log = await _journal(store, bus, FOREVER_S)
    await log.record(s, TokenDelta(text="a"))
    waiting = log.record(s, TokenDelta(text="b"))
    await log.drain()
    assert waiting.done() and [e.body.text for e in published] == ["a", "b"]  # type: ignore[attr-defined]
    assert [r.payload["text"] for r in store.events.list(s)] == ["a", "b"]


async def test_a_record_kept_while_no_event_is_waiting_is_stored(store: Store) -> None:
    """A decision's trace can be the only thing in a group: its call's events went before."""
    log = await _journal(store, EventBus(), FOREVER_S)
    log.keep(
        lambda: TraceRecord(
            agent_id="a", tool="fs.read", decision="allow", resolved_level="policy", resolved_by="p"
        )
    )
    await log.drain()
    assert [trace.tool for trace in store.traces.list()] == ["fs.read"]


async def test_a_failed_write_reaches_every_event_in_it_and_none_is_published(
    store: Store, s: str
) -> None:
    bus, published = EventBus(), []
    bus.subscribe(published.append)
    writes = Writes(store)
    log = await _journal(store, bus, FOREVER_S)
    await log.record(s, TokenDelta(text="a"))
    writes.fail = True
    held = [log.record(s, TokenDelta(text=text)) for text in "bc"]
    message = log.record(s, _said("abc"))
    outcomes = await asyncio.gather(*held, message, return_exceptions=True)
    assert all(isinstance(outcome, OSError) for outcome in outcomes)
    assert len(published) == 1 and store.events.last_seq(s) == 1
    writes.fail = False
    after = await log.record(s, TurnFinished(reply="", model_calls=1, ended_by="error"))
    assert after.seq == 2 and published[-1] is after


def test_a_reply_stopped_mid_stream_keeps_every_token_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tokens held back in a group are written with the partial reply when the turn is
    stopped: the log has every token the bus showed, and the reply is exactly their text."""
    monkeypatch.setattr(journal, "TOKEN_GROUP_S", FOREVER_S)
    long_text = " ".join(f"word{i}" for i in range(200))
    turns = {"turns": [{"text": long_text}], "delay_s": 0.01}
    agent = write_agent(tmp_path / "slow", turns, servers={})
    with engine_over(f"sqlite:///{tmp_path / 'engine.sqlite3'}") as engine:
        session_id = engine.submit(engine.open_session(agent)).result()
        shown: list[Event] = []
        first = threading.Event()

        def on_event(event: Event) -> None:
            shown.append(event)
            if isinstance(event.body, TokenDelta):
                first.set()

        engine.bus.subscribe(on_event)
        turn = engine.submit(engine.send(session_id, "talk"))
        assert first.wait(10)
        engine.submit(asyncio.sleep(0.2)).result()  # more tokens arrive, held in a group
        engine.submit(engine.cancel(session_id)).result()
        result = turn.result(10)
        stored = engine.submit(engine.events(session_id)).result()

    assert result.ended_by == "cancelled"
    tokens = [e.body.text for e in stored if isinstance(e.body, TokenDelta)]
    assert len(tokens) > 1 and "".join(tokens) == result.reply
    _opening, *turn_events = stored  # the session's opening came before the subscription
    assert [(e.seq, e.kind) for e in shown] == [(e.seq, e.kind) for e in turn_events]
    kinds = [e.kind for e in stored]
    assert kinds[-2:] == ["message", "turn_finished"]
