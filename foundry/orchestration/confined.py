"""A folder's files, reached so that no path, `..` or symlink leads out of it at the time of use.

Where the platform allows (Linux, macOS), every part of a path is opened relative to the open
folder before it with O_NOFOLLOW, so nothing is ever followed by the kernel: a symlink is read
and its target walked the same way, and refused if it leaves the folder. A symlink swapped in
after any check is therefore never followed either. (A folder moved out while a call is inside
it takes the call along: what it then reaches was moved out, it was never outside before.)
Elsewhere the path is resolved right before use and the opened file is checked to be the one
resolved.

Writes replace a file (a new file, then a rename over the old name), so a hard link to a file
outside is cut, never written through. Reads of a hard link read the file: it is the same file,
and only someone who could read it already could have linked it. Non-regular files (FIFOs,
sockets, devices) are refused without opening them for blocking I/O.
"""

from __future__ import annotations

import errno
import os
import stat
import uuid
from collections.abc import Collection, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path, PurePath

MAX_LINKS = 40  # symlinks followed in one path, as Linux allows
RACE_FREE = (
    hasattr(os, "O_NOFOLLOW")
    and hasattr(os, "O_DIRECTORY")
    and hasattr(os, "fwalk")
    and {os.open, os.stat, os.mkdir, os.readlink, os.rename, os.unlink} <= os.supports_dir_fd
)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_DIRECTORY_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | _CLOEXEC
_READ_FLAGS = os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC | getattr(os, "O_BINARY", 0)
_NEW_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC


class WorkspaceError(ValueError):
    """A path the folder refuses; the message names it and says why."""


class OutsideWorkspace(WorkspaceError):
    pass


class ConfinedFolder:
    """Read, write and list the files of `root`, never leaving it."""

    def __init__(self, root: Path) -> None:
        self.root = Path(os.path.realpath(root))

    def read_text(self, relative: str, max_chars: int) -> str:
        """The file's text (UTF-8, bad bytes replaced), cut at `max_chars`."""
        if not RACE_FREE:
            return _read_resolved(self._resolved(relative), relative, max_chars)
        with self._located(relative, create=False) as (folder, name):
            handle = _open_final(folder, name, relative)
        try:
            _require_regular(os.fstat(handle), relative)
        except WorkspaceError:
            os.close(handle)
            raise
        with os.fdopen(handle, "rb") as file:
            return file.read(max_chars * 4).decode("utf-8", errors="replace")[:max_chars]

    def write_text(self, relative: str, content: str) -> None:
        """Create or replace the file (and the folders it needs) with `content`."""
        if not RACE_FREE:
            _write_resolved(self._resolved(relative, create=True), relative, content)
            return
        with self._located(relative, create=True) as (folder, name):
            _replace(folder, name, relative, content.encode("utf-8"))

    def files(self, ignored: Collection[str] = ()) -> list[str]:
        """Relative POSIX paths of the regular files, and of the symlinks to regular files
        inside; folders named in `ignored` and symlinked folders are not walked into."""
        if not self.root.is_dir():
            return []
        if not RACE_FREE:
            return self._files_resolved(ignored)
        root = os.open(self.root, _DIRECTORY_FLAGS)
        try:
            return sorted(self._walk_files(root, ignored))
        finally:
            os.close(root)

    # -- race-free: a walk over open folders -------------------------------------------------

    @contextmanager
    def _located(self, relative: str, create: bool) -> Iterator[tuple[int, str]]:
        """The open real folder that holds the path's last part, and that part's name."""
        if create:
            self.root.mkdir(parents=True, exist_ok=True)
        folders = [os.open(self.root, _DIRECTORY_FLAGS)]
        try:
            name = self._walk(folders, self._parts(relative), relative, create)
            yield folders[-1], name
        finally:
            for folder in folders:
                os.close(folder)

    def _walk(self, folders: list[int], pending: list[str], relative: str, create: bool) -> str:
        """Open each folder of `pending` in turn onto `folders`; follow symlinks by hand."""
        links = 0
        while pending:
            name = pending.pop(0)
            if name == "..":
                _leave(folders, relative)
                continue
            target = self._step(folders, name, bool(pending), relative, create)
            if target is None:
                if not pending:
                    return name
                continue
            links += 1
            if links > MAX_LINKS:
                raise WorkspaceError(f"{relative} goes through too many symlinks")
            pending[:0] = self._link_parts(folders, target, relative)
        raise WorkspaceError(f"{relative} names a folder, not a file")

    def _step(
        self, folders: list[int], name: str, more: bool, relative: str, create: bool
    ) -> str | None:
        """Enter folder `name` (or, last, just check it); a symlink's target if it is one."""
        if not more:
            return _link_target(folders[-1], name)
        entered = _enter(folders[-1], name, relative, create)
        if isinstance(entered, int):
            folders.append(entered)
            return None
        return entered

    def _link_parts(self, folders: list[int], target: str, relative: str) -> list[str]:
        """The parts of a symlink's target to walk next; an absolute one restarts at the root."""
        if not os.path.isabs(target):
            return _split(target)
        while len(folders) > 1:
            os.close(folders.pop())
        return self._below_root(target, relative)

    def _walk_files(self, root: int, ignored: Collection[str]) -> Iterator[str]:
        for folder, folders, names, folder_fd in os.fwalk(".", dir_fd=root):
            folders[:] = [name for name in folders if name not in ignored]
            base = PurePath(folder)
            for name in names:
                found = (base / name).as_posix()
                if self._is_listed(folder_fd, name, found):
                    yield found

    def _is_listed(self, folder: int, name: str, relative: str) -> bool:
        info = os.stat(name, dir_fd=folder, follow_symlinks=False)
        if stat.S_ISREG(info.st_mode):
            return True
        if not stat.S_ISLNK(info.st_mode):
            return False
        try:
            with self._located(relative, create=False) as (parent, last):
                return stat.S_ISREG(os.stat(last, dir_fd=parent, follow_symlinks=False).st_mode)
        except (OSError, WorkspaceError):
            return False

    # -- paths -------------------------------------------------------------------------------

    def _parts(self, relative: str) -> list[str]:
        """The parts of a path as given: absolute ones only below the root, no `~`."""
        if "\0" in relative:
            raise WorkspaceError(f"{relative!r} is not a valid path")
        if relative.startswith("~"):
            raise OutsideWorkspace(f"{relative} is outside the workspace")
        if os.path.isabs(relative):
            return self._below_root(relative, relative)
        return _split(relative)

    def _below_root(self, path: str, relative: str) -> list[str]:
        parts, root = PurePath(path).parts, self.root.parts
        if parts[: len(root)] != root:
            raise OutsideWorkspace(f"{relative} is outside the workspace")
        return _split("/".join(parts[len(root) :]))

    # -- the fallback: resolved right before use, then checked again --------------------------

    def _resolved(self, relative: str, create: bool = False) -> Path:
        if create:
            self.root.mkdir(parents=True, exist_ok=True)
        self._parts(relative)  # `~` and absolute paths outside are refused the same way
        path = Path(os.path.realpath(self.root / relative))
        if path != self.root and self.root not in path.parents:
            raise OutsideWorkspace(f"{relative} is outside the workspace")
        if create:
            path.parent.mkdir(parents=True, exist_ok=True)
            if Path(os.path.realpath(path.parent)) != path.parent:
                raise WorkspaceError(f"{relative} changed while it was opened: try again")
        return path

    def _files_resolved(self, ignored: Collection[str]) -> list[str]:
        found = []
        for folder, folders, names in os.walk(self.root):
            folders[:] = [name for name in folders if name not in ignored]
            for name in names:
                relative = (Path(folder) / name).relative_to(self.root).as_posix()
                with suppress(OSError, WorkspaceError):
                    if self._resolved(relative).is_file():
                        found.append(relative)
        return sorted(found)


def _split(path: str) -> list[str]:
    separators = {"/", os.sep, os.altsep or "/"}
    for separator in separators - {"/"}:
        path = path.replace(separator, "/")
    return [part for part in path.split("/") if part not in ("", ".")]


def _leave(folders: list[int], relative: str) -> None:
    """`..`: back to the folder before, never above the root."""
    if len(folders) == 1:
        raise OutsideWorkspace(f"{relative} is outside the workspace")
    os.close(folders.pop())


def _enter(folder: int, name: str, relative: str, create: bool) -> int | str:
    """The open folder `name`, created if asked, or the target if `name` is a symlink."""
    try:
        return os.open(name, _DIRECTORY_FLAGS, dir_fd=folder)
    except FileNotFoundError:
        if not create:
            raise
        with suppress(FileExistsError):
            os.mkdir(name, 0o777, dir_fd=folder)
        return _enter(folder, name, relative, create=False)
    except OSError as error:
        if error.errno not in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
            raise
    target = _link_target(folder, name)
    if target is None:
        raise WorkspaceError(f"{relative}: {name} is not a folder")
    return target


def _link_target(folder: int, name: str) -> str | None:
    """What the symlink `name` points to; None if it is not a symlink (or is missing)."""
    try:
        return os.readlink(name, dir_fd=folder)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as error:
        if error.errno == errno.EINVAL:  # not a symlink
            return None
        raise


def _open_final(folder: int, name: str, relative: str) -> int:
    """Open the last part for reading, not following a symlink that appeared since the walk."""
    try:
        return os.open(name, _READ_FLAGS, dir_fd=folder)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.EMLINK):
            raise WorkspaceError(f"{relative} changed while it was opened: try again") from None
        raise


def _require_regular(info: os.stat_result, relative: str) -> None:
    if stat.S_ISDIR(info.st_mode):
        raise WorkspaceError(f"{relative} is a folder, not a file")
    if not stat.S_ISREG(info.st_mode):
        raise WorkspaceError(f"{relative} is not a regular file (a pipe, socket or device)")


def _replace(folder: int, name: str, relative: str, data: bytes) -> None:
    """Write a new file beside `name` and rename it over `name` (never written through)."""
    mode = _replaced_mode(folder, name, relative)
    temporary = f".foundry-{uuid.uuid4().hex[:12]}.tmp"
    handle = os.open(temporary, _NEW_FILE_FLAGS, 0o666, dir_fd=folder)
    try:
        with os.fdopen(handle, "wb") as file:
            if mode is not None:
                os.fchmod(file.fileno(), mode)
            file.write(data)
        os.rename(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        with suppress(OSError):
            os.unlink(temporary, dir_fd=folder)
        raise


def _replaced_mode(folder: int, name: str, relative: str) -> int | None:
    """The permissions of the file `name` replaces (None if new); refuses what is no file."""
    try:
        info = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(info.st_mode):
        raise WorkspaceError(f"{relative} changed while it was opened: try again")
    _require_regular(info, relative)
    return stat.S_IMODE(info.st_mode)


def _read_resolved(path: Path, relative: str, max_chars: int) -> str:
    _require_regular(os.stat(path), relative)  # before opening: a pipe would block the open
    with open(path, "rb") as file:
        _require_unchanged(path, file.fileno(), relative)
        return file.read(max_chars * 4).decode("utf-8", errors="replace")[:max_chars]


def _write_resolved(path: Path, relative: str, content: str) -> None:
    if path.exists():
        _require_regular(path.stat(), relative)
    temporary = path.with_name(f".foundry-{uuid.uuid4().hex[:12]}.tmp")
    with open(temporary, "xb") as file:
        file.write(content.encode("utf-8"))
        try:
            _require_unchanged(temporary, file.fileno(), relative)
        except WorkspaceError:
            os.unlink(temporary)
            raise
    os.replace(temporary, path)


def _require_unchanged(path: Path, handle: int, relative: str) -> None:
    """The fallback's check once a file is open: its path still resolves to itself (no symlink
    appeared on the way) and names the file that was opened."""
    same = os.path.samestat(os.fstat(handle), os.stat(path, follow_symlinks=False))
    if not same or os.path.realpath(path) != str(path):
        raise WorkspaceError(f"{relative} changed while it was opened: try again")
