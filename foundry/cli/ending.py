"""Ending a command's process at once once its work is closed, without the interpreter's teardown.

After `foundry run` has printed its reply and closed its engine (the store committed and closed,
the tool servers stopped), Python's own teardown still frees every module and object one by one:
2.3 s with the embedded model loaded, measured on the 2-core machine (bench/first_run.py), most
of the wait between the reply and the prompt. The cleanups registered with `atexit` (log files
flushed, temporary prompt files removed, executors joined) still run; only that teardown is
skipped.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sys


def end_process(code: int) -> None:
    """Run the exit handlers, flush the standard streams and end the process with `code`."""
    atexit._run_exitfuncs()  # the handlers a normal exit would run
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # closed, or a reader that left
            stream.flush()
    os._exit(code)
