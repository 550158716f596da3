"""The watch on a SQLite database's files: woken by another process's commit, not by other files
in its folder, stopped at once from another thread; the kernel's watch and the looking one."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

from foundry.store import file_watch
from foundry.store.file_watch import FileWatch, Seen, watching

LONG_S = 60.0  # a wait no test lets run out: ending it is what is tested
BOUND_S = 30.0  # how long a test lets the watch take to notice (it takes milliseconds)
WRITE = (
    "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
    "c.execute('insert into t values (1)'); c.commit()"
)


def _looking_only(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_inotify(database: str) -> None:
        raise OSError("no inotify instance left")

    monkeypatch.setattr(file_watch, "_KernelWatch", no_inotify)


@pytest.fixture(params=["kernel", "looking"])
def watch_of(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Callable[[Path], AbstractContextManager[FileWatch]]:
    if request.param == "looking":
        _looking_only(monkeypatch)
    elif sys.platform != "linux":
        pytest.skip("inotify is Linux's")
    return lambda database: watching(str(database))


@pytest.fixture
def database(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "store.sqlite3"
    connection = sqlite3.connect(path)
    connection.execute("pragma journal_mode=wal")
    connection.execute("create table t (x)")
    connection.commit()
    yield path  # kept open, as Foundry keeps its store: the write-ahead log stays
    connection.close()


def _waiting(watch: FileWatch) -> tuple[threading.Thread, list[Seen]]:
    said: list[Seen] = []
    thread = threading.Thread(target=lambda: said.append(watch.wait(LONG_S)), daemon=True)
    thread.start()
    return thread, said


def _woken_by_another_process(
    watch_of: Callable[[Path], AbstractContextManager[FileWatch]], database: Path
) -> None:
    with watch_of(database) as watch:
        thread, said = _waiting(watch)
        subprocess.run([sys.executable, "-c", WRITE, str(database)], check=True)
        thread.join(BOUND_S)
        assert said == [Seen.WRITTEN], "the commit was not noticed"
        watch.stop()


def test_another_process_committing_ends_the_wait(
    watch_of: Callable[[Path], AbstractContextManager[FileWatch]], database: Path
) -> None:
    _woken_by_another_process(watch_of, database)


def test_a_process_with_many_files_open_is_still_woken(
    watch_of: Callable[[Path], AbstractContextManager[FileWatch]], database: Path
) -> None:
    """A busy process (an app, a test run) holds more than the 1,024 descriptors select()
    can wait on: the watch's own are numbered past them."""
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    try:
        _woken_by_another_process(watch_of, database)
    finally:
        for descriptor in held:
            os.close(descriptor)


def test_other_files_in_its_folder_do_not_end_the_wait(
    watch_of: Callable[[Path], AbstractContextManager[FileWatch]], database: Path
) -> None:
    with watch_of(database) as watch:
        (database.parent / "notes.txt").write_text("not the store")
        (database.parent / "store.sqlite3.bak").write_text("nor this")
        thread, said = _waiting(watch)
        thread.join(0.3)
        watch.stop()
        thread.join(BOUND_S)
        assert said == [Seen.STOPPED], "a file that is not the store's woke the watch"


def test_a_stop_from_another_thread_ends_the_wait_and_every_later_one(
    watch_of: Callable[[Path], AbstractContextManager[FileWatch]], database: Path
) -> None:
    with watch_of(database) as watch:
        thread, said = _waiting(watch)
        watch.stop()
        thread.join(BOUND_S)
        assert said == [Seen.STOPPED]
        assert watch.wait(LONG_S) is Seen.STOPPED
        watch.stop()  # again: nothing to do, no error


def test_a_wait_ends_after_its_timeout_when_nothing_is_written(
    watch_of: Callable[[Path], AbstractContextManager[FileWatch]], database: Path
) -> None:
    with watch_of(database) as watch:
        assert watch.wait(0.05) is Seen.NOTHING  # the caller then looks at the store anyway


def test_without_inotify_the_files_are_looked_at(
    monkeypatch: pytest.MonkeyPatch, database: Path
) -> None:
    _looking_only(monkeypatch)
    with watching(str(database)) as watch:
        assert type(watch).__name__ == "_LookingWatch"
