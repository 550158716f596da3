"""When a call's rules may be judged on the event loop: only local filesystems mounted (a dead
network mount must not freeze the loop) and small parameters (judging them must not hold it)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from foundry.supervision.on_loop import MAX_CHARS, MAX_VALUES, MountWatch, _small, all_local

ROOT = "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw"
LOCAL = [
    ROOT,
    "25 22 0:22 / /dev/shm rw,nosuid,nodev shared:4 - tmpfs tmpfs rw",
    "30 22 0:26 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw",
    "41 22 0:35 / /var/lib/docker/overlay2/x/merged rw - overlay overlay rw,lowerdir=/a",
    "50 22 7:0 / /snap/core/1 ro,nodev,relatime shared:30 - squashfs /dev/loop0 ro",
    "60 22 0:40 / /sys/fs/cgroup rw shared:9 - cgroup2 cgroup2 rw",
]
REMOTE = [
    "70 22 0:50 / /home rw,relatime shared:40 - nfs4 server:/home rw,vers=4.2",
    "71 22 0:51 / /mnt/share rw,relatime - cifs //nas/share rw",
    "72 22 0:52 / /mnt/box rw,nosuid,nodev,relatime - fuse.sshfs me@box:/ rw",
    "73 22 0:53 / /mnt/c rw,noatime - 9p drvfs rw",  # WSL's Windows drives
    "74 22 0:54 / /net rw,relatime - autofs /etc/auto.net rw",  # mounts on a lookup
    "75 22 0:55 / /mnt/host rw - virtiofs share rw",
    "76 22 0:56 / /mnt/x rw - somethingnew dev rw",  # a type not known: not taken for local
    r"77 22 0:57 / /mnt/a\040-\040ext4 rw - nfs server:/a rw",  # ' - ext4' in the mount point
    "78 22 0:58 / /mnt/odd rw no separator here",
]


@pytest.mark.parametrize("line", LOCAL)
def test_local_filesystems_are_local(line: str) -> None:
    assert all_local("\n".join([ROOT, line]) + "\n")


@pytest.mark.parametrize("line", REMOTE)
def test_one_filesystem_that_may_wait_on_another_machine_is_enough_to_say_no(line: str) -> None:
    assert not all_local("\n".join([*LOCAL, line, LOCAL[1]]))


@pytest.mark.parametrize(
    ("arguments", "small"),
    [
        ({}, True),
        ({"path": "notes/a.txt", "n": 3, "flags": [True, None, 1.5]}, True),
        ({"text": "x" * (MAX_CHARS - 10)}, True),
        ({"text": "x" * (MAX_CHARS + 1)}, False),
        ({"x" * (MAX_CHARS + 1): 1}, False),  # a key is text too
        ({"parts": ["y" * 1000] * 17}, False),  # many strings that add up
        ({"items": list(range(MAX_VALUES))}, False),
        ({"items": list(range(MAX_VALUES // 2))}, True),
        ({"deep": [[[]]] * 5000}, False),
        ({"nested": {"a": {"b": {"c": {"d": "e"}}}}}, True),
        ({str(key): None for key in range(MAX_VALUES)}, False),
        ({"big": [0] * 1_000_000}, False),  # stops counting at once
    ],
)
def test_only_small_parameters_are_judged_on_the_loop(arguments: dict, small: bool) -> None:
    assert _small(arguments) is small


def test_the_mount_table_is_read_once_while_no_mount_changes() -> None:
    watch = MountWatch()
    answers = {watch.all_local() for _ in range(1000)}
    assert len(answers) == 1 and watch.reads == 1
    assert answers == {all_local(Path("/proc/self/mountinfo").read_text())}


def test_no_mount_table_means_never_on_the_loop(tmp_path: Path) -> None:
    watch = MountWatch(str(tmp_path / "no-such-table"))
    assert watch.all_local() is False and watch.all_local() is False and watch.reads == 0


WATCH_A_MOUNT = """
import subprocess, sys
from foundry.supervision import on_loop
watch = on_loop.MountWatch()
watch.all_local(); watch.all_local()
before = watch.reads
subprocess.run(["mount", "-t", "tmpfs", "tmpfs", sys.argv[1]], check=True)
watch.all_local(); watch.all_local()
print(before, watch.reads, "tmpfs" in open("/proc/self/mountinfo").read())
"""


def test_a_mount_made_while_running_is_seen_at_the_next_call(tmp_path: Path) -> None:
    """In a mount namespace of its own (unprivileged), a tmpfs mounted after the first look."""
    unshare = shutil.which("unshare")
    probe = [unshare or "unshare", "-rm", "mount", "-t", "tmpfs", "tmpfs", str(tmp_path)]
    if unshare is None or subprocess.run(probe, capture_output=True, check=False).returncode:
        pytest.skip("unprivileged mount namespaces (or mounts in them) are not available here")
    script = textwrap.dedent(WATCH_A_MOUNT)
    command = [unshare, "-rm", sys.executable, "-c", script, str(tmp_path)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.split() == ["1", "2", "True"]
