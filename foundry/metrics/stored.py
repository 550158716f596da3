"""The metric aggregates in the store: folded in the transaction that appends the events, read by
the dashboards, rebuilt from the whole log on demand (`foundry metrics rebuild`)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from pydantic import ValidationError
from sqlalchemy.dialects import postgresql, sqlite
from sqlmodel import Session, col

from foundry.metrics.aggregates import (
    EVERY_AGENT,
    RESOLUTIONS,
    BinKey,
    Folding,
    SessionLink,
    Tally,
    TaskRow,
)
from foundry.metrics.loader import METRIC_KINDS, TASK_KINDS, metric_rows_after
from foundry.session.events import Event, event_body
from foundry.store import EventRecord, Store
from foundry.store.tables import (
    MetricBinRecord,
    MetricSessionRecord,
    MetricsStateRecord,
    MetricTaskRecord,
)

log = logging.getLogger(__name__)
_METRIC_KINDS = frozenset(METRIC_KINDS)
_TASK_KINDS = frozenset(TASK_KINDS)
_CHUNK = 500  # ids per IN (...): well under any bound-parameter limit
REBUILD_BATCH = 20_000
TASK_CHOICES = 500  # tasks a filter list offers: more would be no list to choose from


@dataclass(frozen=True)
class MetricsState:
    version: int  # grows with every transaction that changes the aggregates
    events: int  # metric events folded in
    tasks: int  # tasks started
    complete: bool  # false until a rebuild after an upgrade from a store without aggregates


def keep_aggregates(store: Store) -> Store:
    """Fold every event `store` appends from now on into its aggregates, in the same transaction."""
    store.events.add_hook(fold_appended)
    return store


def fold_appended(session: Session, records: list[EventRecord]) -> None:
    """The append hook. The events matter more than their figures: if folding fails, the
    aggregates are marked incomplete (`foundry metrics rebuild` mends them) and the events are
    stored all the same."""
    events = [
        event
        for record in records
        if record.kind in _METRIC_KINDS
        for event in _parsed(
            record.session_id, record.seq, record.kind, record.time, record.payload
        )
    ]
    if not events:
        return
    try:
        with _savepoint(session):
            fold_stored(session, events)
    except Exception:
        log.exception("the metric aggregates missed %d events; they need a rebuild", len(events))
        state = MetricsStateRecord.__table__  # type: ignore[attr-defined]
        session.execute(sa.update(state).values(complete=False))


@contextmanager
def _savepoint(session: Session) -> Iterator[None]:
    """On PostgreSQL a failed statement spoils the whole transaction unless it ran inside a
    savepoint; SQLite undoes just the statement (and pysqlite's savepoints need care)."""
    if session.get_bind().dialect.name != "postgresql":
        yield
        return
    with session.begin_nested():
        yield


def _parsed(
    session_id: str, seq: int, kind: str, time: datetime, payload: dict[str, Any]
) -> list[Event]:
    """The event, or nothing for a payload its type cannot read (it is stored all the same)."""
    try:
        body = event_body(kind, payload)
    except ValidationError:
        log.warning("metrics skip the unreadable %s event %s#%s", kind, session_id, seq)
        return []
    return [Event(session_id=session_id, seq=seq, time=time, body=body)]


def fold_stored(session: Session, events: Sequence[Event]) -> None:
    """Add what `events` (stored in this transaction or before) change to the aggregates."""
    _advance(session, len(events))  # first: every folding writer waits here for the one before
    session.flush()
    chats = {event.session_id for event in events} | {
        getattr(event.body, "session_id", "") for event in events
    }
    tasks = {event.session_id for event in events if event.kind in TASK_KINDS}
    logs = _task_logs(session, tasks, {(event.session_id, event.seq): event for event in events})
    folding = Folding(
        _sessions(session, chats), _task_rows(session, tasks), lambda task: logs.get(task, [])
    )
    folding.fold(events)
    rows = folding.finish()
    _write_bins(session, folding.bins)
    _write_sessions(session, {key: folding.sessions[key] for key in folding.changed_sessions})
    _write_tasks(session, rows)
    if folding.started:
        state = MetricsStateRecord.__table__  # type: ignore[attr-defined]
        session.execute(sa.update(state).values(tasks=state.c.tasks + folding.started))


def _advance(session: Session, events: int) -> None:
    session.execute(_ADVANCE, {"folded": events})


# statements run in every append's transaction, built once (building one costs more than
# SQLite takes to run it)
_STATE = MetricsStateRecord.__table__  # type: ignore[attr-defined]
_ADVANCE = sa.update(_STATE).values(
    version=_STATE.c.version + 1, events=_STATE.c.events + sa.bindparam("folded")
)
_SESSION_LINKS = sa.select(
    col(MetricSessionRecord.session_id),
    col(MetricSessionRecord.agent),
    col(MetricSessionRecord.task_id),
).where(col(MetricSessionRecord.session_id).in_(sa.bindparam("ids", expanding=True)))


def _chunks(keys: Collection[str]) -> Iterable[list[str]]:
    ordered = sorted(keys)
    for start in range(0, len(ordered), _CHUNK):
        yield ordered[start : start + _CHUNK]


def _sessions(session: Session, ids: Collection[str]) -> dict[str, SessionLink]:
    found = {}
    for chunk in _chunks(ids):
        for session_id, agent, task_id in session.execute(_SESSION_LINKS, {"ids": chunk}):
            found[session_id] = SessionLink(agent, task_id)
    return found


def _task_rows(session: Session, ids: Collection[str]) -> dict[str, TaskRow]:
    table = MetricTaskRecord.__table__  # type: ignore[attr-defined]
    found = {}
    for chunk in _chunks(ids):
        for row in session.execute(sa.select(table).where(table.c.task_id.in_(chunk))):
            found[row.task_id] = _task(row)
    return found


def _task(row: Any) -> TaskRow:
    return TaskRow(
        task_id=row.task_id,
        name=row.name,
        started_at=row.started_at,
        status=row.status,
        iterations=row.iterations,
        phase_seconds=row.phase_seconds,
        agents=tuple(row.agents),
    )


def _task_logs(
    session: Session, task_ids: Collection[str], known: dict[tuple[str, int], Event]
) -> dict[str, list[Event]]:
    """The own events of these tasks as stored (this transaction's included), in order; the
    `known` ones (this fold's) are not read again. Selected by session alone, so that the
    session index answers whatever the number of task events in the store."""
    logs: dict[str, list[Event]] = {}
    for chunk in _chunks(task_ids):
        query = (
            sa.select(
                col(EventRecord.session_id),
                col(EventRecord.seq),
                col(EventRecord.kind),
                col(EventRecord.time),
                col(EventRecord.payload),
            )
            .where(col(EventRecord.session_id).in_(chunk))
            .order_by(col(EventRecord.session_id), col(EventRecord.seq))
        )
        for session_id, seq, kind, time, payload in session.execute(query):
            if kind not in _TASK_KINDS:
                continue
            event = known.get((session_id, seq))
            own = [event] if event else _parsed(session_id, seq, kind, time, payload)
            logs.setdefault(session_id, []).extend(own)
    return logs


def _insert(session: Session) -> Callable[[Any], Any]:
    dialect = session.get_bind().dialect.name
    return postgresql.insert if dialect == "postgresql" else sqlite.insert


_BIN_COLUMNS = ("resolution", "agent", "series", "bucket", "label", "count", "total", "low", "high")


def _bin_upsert(postgres: bool) -> str:
    """One bin added to the stored one, on either database (the driver's own placeholders:
    this runs for every bin an append touches, where SQLAlchemy's per-row work would cost more
    than the database's)."""
    least, greatest, mark = ("LEAST", "GREATEST", "%s") if postgres else ("MIN", "MAX", "?")
    return (
        f"INSERT INTO metric_bins ({', '.join(_BIN_COLUMNS)}) "
        f"VALUES ({', '.join([mark] * len(_BIN_COLUMNS))}) "
        "ON CONFLICT (resolution, agent, series, bucket, label) DO UPDATE SET "
        "count = metric_bins.count + excluded.count, "
        "total = metric_bins.total + excluded.total, "
        f"low = {least}(metric_bins.low, excluded.low), "
        f"high = {greatest}(metric_bins.high, excluded.high)"
    )


def _write_bins(session: Session, bins: dict[BinKey, Tally]) -> None:
    if not bins:
        return
    postgres = session.get_bind().dialect.name == "postgresql"
    rows = [  # sorted: writers on PostgreSQL lock rows in one order (and they queue before)
        (resolution, agent, series, bucket, label, t.count, t.total, t.low, t.high)
        for (series, resolution, agent, bucket, label), t in sorted(bins.items())
    ]
    session.connection().exec_driver_sql(_bin_upsert(postgres), rows)


def _replace(session: Session, table: sa.Table, key: str, rows: list[dict[str, Any]]) -> None:
    if not rows:
        return
    insert = _insert(session)(table)
    columns = [column.name for column in table.columns if column.name != key]
    upsert = insert.on_conflict_do_update(
        index_elements=[key], set_={name: insert.excluded[name] for name in columns}
    )
    session.execute(upsert, sorted(rows, key=lambda row: row[key]))


def _write_sessions(session: Session, links: dict[str, SessionLink]) -> None:
    rows = [
        {"session_id": key, "agent": link.agent, "task_id": link.task_id}
        for key, link in links.items()
    ]
    _replace(session, MetricSessionRecord.__table__, "session_id", rows)  # type: ignore[attr-defined]


def _write_tasks(session: Session, tasks: list[TaskRow]) -> None:
    rows = [
        {
            "task_id": row.task_id,
            "name": row.name,
            "started_at": row.started_at,
            "status": row.status,
            "iterations": row.iterations,
            "phase_seconds": row.phase_seconds,
            "agents": list(row.agents),
        }
        for row in tasks
    ]
    _replace(session, MetricTaskRecord.__table__, "task_id", rows)  # type: ignore[attr-defined]


# -- rebuilding ---------------------------------------------------------------------------------


def rebuild_aggregates(
    store: Store,
    progress: Callable[[int, int], None] | None = None,
    batch: int = REBUILD_BATCH,
) -> int:
    """Recompute every aggregate from the events, in one transaction (writers that fold wait
    for it); `progress(done, total)` after each batch. Returns the metric events folded."""
    with Session(store.engine, expire_on_commit=False) as session:
        _advance(session, 0)  # the aggregates are ours until the commit
        state = MetricsStateRecord.__table__  # type: ignore[attr-defined]
        session.execute(sa.update(state).values(events=0, tasks=0))
        for table in (MetricBinRecord, MetricSessionRecord, MetricTaskRecord):
            session.execute(sa.delete(table))
        total = _count_metric_events(session)
        done, after = 0, 0
        while rows := _rows_after(session, after, batch):
            events = [event for row in rows for event in _parsed(*row[1:])]
            if events:
                fold_stored(session, events)
            done, after = done + len(rows), rows[-1][0]
            if progress is not None:
                progress(done, total)
        session.execute(sa.update(state).values(complete=True))
        session.commit()
    return done


def _count_metric_events(session: Session) -> int:
    query = sa.select(sa.func.count()).where(col(EventRecord.kind).in_(METRIC_KINDS))
    return int(session.execute(query).scalar_one())


def _rows_after(session: Session, after_id: int, batch: int) -> list[Any]:
    return list(session.execute(metric_rows_after(after_id, batch)).all())


# -- reading ------------------------------------------------------------------------------------


def metrics_state(store: Store) -> MetricsState:
    """How far the aggregates are: one row, the cheap question a poller asks."""
    with store.engine.connect() as connection:
        record = connection.execute(
            sa.select(
                col(MetricsStateRecord.version),
                col(MetricsStateRecord.events),
                col(MetricsStateRecord.tasks),
                col(MetricsStateRecord.complete),
            )
        ).one()
    return MetricsState(
        version=record[0], events=record[1], tasks=record[2], complete=bool(record[3])
    )


def _range(resolution: int, agent: str, first: int | None, last: int | None) -> dict[str, Any]:
    return {
        "resolution": resolution,
        "agent": agent,
        "first": -(2**62) if first is None else first,
        "last": 2**62 if last is None else last,
    }


class StoredAggregates:
    """The aggregates of a store, as the figures ask for them (see figures.AggregateSource)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def event_count(self) -> int:
        return metrics_state(self.store).events

    def buckets(
        self, resolution: int, agent: str, first: int | None = None, last: int | None = None
    ) -> tuple[int, int] | None:
        """The first and last bucket holding figures of `agent` at `resolution`, within
        `first` and `last` when given."""
        query = sa.text(
            "SELECT MIN(bucket), MAX(bucket) FROM metric_bins WHERE resolution = :resolution "
            "AND agent = :agent AND bucket >= :first AND bucket <= :last"
        )
        with self.store.engine.connect() as connection:
            low, high = connection.execute(query, _range(resolution, agent, first, last)).one()
        return None if low is None else (int(low), int(high))

    def bins(
        self, resolution: int, agent: str, first: int | None, last: int | None, width: int
    ) -> list[tuple[str, int, str, Tally]]:
        """The figures at `resolution` between `first` and `last`, summed in the database
        into bins `width` seconds wide (a multiple of the resolution)."""
        query = sa.text(
            "SELECT series, bucket / :width * :width AS start, label, SUM(count), SUM(total), "
            "MIN(low), MAX(high) FROM metric_bins WHERE resolution = :resolution "
            "AND agent = :agent AND bucket >= :first AND bucket <= :last "
            "GROUP BY series, bucket / :width * :width, label"
        )
        bounds = {**_range(resolution, agent, first, last), "width": width}
        with self.store.engine.connect() as connection:
            result = connection.execute(query, bounds).all()
        return [
            (series, int(start), label, Tally(int(count), total, low, high))
            for series, start, label, count, total, low, high in result
        ]

    def task_choices(self, limit: int = TASK_CHOICES) -> list[tuple[str, str, datetime]]:
        """The tasks started last, newest first: id, name and start."""
        table = MetricTaskRecord.__table__  # type: ignore[attr-defined]
        query = (
            sa.select(table.c.task_id, table.c.name, table.c.started_at)
            .where(table.c.started_at.is_not(None))
            .order_by(table.c.started_at.desc(), table.c.task_id)
            .limit(limit)
        )
        with self.store.engine.connect() as connection:
            return [
                (task_id, name, started) for task_id, name, started in connection.execute(query)
            ]

    def recorded(self) -> frozenset[str]:
        """The series the store holds figures of, whatever the filters (a day's bins of every
        agent say it)."""
        query = sa.text(
            "SELECT DISTINCT series FROM metric_bins WHERE resolution = :resolution "
            "AND agent = :agent AND count > 0"
        )
        bounds = {"resolution": RESOLUTIONS[-1], "agent": EVERY_AGENT}
        with self.store.engine.connect() as connection:
            return frozenset(series for (series,) in connection.execute(query, bounds))

    def agents(self) -> set[str]:
        """Every agent of a chat, and every agent a task consulted (each has a day's bins)."""
        chats = sa.select(col(MetricSessionRecord.agent)).distinct()
        tasks = (
            sa.select(col(MetricBinRecord.agent))
            .where(col(MetricBinRecord.resolution) == RESOLUTIONS[-1])
            .distinct()
        )
        with self.store.engine.connect() as connection:
            named = {agent for (agent,) in connection.execute(chats)}
            named.update(agent for (agent,) in connection.execute(tasks))
        return named - {""}
