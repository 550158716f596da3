"""Atomic saves of one or several files: every file ends up either wholly old or wholly new."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path


def _fsync_directory(directory: Path) -> None:
    if os.name != "posix":
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _stage(path: Path, content: str) -> Path:
    """Write `content` to a synced temporary file beside `path` and return its name."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(content)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(name)
        raise
    return Path(name)


def write_files_atomically(files: Mapping[Path, str], remove: tuple[Path, ...] = ()) -> None:
    """Write all `files`, then delete `remove`.

    Every new content is first written and synced to a temporary file beside its target; only when
    all of them are on disk are they renamed over the originals. A failure while staging (a full
    disk, a bad permission) leaves every original untouched and no temporary file behind.
    """
    staged: dict[Path, Path] = {}
    try:
        for path, content in files.items():
            staged[path] = _stage(path, content)
    except BaseException:
        for temporary in staged.values():
            with contextlib.suppress(OSError):
                temporary.unlink()
        raise
    for path, temporary in staged.items():
        os.replace(temporary, path)
    for path in remove:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
    for directory in {path.parent for path in (*staged, *remove)}:
        _fsync_directory(directory)


def write_file_atomically(path: Path, content: str) -> None:
    write_files_atomically({path: content})
