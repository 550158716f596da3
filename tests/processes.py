"""Waiting for a child process in a test: one that does not finish in time fails the test with
what it printed (a bare "timed out" says nothing about why, and the output is lost)."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Sequence
from typing import Any, NoReturn

import pytest

RUN_TIMEOUT_S = 120.0


def run_to_the_end(
    command: Sequence[str], timeout_s: float = RUN_TIMEOUT_S, **options: Any
) -> subprocess.CompletedProcess[str]:
    """`subprocess.run` with its output captured as text; past `timeout_s` the process is
    killed and the test fails, showing its stdout and stderr."""
    options = {"capture_output": True, "text": True, **options}
    try:
        return subprocess.run(list(command), timeout=timeout_s, **options)
    except subprocess.TimeoutExpired as expired:
        _fail(command, timeout_s, expired.stdout, expired.stderr)


def wait_for_exit(process: subprocess.Popen[Any], timeout_s: float, stderr_so_far: str = "") -> int:
    """The exit code of `process` once it ends; past `timeout_s` it is killed and the test
    fails, showing what it printed on the pipes it has (after `stderr_so_far`, read before)."""
    try:
        return process.wait(timeout_s)
    except subprocess.TimeoutExpired:
        process.kill()
        stdout, stderr = process.communicate(timeout=10)
        _fail(process.args, timeout_s, stdout, stderr_so_far + (_text(stderr) or ""))


async def exited(
    process: asyncio.subprocess.Process, timeout_s: float, command: Sequence[str] = ()
) -> int:
    """`wait_for_exit` for a process of asyncio's."""
    try:
        return await asyncio.wait_for(process.wait(), timeout_s)
    except TimeoutError:
        process.kill()
        stdout = await process.stdout.read() if process.stdout is not None else None
        stderr = await process.stderr.read() if process.stderr is not None else None
        _fail(command or ["the process"], timeout_s, stdout, stderr)


def _fail(command: Any, timeout_s: float, stdout: Any, stderr: Any) -> NoReturn:
    shown = command if isinstance(command, str) else " ".join(map(str, command))
    pytest.fail(
        f"{shown} did not finish within {timeout_s:g} s (killed); it printed:\n"
        f"--- stdout ---\n{_text(stdout) or '(nothing)'}\n"
        f"--- stderr ---\n{_text(stderr) or '(nothing)'}",
        pytrace=False,
    )


def _text(output: Any) -> str | None:
    if isinstance(output, bytes):
        return output.decode("utf-8", "replace")
    return output
