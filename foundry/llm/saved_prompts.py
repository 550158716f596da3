"""The embedded model's state for earlier prompts, kept in files rather than in memory.

An agent and its supervisors take turns on one model, each with a long prompt of its own (its
rules, references and tools). llama.cpp reads a prompt once and answers the next request that
starts the same way from its cached state; for several callers taking turns it keeps copies of
the others' states, in memory (36 MiB after one reply of the sample assistant). Here the copies
go to files through llama.cpp's slot save and restore: 4 to 13 ms a switch, and the operating
system keeps the files in its page cache while memory is free, or drops them when it is not.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
import time
import urllib.request
from collections import OrderedDict
from pathlib import Path
from typing import Any, Protocol

log = logging.getLogger(__name__)

FILES_BUDGET_BYTES = 512 * 2**20  # the model's full context, 4,096 tokens, takes 46 MiB
STALE_AFTER_S = 24 * 3600  # a folder untouched this long was left by a process that crashed
FOLDER_PREFIX = "prompts-"


def prompt_key(body: dict[str, Any]) -> str:
    """Who is asking, as the model reads it: the first message (an agent's or a supervisor's
    instructions) and the tools on offer, which the chat template renders first."""
    messages = body.get("messages") or [None]
    opening = json.dumps([messages[0], body.get("tools")], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(opening.encode()).hexdigest()[:32]


class Endpoints(Protocol):
    """What saving and restoring needs of the runtime's HTTP endpoints (a fake in tests)."""

    def post(self, path: str, body: dict[str, Any]) -> Any: ...


class Loopback:
    """The runtime's HTTP endpoints on 127.0.0.1, which answer only requests with its key."""

    def __init__(self, address: str, key: str) -> None:
        self._address = address
        self._headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}

    def get(self, path: str, timeout_s: float = 10) -> Any:
        return self._send(urllib.request.Request(f"{self._address}{path}"), timeout_s)

    def post(self, path: str, body: dict[str, Any]) -> Any:
        request = urllib.request.Request(
            f"{self._address}{path}", data=json.dumps(body).encode(), method="POST"
        )
        return self._send(request, timeout_s=60)

    def _send(self, request: urllib.request.Request, timeout_s: float) -> Any:
        for name, value in self._headers.items():
            request.add_header(name, value)
        with urllib.request.urlopen(request, timeout=timeout_s) as answer:
            return json.load(answer)


class SavedPrompts:
    """Which caller's state the model holds, and the others' in files of a private folder, at
    most FILES_BUDGET_BYTES of them (the least recently used go first). Used from the runtime's
    one worker thread only, between completions."""

    def __init__(self, folder: Path, budget_bytes: int = FILES_BUDGET_BYTES) -> None:
        self.folder = folder
        self._budget = budget_bytes
        self._held: str | None = None  # the key of the state in the model now
        self._files: OrderedDict[str, int] = OrderedDict()  # key -> bytes, oldest first
        self._working = True

    @classmethod
    def in_private_folder(cls, root: Path, budget_bytes: int = FILES_BUDGET_BYTES) -> SavedPrompts:
        """A new folder of this process's under `root`, readable by its user only (the files
        hold the prompts' tokens); folders left long ago by crashed processes are removed."""
        root.mkdir(parents=True, exist_ok=True)
        _remove_stale(root)
        return cls(Path(tempfile.mkdtemp(prefix=FOLDER_PREFIX, dir=root)), budget_bytes)

    @property
    def slot_save_path(self) -> str:
        """The folder as llama.cpp takes it: it appends file names without a separator."""
        return os.path.join(self.folder, "")

    def switch_to(self, key: str, slots: Endpoints) -> None:
        """Before a completion for `key`: the state held saved under its own key, and `key`'s
        restored when it was saved before. A failure costs speed only: llama.cpp then reads
        the whole prompt, and files are not used again in this process."""
        if key == self._held or not self._working:
            return
        try:
            if self._held is not None:
                self._save(self._held, slots)
            if key in self._files:
                self._restore(key, slots)
        except (OSError, ValueError, KeyError) as error:
            self._working = False
            log.warning("earlier prompts are read again from now on: %s", error)
        self._held = key

    def _save(self, key: str, slots: Endpoints) -> None:
        answer = slots.post("/slots/0?action=save", {"filename": key})
        os.utime(self.folder)  # in use: not stale
        self._files[key] = int(answer["n_written"])
        self._files.move_to_end(key)
        while sum(self._files.values()) > self._budget and len(self._files) > 1:
            oldest, _ = self._files.popitem(last=False)
            (self.folder / oldest).unlink(missing_ok=True)

    def _restore(self, key: str, slots: Endpoints) -> None:
        self._files.move_to_end(key)
        slots.post("/slots/0?action=restore", {"filename": key})

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


def _remove_stale(root: Path) -> None:
    now = time.time()
    for folder in root.glob(f"{FOLDER_PREFIX}*"):
        try:
            if now - folder.stat().st_mtime > STALE_AFTER_S:
                shutil.rmtree(folder, ignore_errors=True)
        except OSError:
            continue
