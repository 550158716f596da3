"""Reading an agent's files: regular files only, at most 10 MiB, strict UTF-8, never blocking."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from foundry.agent.limits import MAX_FILE_BYTES
from foundry.agent.problems import AgentError, AgentProblem

# O_NONBLOCK: a FIFO swapped in after the stat still opens at once. O_NOCTTY: a terminal never
# becomes ours. O_BINARY: no newline translation on Windows.
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)
_OTHER_ENCODINGS = (
    (b"\xff\xfe\x00\x00", "UTF-32"),
    (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xff\xfe", "UTF-16"),
    (b"\xfe\xff", "UTF-16"),
)
_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def read_text(path: Path) -> str:
    """The text of an agent file exactly as stored: line endings and a UTF-8 BOM are kept.

    Anything but a regular file (a folder, FIFO, device or socket, also behind a symbolic link)
    is refused without being read, as are files over 10 MiB, UTF-16/32 text, text that is not
    UTF-8 and text holding NUL characters; each refusal is an AgentError naming the file.
    """
    return _decoded(_read_bytes(Path(path)), Path(path))


def read_optional_text(path: Path) -> str | None:
    """Like read_text, but None when nothing at all is at `path` (not even a dangling link)."""
    if not os.path.lexists(path):
        return None
    return read_text(path)


def _refusal(path: Path, message: str) -> AgentError:
    return AgentError([AgentProblem(file=path, message=message)])


def _read_bytes(path: Path) -> bytes:
    try:
        _check_kind(os.stat(path).st_mode, path)
        descriptor = os.open(path, _OPEN_FLAGS)
    except OSError as error:
        raise _refusal(path, _unreadable(path, error)) from None
    try:
        info = os.fstat(descriptor)
        _check_kind(info.st_mode, path)
        _check_size(info.st_size, path)
        data = _read_at_most(descriptor, MAX_FILE_BYTES + 1)
    except OSError as error:
        raise _refusal(path, _unreadable(path, error)) from None
    finally:
        os.close(descriptor)
    _check_size(len(data), path)
    return data


def _check_kind(mode: int, path: Path) -> None:
    if stat.S_ISREG(mode):
        return
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    through = " (through a symbolic link)" if os.path.islink(path) else ""
    raise _refusal(path, f"is {kind}{through}, not a regular file")


def _check_size(size: int, path: Path) -> None:
    if size > MAX_FILE_BYTES:
        limit = MAX_FILE_BYTES // (1024 * 1024)
        message = f"is {size / (1024 * 1024):.1f} MiB; agent files are limited to {limit} MiB"
        raise _refusal(path, message)


def _read_at_most(descriptor: int, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while size < limit:
        chunk = os.read(descriptor, min(1 << 20, limit - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _unreadable(path: Path, error: OSError) -> str:
    if error.errno == errno.ELOOP:
        return "is a symbolic link loop"
    if error.errno == errno.ENOENT and os.path.islink(path):
        return "is a symbolic link to a missing file"
    if error.errno in (errno.ENOENT, errno.ENOTDIR):
        return "file not found"
    if error.errno in (errno.EACCES, errno.EPERM):
        return "cannot be read: permission denied"
    return f"cannot be read: {error.strerror or error}"


def _decoded(data: bytes, path: Path) -> str:
    for mark, encoding in _OTHER_ENCODINGS:
        if data.startswith(mark):
            raise _refusal(
                path, f"is {encoding} text; agent files must be UTF-8 (save it as UTF-8)"
            )
    nul = data.find(b"\x00")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        message = f"is not UTF-8 text: a NUL character at line {line} (UTF-16 without a BOM?)"
        raise _refusal(path, message)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        byte = data[error.start]
        raise _refusal(
            path, f"is not UTF-8 text: invalid byte 0x{byte:02x} at line {line}"
        ) from None
