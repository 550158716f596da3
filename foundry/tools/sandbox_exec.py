"""Confines this process with Landlock (and a network namespace when asked), then runs a server.

Run as `python -I -S sandbox_exec.py SPEC -- COMMAND ARGS...`, where SPEC is JSON:
`{"read": [...], "execute": [...], "write": [...], "network": bool}`. The ruleset is applied to
this process, which then replaces itself with COMMAND: the server starts confined, and everything
it runs inherits the confinement (Landlock cannot be lifted once applied). Any failure to confine
ends here with exit status 126 and the reason on stderr: nothing runs unconfined by accident.

This file imports only the standard library, so that it runs with `-I -S` (no site, no working
folder on the path) before anything of the server's or Foundry's is loaded.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import platform
import sys
from collections.abc import Iterable, Sequence

# Syscall numbers: the same on x86-64 and on the architectures of the generic table (arm64).
SYS_CREATE_RULESET = 444
SYS_ADD_RULE = 445
SYS_RESTRICT_SELF = 446
CREATE_RULESET_VERSION = 1 << 0
RULE_PATH_BENEATH = 1
PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
AF_UNIX = 1
# (audit architecture, number of socket(2)) for the architectures Foundry runs on
SOCKET_SYSCALL = {"x86_64": (0xC000003E, 41), "aarch64": (0xC00000B7, 198),
                  "arm64": (0xC00000B7, 198)}  # fmt: skip
X32_BIT = 0x40000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000

EXECUTE = 1 << 0
WRITE_FILE = 1 << 1
READ_FILE = 1 << 2
READ_DIR = 1 << 3
REMOVE_DIR = 1 << 4
REMOVE_FILE = 1 << 5
MAKE_CHAR = 1 << 6
MAKE_DIR = 1 << 7
MAKE_REG = 1 << 8
MAKE_SOCK = 1 << 9
MAKE_FIFO = 1 << 10
MAKE_BLOCK = 1 << 11
MAKE_SYM = 1 << 12
REFER = 1 << 13  # ABI 2
TRUNCATE = 1 << 14  # ABI 3
IOCTL_DEV = 1 << 15  # ABI 5
NET_BIND_TCP = 1 << 0  # ABI 4
NET_CONNECT_TCP = 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1

FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV
READ_RIGHTS = READ_FILE | READ_DIR
WRITE_RIGHTS = (
    WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_DIR | MAKE_REG | MAKE_SOCK | MAKE_FIFO
    | MAKE_SYM | REFER | TRUNCATE
)  # fmt: skip
CONFINE_FAILED = 126


class ConfinementError(OSError):
    """The kernel refused to confine this process."""


class _Filter(ctypes.Structure):
    _fields_ = [
        ("code", ctypes.c_uint16),
        ("jt", ctypes.c_uint8),
        ("jf", ctypes.c_uint8),
        ("k", ctypes.c_uint32),
    ]


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_Filter))]


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _syscall(number: int, *args: object) -> int:
    result = int(_libc().syscall(ctypes.c_long(number), *args))
    if result < 0:
        code = ctypes.get_errno()
        raise ConfinementError(code, os.strerror(code))
    return result


def abi_version() -> int:
    """The Landlock ABI this kernel offers; 0 where it offers none (not Linux, too old, off)."""
    if sys.platform != "linux" or platform.machine() not in ("x86_64", "aarch64", "arm64"):
        return 0
    try:
        return _syscall(SYS_CREATE_RULESET, None, ctypes.c_size_t(0), CREATE_RULESET_VERSION)
    except (ConfinementError, OSError, AttributeError):
        return 0


def handled_fs(abi: int) -> int:
    """Every filesystem right this ABI knows: what is not granted is refused."""
    rights = (1 << 13) - 1
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    if abi >= 5:
        rights |= IOCTL_DEV
    return rights


def restrict(
    read: Iterable[str],
    execute: Iterable[str],
    write: Iterable[str],
    network: bool,
) -> None:
    """Confine this process: read `read`, read and run `execute`, read and change `write`;
    TCP only when `network`. Paths that do not exist are skipped."""
    abi = abi_version()
    if abi < 1:
        raise ConfinementError(errno.ENOSYS, "this kernel offers no Landlock")
    fs = handled_fs(abi)
    attr = _RulesetAttr(fs, 0 if network or abi < 4 else NET_BIND_TCP | NET_CONNECT_TCP, 0)
    if abi >= 6:
        attr.scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL
    size = ctypes.sizeof(ctypes.c_uint64) * (1 if abi < 4 else 2 if abi < 6 else 3)
    ruleset = _syscall(SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), 0)
    try:
        for paths, rights in (
            (read, READ_RIGHTS),
            (execute, READ_RIGHTS | EXECUTE),
            (write, READ_RIGHTS | WRITE_RIGHTS | IOCTL_DEV),
        ):
            for path in paths:
                _allow(ruleset, path, rights & fs)
        if _libc().prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise ConfinementError(ctypes.get_errno(), "no_new_privs was refused")
        _syscall(SYS_RESTRICT_SELF, ruleset, 0)
    finally:
        os.close(ruleset)


def _allow(ruleset: int, path: str, rights: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # nothing there to grant
    try:
        if not os.path.isdir(f"/proc/self/fd/{fd}"):
            rights &= FILE_RIGHTS
        rule = _PathBeneathAttr(rights, fd)
        _syscall(SYS_ADD_RULE, ruleset, RULE_PATH_BENEATH, ctypes.byref(rule), 0)
    finally:
        os.close(fd)


def refuse_unix_sockets() -> None:
    """Refuse socket(AF_UNIX, ...) from here on (seccomp): a namespace of its own keeps a
    server off the network, but not off the Unix sockets on the filesystem (Docker's, the
    session bus), which Landlock ABI 7 does not cover. Pairs (socketpair) still work."""
    arch, socket_nr = SOCKET_SYSCALL[platform.machine()]
    ld_w_abs, jeq, ret = 0x20, 0x15, 0x06
    refuse = 0x00050000 | errno.EACCES  # SECCOMP_RET_ERRNO
    instructions = [
        (ld_w_abs, 0, 0, 4),  # seccomp_data.arch
        (jeq, 1, 0, arch),
        (ret, 0, 0, 0x80000000),  # another architecture's calls: the process is killed
        (ld_w_abs, 0, 0, 0),  # seccomp_data.nr
        (0x35, 0, 1, X32_BIT),  # jge: x32 calls on x86-64 are refused outright
        (ret, 0, 0, refuse),
        (jeq, 0, 3, socket_nr),
        (ld_w_abs, 0, 0, 16),  # seccomp_data.args[0], low word: the address family
        (jeq, 0, 1, AF_UNIX),
        (ret, 0, 0, refuse),
        (ret, 0, 0, 0x7FFF0000),  # SECCOMP_RET_ALLOW
    ]
    filters = (_Filter * len(instructions))(*(_Filter(*i) for i in instructions))
    program = _Program(len(instructions), filters)
    if _libc().prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise ConfinementError(ctypes.get_errno(), "no_new_privs was refused")
    if _libc().prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(program), 0, 0) != 0:
        raise ConfinementError(ctypes.get_errno(), "the seccomp filter was refused")


def isolate_network() -> bool:
    """Move this process into a network namespace of its own (no interface up, not even
    loopback), so that no packet leaves it; False where the kernel refuses both ways in."""
    libc = _libc()
    if libc.unshare(CLONE_NEWNET) == 0:
        return True
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0:
        return False
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"),
                       ("gid_map", f"{gid} {gid} 1")):  # fmt: skip
        with open(f"/proc/self/{name}", "w") as file:
            file.write(text)
    return True


def _found(program: str) -> str:
    """The file `program` names, looked up on PATH as exec would when it has no slash."""
    if "/" in program:
        return program
    for folder in os.get_exec_path():
        candidate = os.path.join(folder, program)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return program


def main(argv: Sequence[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        print("usage: sandbox_exec.py SPEC -- COMMAND [ARGS...]", file=sys.stderr)
        return 2
    spec = json.loads(argv[0])
    command = list(argv[2:])
    program = _found(command[0])  # before confining: the lookup imports from Python's own files
    try:
        if not spec["network"] and not isolate_network():
            print("foundry: no network namespace here; TCP is refused, UDP is not", file=sys.stderr)
        restrict(spec["read"], spec["execute"], spec["write"], spec["network"])
        if not spec["network"]:
            refuse_unix_sockets()
    except (ConfinementError, OSError) as exc:
        print(f"foundry: could not confine the server: {exc}", file=sys.stderr)
        return CONFINE_FAILED
    try:
        os.execv(program, command)
    except OSError as exc:
        print(f"foundry: could not run {command[0]!r}: {exc.strerror}", file=sys.stderr)
        return 127 if exc.errno == errno.ENOENT else CONFINE_FAILED
    return CONFINE_FAILED  # not reached: exec replaced this process


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
