"""Python logging for Foundry: a rotating file in the data folder, configured at start."""

from __future__ import annotations

import logging
import os
import sys
import threading
from io import TextIOWrapper
from logging.handlers import RotatingFileHandler
from pathlib import Path
from types import TracebackType
from typing import cast

from foundry.home import PRIVATE_FILE, PRIVATE_FOLDER, FoundryHome

LOG_FILE = "foundry.log"
MAX_BYTES = 1_000_000
BACKUPS = 5
FORMAT = "%(asctime)s %(levelname)-7s %(name)s [%(threadName)s] %(message)s"


class _FoundryLogFile(RotatingFileHandler):
    """The handler this module installs, so that configuring again replaces it; the files it
    makes (at start and at each rotation) are for their owner only."""

    def _open(self) -> TextIOWrapper:
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND
        descriptor = os.open(self.baseFilename, flags, PRIVATE_FILE)
        # kept open by the handler until it closes
        opened = open(descriptor, self.mode, encoding=self.encoding, errors=self.errors)  # noqa: SIM115
        return cast(TextIOWrapper, opened)


def log_path(home: FoundryHome | None = None) -> Path:
    return (home or FoundryHome.from_environment()).data_dir / "logs" / LOG_FILE


def configure_logging(home: FoundryHome | None = None, quiet: bool = False) -> Path | None:
    """Log Foundry's records (INFO and up) and everyone's warnings to the rotating log file.

    Configuring again with the same file changes nothing; another home's file replaces the
    earlier one. A folder that cannot be written is said on stderr (unless `quiet`: `foundry
    doctor` says it too), and the program goes on without a log file (returns None)."""
    path = log_path(home)
    root = logging.getLogger()
    current = [h for h in root.handlers if isinstance(h, _FoundryLogFile)]
    if any(Path(h.baseFilename) == path for h in current):
        return path
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=PRIVATE_FOLDER)
        handler = _FoundryLogFile(path, maxBytes=MAX_BYTES, backupCount=BACKUPS, encoding="utf-8")
    except OSError as error:
        if not quiet:
            print(f"foundry: no log file: cannot write {path} ({error.strerror})", file=sys.stderr)
        return None
    for old in current:
        root.removeHandler(old)
        old.close()
    handler.setFormatter(logging.Formatter(FORMAT))
    handler.setLevel(logging.INFO)
    root.addHandler(handler)
    if root.level > logging.INFO or root.level == logging.NOTSET:
        root.setLevel(logging.INFO)
    for noisy in ("httpx", "httpcore", "mcp", "alembic", "uvicorn.access"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    return path


def log_uncaught_exceptions() -> None:
    """Exceptions nobody caught, on any thread, go to the log (and on to the usual hooks)."""
    previous_hook = sys.excepthook
    previous_thread_hook = threading.excepthook
    log = logging.getLogger("foundry.uncaught")

    def on_exception(
        kind: type[BaseException], error: BaseException, trace: TracebackType | None
    ) -> None:
        log.critical("uncaught exception", exc_info=(kind, error, trace))
        previous_hook(kind, error, trace)

    def on_thread_exception(args: threading.ExceptHookArgs) -> None:
        if args.exc_value is not None:
            name = args.thread.name if args.thread else "a thread"
            error = (args.exc_type, args.exc_value, args.exc_traceback)
            log.critical("uncaught exception in %s", name, exc_info=error)
        previous_thread_hook(args)

    sys.excepthook = on_exception
    threading.excepthook = on_thread_exception
