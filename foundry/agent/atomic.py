"""Atomic saves of one or several files: either every file of a save changes, or none does."""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from foundry.agent.problems import AgentError, AgentProblem

# O_EXCL: never open a file someone else created under the same name. O_BINARY: no newline
# translation on Windows, so the content is written byte for byte.
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)


@dataclass
class _Change:
    """One file of a save: `staged` is renamed onto `target`, or (`staged` None) `target` goes."""

    target: Path
    staged: Path | None
    backup: Path | None = None
    applied: bool = False


def write_files_atomically(files: Mapping[Path, str], remove: tuple[Path, ...] = ()) -> None:
    """Write all `files`, then delete `remove`; all of it, or nothing.

    Every target must be a regular file or missing; anything else (a folder, a FIFO, a device, a
    symbolic link to one of those or to nothing) is refused with an AgentError before any file
    is touched. A symbolic link to a regular file is written through: its target gets the new
    content and the link stays. Every new content is first written and synced to a temporary
    file beside its target, with the target's mode and, where this process may, its owner and
    group (a new file gets the mode the umask gives). A failure while staging (a full disk, a
    read-only folder) raises an AgentError naming the file and leaves every original untouched.
    Only then are the files renamed into place, each original kept aside under a backup name; if
    one rename or removal fails, every file done so far is put back and the AgentError names the
    file that failed. No temporary or backup file is left behind, unless putting a file back
    fails: its backup is then kept and named in the error. A crash of the machine midway through
    the renames can leave the save half-done, with the old versions beside the files as
    `.NAME.*.bak`.
    """
    targets = _checked_targets(files, remove)
    staged = _stage_all({targets[path]: content for path, content in files.items()})
    changes = [_Change(target, temporary) for target, temporary in staged.items()]
    changes += [_Change(path, None) for path in remove]
    _apply(changes)
    try:
        for directory in {change.target.parent for change in changes if _touched(change)}:
            _fsync_directory(directory)
    finally:
        _unlink_all(change.backup for change in changes if change.backup is not None)


def write_file_atomically(path: Path, content: str) -> None:
    write_files_atomically({path: content})


def _checked_targets(files: Iterable[Path], remove: Iterable[Path]) -> dict[Path, Path]:
    """The file each of `files` is written to; an AgentError lists every target that is refused."""
    targets: dict[Path, Path] = {}
    problems: list[AgentProblem] = []
    for path in files:
        try:
            target = _write_target(path)
        except AgentError as error:
            problems += error.problems
            continue
        twin = next((other for other, known in targets.items() if known == target), None)
        if twin is not None:
            problems.append(_problem(path, f"is the same file as {twin}, so nothing was saved"))
        targets[path] = target
    for path in remove:
        try:
            _check_removal(path)
        except AgentError as error:
            problems += error.problems
    if problems:
        raise AgentError(problems)
    return targets


def _write_target(path: Path) -> Path:
    """`path`, or the regular file it links to; an AgentError when it is anything else."""
    info = _lstat(path)
    if info is None:
        return path
    if stat.S_ISLNK(info.st_mode):
        return _link_target(path)
    if not stat.S_ISREG(info.st_mode):
        raise _refused(path, f"is {_kind(info.st_mode)}, not a file")
    return path


def _link_target(link: Path) -> Path:
    try:
        info = os.stat(link)
    except OSError as error:
        raise _refused(link, f"is a symbolic link that leads nowhere ({error.strerror})") from error
    if not stat.S_ISREG(info.st_mode):
        raise _refused(link, f"is a symbolic link to {_kind(info.st_mode)}, not to a file")
    return Path(os.path.realpath(link))


def _check_removal(path: Path) -> None:
    """A file or a symbolic link may be deleted (the link goes, not what it points to)."""
    info = _lstat(path)
    if info is not None and not (stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode)):
        raise _refused(path, f"should be deleted but is {_kind(info.st_mode)}, not a file")


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise _refused(path, f"cannot be checked ({error.strerror})") from error


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


def _problem(path: Path, message: str) -> AgentProblem:
    return AgentProblem(file=path, message=message)


def _refused(path: Path, what: str) -> AgentError:
    advice = "so nothing was saved; move it out of the way, then save again"
    return AgentError([_problem(path, f"{what}, {advice}")])


def _stage_all(files: Mapping[Path, str]) -> dict[Path, Path]:
    """Stage every file, or (when one fails) none: the temporary files already written go."""
    staged: dict[Path, Path] = {}
    for path, content in files.items():
        try:
            staged[path] = _stage(path, content)
        except BaseException as error:
            _unlink_all(staged.values())
            if not isinstance(error, OSError):
                raise
            reason = f"could not be written ({error.strerror or error}), so nothing was saved"
            raise AgentError([_problem(path, reason)]) from error
    return staged


def _stage(path: Path, content: str) -> Path:
    """Write `content` to a synced temporary file beside `path` and return its name."""
    name = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
    path.parent.mkdir(parents=True, exist_ok=True)
    original = _stat(path)
    # An existing file's copy starts private, so nobody can open it before it gets its mode.
    fd = os.open(name, _CREATE_FLAGS, 0o666 if original is None else 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            if original is not None:
                _copy_owner_and_mode(handle.fileno(), original)
            handle.write(content)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        _unlink_all([name])
        raise
    return name


def _stat(path: Path) -> os.stat_result | None:
    try:
        return os.stat(path)
    except FileNotFoundError:
        return None


def _copy_owner_and_mode(fd: int, original: os.stat_result) -> None:
    if os.name != "posix":
        return
    # Only root may give a file to another user, and only a member to another group: keep as much
    # as this process may. The owner first, as changing it clears the set-id bits.
    try:
        os.fchown(fd, original.st_uid, original.st_gid)
    except OSError:
        with contextlib.suppress(OSError):
            os.fchown(fd, -1, original.st_gid)
    # File systems without Unix permissions (FAT) refuse; their files all share one mode anyway.
    with contextlib.suppress(OSError):
        os.fchmod(fd, stat.S_IMODE(original.st_mode))


def _apply(changes: list[_Change]) -> None:
    """Apply every change in order, or (when one fails) undo those done and raise an AgentError."""
    for change in changes:
        try:
            _apply_one(change)
        except BaseException as error:
            leftovers = _undo(changes)
            if not isinstance(error, OSError):
                raise
            reason = f"could not be written ({error.strerror or error}); the save was undone"
            raise AgentError([_problem(change.target, reason), *leftovers]) from error


def _apply_one(change: _Change) -> None:
    if change.staged is None:
        change.backup = _move_aside(change.target)
    else:
        change.backup = _link_aside(change.target)
        os.replace(change.staged, change.target)
    change.applied = True


def _touched(change: _Change) -> bool:
    """Whether applying `change` changed its folder (removing a missing file does not)."""
    return change.staged is not None or change.backup is not None


def _backup_name(path: Path) -> Path:
    return path.with_name(f".{path.name}.{secrets.token_hex(8)}.bak")


def _link_aside(path: Path) -> Path | None:
    """Keep `path` under a backup name too (None when it does not exist), without moving it away."""
    backup = _backup_name(path)
    try:
        os.link(path, backup, follow_symlinks=False)
    except FileNotFoundError:
        return None
    except FileExistsError:
        raise
    except OSError:  # a file system without hard links
        _copy_aside(path, backup)
    return backup


def _copy_aside(path: Path, backup: Path) -> None:
    try:
        shutil.copy2(path, backup, follow_symlinks=False)
    except BaseException:
        _unlink_all([backup])
        raise


def _move_aside(path: Path) -> Path | None:
    """Move `path` to a backup name (None when it does not exist)."""
    backup = _backup_name(path)
    try:
        os.rename(path, backup)
    except FileNotFoundError:
        return None
    return backup


def _undo(changes: list[_Change]) -> list[AgentProblem]:
    """Put back every change applied, newest first, and drop every temporary and backup file; a
    problem for each file that could not be put back (its backup is then kept)."""
    problems: list[AgentProblem] = []
    for change in reversed(changes):
        try:
            _undo_one(change)
        except OSError as error:
            kept = f"; its old content is in {change.backup}" if change.backup else ""
            message = f"could not be put back as it was ({error.strerror}){kept}"
            problems.append(_problem(change.target, message))
        if change.staged is not None:
            _unlink_all([change.staged])
    return problems


def _undo_one(change: _Change) -> None:
    if change.applied and change.backup is not None:
        os.replace(change.backup, change.target)
    elif change.applied and change.staged is not None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(change.target)  # a new file
    elif change.backup is not None:
        os.unlink(change.backup)  # set aside, but the rename over the original failed


def _unlink_all(paths: Iterable[Path]) -> None:
    for path in paths:
        with contextlib.suppress(OSError):
            os.unlink(path)


def _fsync_directory(directory: Path) -> None:
    if os.name != "posix":
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
