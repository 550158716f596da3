"""Reading the metric events back from a real SQLite store."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from sqlmodel import Session

from foundry.metrics import load_metric_events, load_task_log, task_metrics
from foundry.session.events import Event, event_payload
from foundry.store import EventRecord, NotFound, Store

from .fixture_log import TASK, endpoint_log, full_log
from .test_task_metrics import EXPECTED


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(f"sqlite:///{tmp_path / 'metrics.sqlite3'}") as opened:
        yield opened


def write(store: Store, events: Sequence[Event], rename: dict[str, str] | None = None) -> None:
    """Store events with their own times (the journal would stamp them with the time of writing)."""
    rename = rename or {}
    with Session(store.engine) as session:
        records = [
            EventRecord(
                session_id=rename.get(event.session_id, event.session_id),
                seq=event.seq,
                kind=event.kind,
                time=event.time,
                payload=event_payload(event.body),
            )
            for event in events
        ]
        session.add_all(records)
        for hook in store.events.hooks:  # as an append runs them, in the same transaction
            hook(session, records)
        session.commit()


def test_a_task_log_read_from_the_store_gives_the_same_metrics(store: Store) -> None:
    task = store.tasks.create("add-endpoint", "tasks/add-endpoint.yaml", "/tmp/ws")
    write(store, full_log(), rename={TASK: task.id})
    events = load_task_log(store, task.id)
    assert task_metrics(events) == EXPECTED.model_copy(update={"task_id": task.id})
    chats = {event.session_id for event in events} - {task.id}
    assert chats == {"chat-sup", "chat-op", "chat-help"}  # the chats it consulted, no others
    assert "token" not in {event.kind for event in events}


def test_an_unknown_task_is_not_found(store: Store) -> None:
    with pytest.raises(NotFound, match="no task with id 'nope'"):
        load_task_log(store, "nope")


def test_the_metric_events_are_read_whole_in_batches(store: Store) -> None:
    endpoint = endpoint_log()
    write(store, endpoint[:20])
    write(store, endpoint[20:])
    read = load_metric_events(store, batch=7)
    stored = sorted(read, key=lambda event: (event.session_id, event.seq))
    expected = sorted(  # the token is left out
        (event for event in endpoint if event.kind != "token"),
        key=lambda event: (event.session_id, event.seq),
    )
    assert stored == expected
    assert load_metric_events(store) == read
