"""Who runs a session's turn: a name for this engine that says where it runs, and whether the
process a name points at has stopped (so that its turn can be taken over at once)."""

from __future__ import annotations

import os
import secrets
import socket
import sys

HOST_CHARS = 10  # the store keeps at most 32 characters of "running:NAME"


def this_host() -> str:
    return socket.gethostname()[:HOST_CHARS]


def new_runner() -> str:
    """`PID.TAG@HOST`: this process, one of its engines, this machine."""
    return f"{os.getpid()}.{secrets.token_hex(2)}@{this_host()}"


def runner_stopped(runner: str) -> bool:
    """Whether `runner` is known to have stopped: a process of this machine that is gone. Any
    other runner (another machine, a name of another form) is judged by its heartbeat only."""
    process, _, host = runner.partition("@")
    pid_text = process.partition(".")[0]
    if host != this_host() or not pid_text.isdigit() or sys.platform == "win32":
        return False  # on Windows, os.kill(pid, 0) would send CTRL_C_EVENT
    pid = int(pid_text)
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, another user's
        return False
    return False
