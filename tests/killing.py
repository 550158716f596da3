"""Running `foundry` in a child process and killing it with SIGKILL at a chosen point."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing, contextmanager
from pathlib import Path


def database_of(home: Path) -> Path:
    return home / "data" / "foundry.sqlite3"


def count(database: Path, query: str) -> int:
    """One number read from the child's database (0 while it does not exist yet)."""
    if not database.exists():
        return 0
    try:
        with closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=5)) as reading:
            row = reading.execute(query).fetchone()
    except sqlite3.OperationalError:  # the schema is still being created
        return 0
    return int(row[0] or 0)


@contextmanager
def edited(database: Path) -> Iterator[sqlite3.Connection]:
    """`database` opened directly to change it as a kill would have left it; committed and
    closed after (sqlite3's own `with` commits but leaves the file open until collected)."""
    with closing(sqlite3.connect(database)) as connection, connection:
        yield connection


def run_and_kill(argv: Sequence[str], home: Path, reached: Callable[[Path], bool]) -> int:
    """Run `foundry ARGV` with FOUNDRY_HOME=home and SIGKILL it as soon as `reached(database)`;
    its return code (-SIGKILL when the kill happened)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "foundry.cli", *argv],
        env=dict(os.environ, FOUNDRY_HOME=str(home)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while process.poll() is None and time.monotonic() < deadline:
        if reached(database_of(home)):
            process.send_signal(signal.SIGKILL)
            break
        time.sleep(0.002)
    return process.wait(30)
