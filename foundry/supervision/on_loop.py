"""Whether a call may be judged on the event loop rather than on a worker thread.

Judging a call resolves its paths, link by link: a dozen `lstat` and `stat` calls. On a worker
thread each of them hands Python's GIL to the busy loop and waits to get it back, which under
load cost the gateway more than the judging itself (a third of its throughput). On the loop the
same reads take microseconds, unless a network filesystem is mounted: a dead NFS or SMB server,
or a FUSE process that hangs, would freeze every session the loop serves. So a call is judged on
the loop only while every mounted filesystem is a local one (the kernel's mount table, read again
whenever the kernel says it changed) and its parameters are small; else on a thread, as before.
"""

from __future__ import annotations

import select
import threading
from collections.abc import Mapping
from typing import Any

MOUNT_TABLE = "/proc/self/mountinfo"
# filesystems whose reads the kernel answers from a local disk, memory or itself; a type not
# listed (nfs, cifs, smb3, fuse.*, 9p, virtiofs, ceph, autofs, which mounts on a lookup, ...)
# may wait on another machine or process
LOCAL_FILESYSTEMS = frozenset(
    """
    ext2 ext3 ext4 xfs btrfs f2fs jfs reiserfs zfs bcachefs nilfs2 vfat msdos exfat ntfs ntfs3
    hfsplus iso9660 udf squashfs erofs overlay tmpfs ramfs devtmpfs proc sysfs devpts cgroup
    cgroup2 mqueue hugetlbfs debugfs tracefs securityfs pstore bpf configfs fusectl binfmt_misc
    efivarfs nsfs selinuxfs
    """.split()  # noqa: SIM905 (a list of 43 names, one per line, would hide the point)
)
MAX_VALUES = 256  # strings, numbers and containers in a call's parameters, keys included
MAX_CHARS = 16 * 1024


def judged_on_loop(arguments: Mapping[str, Any]) -> bool:
    """Whether a call with these parameters is judged on the event loop (see the module)."""
    return _small(arguments) and _MOUNTS.all_local()


def all_local(mount_table: str) -> bool:
    """Whether every filesystem in a `/proc/PID/mountinfo` text is a local one."""
    return all(_filesystem_type(line) in LOCAL_FILESYSTEMS for line in mount_table.splitlines())


def _filesystem_type(line: str) -> str:
    """A mountinfo line's type: the field after the ` - ` that ends the optional fields."""
    _, separator, rest = line.partition(" - ")
    return rest.split(" ", 1)[0] if separator else ""


def _small(arguments: Mapping[str, Any]) -> bool:
    values, chars = 0, 0
    pending: list[Any] = [arguments]
    while pending:
        value = pending.pop()
        values += 1
        if isinstance(value, str):
            chars += len(value)
        elif isinstance(value, Mapping):
            pending.extend(value.keys())
            pending.extend(value.values())
        elif isinstance(value, list | tuple):
            pending.extend(value)
        if values + len(pending) > MAX_VALUES or chars > MAX_CHARS:
            return False
    return True


class MountWatch:
    """Whether only local filesystems are mounted, the mount table read once and again each
    time the kernel marks it changed (poll's POLLPRI); False where there is no such table."""

    def __init__(self, path: str = MOUNT_TABLE) -> None:
        self._path = path
        self._lock = threading.Lock()
        self._opened = False
        self._table: Any = None
        self._poll: Any = None
        self._local = False
        self.reads = 0

    def all_local(self) -> bool:
        with self._lock:
            if not self._opened:
                self._opened = True
                self._open()
            elif self._poll is not None and self._poll.poll(0):
                self._read()
            return self._local

    def _open(self) -> None:
        try:
            self._table = open(self._path, encoding="utf-8", errors="replace")  # noqa: SIM115
        except OSError:
            return  # no mount table (not Linux): never judged on the loop
        self._poll = select.poll()
        self._poll.register(self._table.fileno(), select.POLLPRI | select.POLLERR)
        self._read()

    def _read(self) -> None:
        self._table.seek(0)
        self._local = all_local(self._table.read())
        self.reads += 1


_MOUNTS = MountWatch()
