"""Waiting until SQLite may have committed to a database, whichever process wrote it.

On Linux the kernel says so (inotify on the database's folder: a write to the database or its
write-ahead log wakes the wait at once). Elsewhere, or when inotify cannot be had (a per-user
limit on its instances), the files' inode, size and modification time are looked at every
FILE_LOOK_S. Either way a wait also ends after its timeout, so that a change the watch cannot
see (a database on a network file system, written by another machine) is still found by the
caller's look at the store.
"""

from __future__ import annotations

import contextlib
import enum
import logging
import os
import selectors
import threading
import time
from collections.abc import Iterator
from typing import Protocol

log = logging.getLogger(__name__)

FILE_LOOK_S = 0.01  # how often the files are looked at without inotify
# SQLite writes a commit to the log, then marks it committed (in shared memory, which no watch
# sees): a wait woken by a write ends once the log has been quiet this long
QUIET_S = 0.0002
MOST_SETTLING_S = 0.01


class Seen(enum.Enum):
    WRITTEN = "the database's files were written"
    NOTHING = "the timeout passed"
    STOPPED = "the watch is stopped"


class FileWatch(Protocol):
    def wait(self, timeout_s: float) -> Seen:
        """Block until the database's files are written, `timeout_s` passes, or the watch is
        stopped."""
        ...

    def stop(self) -> None:
        """End the wait under way and every later one (from any thread)."""
        ...

    def close(self) -> None:
        """Stop, and let go of what the watch holds."""
        ...


@contextlib.contextmanager
def watching(database: str) -> Iterator[FileWatch]:
    """A watch on the SQLite database at `database` and its write-ahead log."""
    try:
        watch: FileWatch = _KernelWatch(database)
    except (ImportError, OSError) as why:  # not Linux, or no inotify instance left
        log.debug("watching %s by looking at its files: %s", database, why)
        watch = _LookingWatch(database)
    try:
        yield watch
    finally:
        watch.close()


class _KernelWatch:
    """inotify on the database's folder (the log is removed and made again: a watch on the
    file itself would be lost with it), keeping the events that name the database's files."""

    def __init__(self, database: str) -> None:
        from inotify_simple import INotify, flags

        self._overflow = flags.Q_OVERFLOW
        name = os.path.basename(database)
        self._names = {name, f"{name}-wal"}
        self._stopped = threading.Event()
        self._closing = threading.Lock()  # a stop from another thread never writes to a closed pipe
        self._inotify = INotify(nonblocking=True)
        try:
            written = flags.MODIFY | flags.CREATE | flags.MOVED_TO | flags.DELETE
            self._inotify.add_watch(os.path.dirname(os.path.abspath(database)), written)
            self._wake_read, self._wake_write = os.pipe()
        except OSError:
            self._inotify.close()
            raise
        # not select(): a busy process's descriptors go past the 1,024 it can wait on
        self._ready = selectors.DefaultSelector()
        self._ready.register(self._inotify, selectors.EVENT_READ)
        self._ready.register(self._wake_read, selectors.EVENT_READ)

    def wait(self, timeout_s: float) -> Seen:
        deadline = time.monotonic() + timeout_s
        while not self._stopped.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                return Seen.NOTHING
            if self._written(left):
                self._settle()
                return Seen.STOPPED if self._stopped.is_set() else Seen.WRITTEN
        return Seen.STOPPED

    def _written(self, timeout_s: float) -> bool:
        ready = [key.fileobj for key, _ in self._ready.select(timeout_s)]
        return self._inotify in ready and self._names_written()

    def _settle(self) -> None:
        """Until the log has been quiet for QUIET_S (at most MOST_SETTLING_S)."""
        settled = time.monotonic() + MOST_SETTLING_S
        while time.monotonic() < settled and self._written(QUIET_S):
            pass

    def _names_written(self) -> bool:
        return any(
            event.name in self._names or event.mask & self._overflow
            for event in self._inotify.read(timeout=0)
        )

    def stop(self) -> None:
        with self._closing:
            if not self._stopped.is_set():
                self._stopped.set()
                os.write(self._wake_write, b"x")

    def close(self) -> None:
        with self._closing:
            self._stopped.set()
            self._ready.close()
            self._inotify.close()
            os.close(self._wake_read)
            os.close(self._wake_write)


class _LookingWatch:
    """A look at the files every FILE_LOOK_S (a few microseconds each)."""

    def __init__(self, database: str) -> None:
        self._files = (database, f"{database}-wal")
        self._seen = _signature(self._files)
        self._stopped = threading.Event()

    def wait(self, timeout_s: float) -> Seen:
        deadline = time.monotonic() + timeout_s
        while not self._stopped.wait(FILE_LOOK_S):
            now = _signature(self._files)
            if now != self._seen:
                self._seen = now
                return Seen.WRITTEN
            if time.monotonic() >= deadline:
                return Seen.NOTHING
        return Seen.STOPPED

    def stop(self) -> None:
        self._stopped.set()

    def close(self) -> None:
        self.stop()


def _signature(files: tuple[str, ...]) -> tuple[tuple[int, int, int], ...]:
    """What changes in a file when SQLite commits to it: its inode, size and modification time."""
    marks = []
    for name in files:
        try:
            status = os.stat(name)
        except OSError:
            marks.append((0, 0, 0))
            continue
        marks.append((status.st_ino, status.st_size, status.st_mtime_ns))
    return tuple(marks)
