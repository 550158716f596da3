"""Reading the events metrics need from a store (blocking: call it off the GUI and engine loops)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from sqlmodel import col

import foundry.orchestration.events as task_events  # registers the task kinds with event_body
from foundry.session.events import Event, event_body
from foundry.store import EventRecord, Store

TASK_KINDS: tuple[str, ...] = tuple(
    cls.model_fields["kind"].default
    for cls in (
        task_events.TaskStarted,
        task_events.TaskResumed,
        task_events.PhaseStarted,
        task_events.PhaseFinished,
        task_events.AgentConsulted,
        task_events.CriterionScored,
        task_events.RetryDecided,
        task_events.RescueDecided,
        task_events.WorkerFinished,
        task_events.TaskFinished,
    )
)
SESSION_KINDS: tuple[str, ...] = (
    "session_started",
    "model_call",
    "tool_call_decided",
    "approval_requested",  # (by the L1 supervisor: one of its decisions)
    "approval_resolved",
    "supervisor_decided",
    "shadow_verdict",  # (the L1 supervisor's unseen verdict on a call a person decides)
)
METRIC_KINDS: tuple[str, ...] = TASK_KINDS + SESSION_KINDS


def to_event(record: EventRecord) -> Event:
    return Event(
        session_id=record.session_id,
        seq=record.seq,
        time=record.time,
        body=event_body(record.kind, record.payload),
    )


def load_task_log(store: Store, task_id: str) -> list[Event]:
    """A task's events and the metric events of its chats (operator, supervisor, helper, ...).

    Raises NotFound for an unknown task.
    """
    store.tasks.get(task_id)
    return task_and_chat_events(store, task_id)


def task_and_chat_events(store: Store, task_id: str) -> list[Event]:
    """The events of a session taken as a task (none if it is not one) and of the chats it
    consulted, whether or not the task has its record in the store."""
    own = [to_event(record) for record in store.events.list(task_id)]
    chats = sorted(_chat_sessions(own))
    return own + [
        to_event(record)
        for session_id in chats
        for record in store.events.list(session_id, kinds=SESSION_KINDS)
    ]


def _chat_sessions(events: Sequence[Event]) -> set[str]:
    sessions = set()
    for event in events:
        body = event.body
        if isinstance(body, task_events.AgentConsulted | task_events.WorkerFinished):
            sessions.add(body.session_id)
    return sessions - {""}


def metric_rows_after(after_id: int, batch: int) -> sa.Select[Any]:
    """Up to `batch` metric events' rows (id, session, seq, kind, time, payload) stored after
    the row `after_id`, in the order they were stored."""
    return (
        sa.select(
            col(EventRecord.id),
            col(EventRecord.session_id),
            col(EventRecord.seq),
            col(EventRecord.kind),
            col(EventRecord.time),
            col(EventRecord.payload),
        )
        .where(col(EventRecord.id) > after_id, col(EventRecord.kind).in_(METRIC_KINDS))
        .order_by(col(EventRecord.id))
        .limit(batch)
    )


def _events_after(store: Store, after_id: int, batch: int) -> tuple[int, list[Event]]:
    """Up to `batch` metric events stored after the row `after_id`, and the id of the last."""
    query = metric_rows_after(after_id, batch)
    with store.engine.connect() as connection:  # core rows: half the time of an ORM session's
        rows = connection.execute(query).all()
    events = [
        Event(session_id=session_id, seq=seq, time=time, body=event_body(kind, payload))
        for _, session_id, seq, kind, time, payload in rows
    ]
    return (rows[-1][0] or after_id if rows else after_id), events


def load_metric_events(store: Store, batch: int = 50_000) -> list[Event]:
    """Every metric event of the store, in the order of their ids (read whole: for exports;
    the dashboards read the aggregates)."""
    events: list[Event] = []
    last_id = 0
    while True:
        last_id, read = _events_after(store, last_id, batch)
        if not read:
            return events
        events.extend(read)
