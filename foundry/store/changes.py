"""Telling this process at once when approvals change in the store, whichever process changed them.

Every transaction that creates or resolves an approval bumps the `approvals` row of the
`store_changes` table and, on PostgreSQL, sends `NOTIFY foundry_approvals` (delivered when it
commits). The first subscriber starts one watcher thread per store:

- PostgreSQL: `LISTEN foundry_approvals` on a connection of its own; a lost connection is opened
  again (every subscriber is told once then, since a change may have been missed meanwhile).
- SQLite: the counter is read when the database file or its write-ahead log is written (the
  kernel tells, file_watch.py), and every 250 ms whatever the watch says.

A change committed through this store's own repositories tells the subscribers straight after the
commit, without waiting for the watcher. Subscribers are called on whichever thread saw the change
and must only hand it on (set an event thread-safely, emit a queued signal).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
import threading
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from typing import Any

import sqlalchemy as sa

from foundry.store.file_watch import FileWatch, Seen, watching
from foundry.store.tables import StoreChangeRecord

log = logging.getLogger(__name__)

APPROVALS = "approvals"
CHANNEL = "foundry_approvals"
COUNTER_LOOK_S = 0.25  # how often SQLite's counter is read when the files seem unchanged
RECHECK_S = 0.01  # when the files were written but the counter had not moved
RECONNECT_S = 1.0
MINE_KEPT = 1000  # at most: a watcher reads the counter every 250 ms at the latest
LISTEN_WAIT_S = 5.0  # how long a first subscriber waits for PostgreSQL to listen

Listener = Callable[[], None]
_CHANGES = StoreChangeRecord.__table__  # type: ignore[attr-defined]
_BUMP = (  # built once: building it costs more than running it
    sa.update(_CHANGES)
    .where(_CHANGES.c.topic == APPROVALS)
    .values(version=_CHANGES.c.version + 1)
    .returning(_CHANGES.c.version)
)


class ApprovalChanges:
    """The subscribers of one store to changes of its approvals, and the thread that watches."""

    def __init__(self, engine: sa.Engine) -> None:
        self._engine = engine
        self._lock = threading.Lock()
        self._starting = threading.Lock()
        self._listeners: list[Listener] = []
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._mine: set[int] = set()  # versions this store made that the watcher has not seen
        self._file_watch: FileWatch | None = None

    def commit(self, session: Any, committed: Callable[[], None] | None = None) -> None:
        """Commit `session`'s transaction, which changes approvals, with the counter bumped in
        it (and on PostgreSQL the notification, sent by the commit); then call `committed`, and
        tell the subscribers, who are not told again when the watcher sees the same change."""
        version = self._bump(session)
        with self._lock:
            if self._thread is not None and len(self._mine) < MINE_KEPT:
                self._mine.add(version)
        try:
            session.commit()
        except BaseException:
            with self._lock:
                self._mine.discard(version)  # the number will be another change's
            raise
        if committed is not None:
            committed()
        self._tell()

    def _bump(self, session: Any) -> int:
        version = int(session.execute(_BUMP).scalar_one())
        if self._engine.dialect.name == "postgresql":
            session.execute(sa.select(sa.func.pg_notify(CHANNEL, str(version))))
        return version

    def _theirs(self, versions: Iterable[int]) -> bool:
        """Whether any of these changes came from elsewhere (forgetting the ones made here)."""
        with self._lock:
            mine = [version for version in versions if version in self._mine]
            self._mine.difference_update(mine)
            return len(mine) < len(list(versions))

    @property
    def listeners(self) -> int:
        """How many subscribers there are now."""
        with self._lock:
            return len(self._listeners)

    @contextlib.contextmanager
    def subscribed(self, listener: Listener) -> Iterator[None]:
        """Call `listener` on every change while in the block. Blocking the first time (the
        watch starts): not on an event loop, where `waking` is the way."""
        self._start_watching()
        with self._listening(listener):
            yield

    @contextlib.asynccontextmanager
    async def waking(self, event: asyncio.Event) -> AsyncIterator[None]:
        """Set `event`, on the running loop, on every change while in the block."""
        loop = asyncio.get_running_loop()

        def wake() -> None:
            with contextlib.suppress(RuntimeError):  # the loop has closed: no one waits there
                loop.call_soon_threadsafe(event.set)

        if self._thread is None:  # the first time: off the loop
            await asyncio.to_thread(self._start_watching)
        with self._listening(wake):
            yield

    @contextlib.contextmanager
    def _listening(self, listener: Listener) -> Iterator[None]:
        with self._lock:
            self._listeners.append(listener)
        try:
            yield
        finally:
            with self._lock:
                self._listeners.remove(listener)

    def _start_watching(self) -> None:
        """Start the watch once. It may read the store or connect to it; if it cannot, the
        subscribers' own polls still see every change, later."""
        with self._starting:
            if self._thread is not None:
                return
            try:
                self._start()
            except (sa.exc.SQLAlchemyError, OSError) as error:
                log.warning("cannot watch the store for approval changes: %s", error)

    def close(self) -> None:
        """Stop watching (the store is closing)."""
        self._stop.set()
        if self._file_watch is not None:
            self._file_watch.stop()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=2 * RECONNECT_S)

    def _start(self) -> None:
        if self._engine.dialect.name == "postgresql":
            listening = threading.Event()
            self._run(self._watch_postgres, listening)
            # a change made before LISTEN takes effect would go unseen
            listening.wait(LISTEN_WAIT_S)
        elif self._engine.url.database not in (None, "", ":memory:"):
            self._run(self._watch_sqlite, self._version())
        # else a store no other process can open: committed_here() tells everything

    def _run(self, watch: Callable[..., None], *args: Any) -> None:
        thread = threading.Thread(
            target=watch, args=args, name="foundry-store-changes", daemon=True
        )
        thread.start()
        self._thread = thread  # started first: `close` may join it from another thread

    def _version(self) -> int:
        """The counter as it is now: read before the subscriber first looks at the approvals,
        so that a change made in between is one the watcher sees."""
        with self._engine.connect() as connection:
            query = sa.select(_CHANGES.c.version).where(_CHANGES.c.topic == APPROVALS)
            return int(connection.execute(query).scalar_one())

    def _tell(self) -> None:
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener()
            except Exception:
                log.exception("a subscriber to approval changes failed")

    # -- PostgreSQL ---------------------------------------------------------------------------

    def _watch_postgres(self, listening: threading.Event) -> None:
        import psycopg

        url = self._engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
        while not self._stop.is_set():
            try:
                with psycopg.connect(url, autocommit=True, connect_timeout=10) as connection:
                    connection.execute(f"LISTEN {CHANNEL}")
                    if listening.is_set():
                        self._tell()  # listening again: a change may have gone unseen meanwhile
                    listening.set()
                    while not self._stop.is_set():
                        for notice in connection.notifies(timeout=COUNTER_LOOK_S):
                            if not notice.payload.isdigit() or self._theirs([int(notice.payload)]):
                                self._tell()
            except psycopg.Error as error:
                log.warning("lost the store's change notifications (%s); listening again", error)
                self._stop.wait(RECONNECT_S)

    # -- SQLite --------------------------------------------------------------------------------

    def _watch_sqlite(self, seen_version: int) -> None:
        path = str(self._engine.url.database)
        connection: sqlite3.Connection | None = None
        with watching(path) as watch:
            self._file_watch = watch
            look_in = COUNTER_LOOK_S
            try:
                while not self._stop.is_set():
                    seen = watch.wait(look_in)
                    if seen is Seen.STOPPED:
                        break
                    try:
                        connection = connection or sqlite3.connect(path, timeout=1)
                        version = _read_version(connection)
                    except sqlite3.Error as error:
                        log.debug("cannot read the store's change counter: %s", error)
                        _close(connection)
                        connection = None
                        continue
                    if version != seen_version and (
                        version - seen_version > MINE_KEPT
                        or self._theirs(range(seen_version + 1, version + 1))
                    ):
                        self._tell()
                    # a write that changed nothing yet may be a commit not yet marked: look again
                    unchanged = seen is Seen.WRITTEN and version == seen_version
                    look_in = RECHECK_S if unchanged else COUNTER_LOOK_S
                    seen_version = version
            except Exception:  # no subscriber would be told again: say so
                log.exception("the store's change watch stopped; subscribers fall back to polls")
            finally:
                _close(connection)


def _read_version(connection: sqlite3.Connection) -> int:
    row = connection.execute(
        "SELECT version FROM store_changes WHERE topic = ?", (APPROVALS,)
    ).fetchone()
    connection.rollback()  # end the read transaction, so the WAL can be checkpointed
    return int(row[0]) if row else 0


def _close(connection: sqlite3.Connection | None) -> None:
    if connection is not None:
        connection.close()
