"""The tool definitions a person trusted, pinned per server in a JSON file every process shares.

When a person trusts a server (its command or connection: agent/trust.py), the first listing of
its tools after that is pinned: each tool's definition as `ToolInfo.definition()` gives it. A pin
set belongs to one agent file (its trust key), one server name and that server's consent
fingerprint, so re-trusting a changed command starts afresh. The app, `foundry run`/`chat` and
`foundry gateway` read and write the same file (`tool-pins.json` in Foundry's data folder): each
write merges what this process changed into what the file holds now, under a lock file, and
replaces the file atomically. Writes run on a worker thread when an event loop is running.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import os
import threading
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from foundry.agent.atomic import write_files_atomically
from foundry.home import FoundryHome

try:
    import fcntl
except ImportError:  # Windows: writes of two processes at the same time may lose one's pin
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger(__name__)

PIN_FILE = "tool-pins.json"

Definition = dict[str, Any]  # a tool's definition in `tools/list`'s shape (ToolInfo.definition)


@dataclass(frozen=True)
class ServerKey:
    """Whose pins: the agent's file (as trust keys it), the server's name, its consent."""

    agent: str
    server: str
    consent: str  # the fingerprint of the command or connection the person trusted

    @property
    def id(self) -> str:
        return hashlib.sha256(
            json.dumps([self.agent, self.server, self.consent]).encode()
        ).hexdigest()


class PinnedServer(BaseModel):
    """One server's pinned tools, and the concerns a person accepted about them."""

    agent: str
    server: str
    consent: str
    pinned_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    tools: dict[str, Definition] = Field(default_factory=dict)
    # tool -> digests of concerns a person approved having seen (a shadowing pair, say)
    accepted: dict[str, list[str]] = Field(default_factory=dict)
    removed: list[str] = Field(default_factory=list)  # pinned tools told as no longer listed


class _PinFile(BaseModel):
    version: int = 1
    servers: dict[str, PinnedServer] = Field(default_factory=dict)


def definition_digest(definition: Mapping[str, Any]) -> str:
    """The same digest for the same definition, whatever the order of its keys."""
    canonical = json.dumps(definition, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


class PinStore:
    """The pins of one file, as this process knows them: the file's, with its own changes over
    them until they are written."""

    _shared: dict[Path, PinStore] = {}
    _shared_lock = threading.Lock()

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.RLock()
        self._servers: dict[str, PinnedServer] = {}
        self._changed: set[str] = set()  # server ids changed here and not yet written
        self._seen: tuple[int, int] | None = None  # the file's (mtime_ns, size) when last read
        self._writes: set[asyncio.Future[None]] = set()
        self.version = 0  # counts the changes to the pins this process knows
        self.refresh()

    @classmethod
    def shared(cls, path: Path | None = None) -> PinStore:
        """The one store of `path` (the data folder's pin file by default) in this process, so
        that every session of an agent sees a pin as soon as one of them takes it."""
        path = path or FoundryHome.from_environment().data_dir / PIN_FILE
        with cls._shared_lock:
            if path not in cls._shared:
                cls._shared[path] = cls(path)
            return cls._shared[path]

    def pinned(self, key: ServerKey) -> PinnedServer | None:
        """The server's pins; None when nothing was pinned for it (its first listing pins)."""
        with self._lock:
            found = self._servers.get(key.id)
            return None if found is None else found.model_copy(deep=True)

    def pin(self, key: ServerKey, definitions: Mapping[str, Definition]) -> None:
        """Pin these tools' definitions (a server's first listing, or changes a person approved),
        keeping the server's other pins."""
        with self._lock:
            entry = self._entry(key)
            for tool, definition in definitions.items():
                entry.tools[tool] = dict(definition)
                entry.accepted.pop(tool, None)  # what was accepted was about another definition
            self._changed.add(key.id)
            self.version += 1
        self._save_soon()

    def accept(self, key: ServerKey, tool: str, digest: str) -> None:
        """Remember that a person approved a call of `tool` having seen the concern `digest`."""
        with self._lock:
            accepted = self._entry(key).accepted.setdefault(tool, [])
            if digest not in accepted:
                accepted.append(digest)
            self._changed.add(key.id)
            self.version += 1
        self._save_soon()

    def set_removed(self, key: ServerKey, tools: Collection[str]) -> None:
        """Remember which pinned tools were told as removed (they are told once, not in each
        session), until the server lists them again."""
        with self._lock:
            entry = self._entry(key)
            if set(entry.removed) == set(tools):
                return
            entry.removed = sorted(tools)
            self._changed.add(key.id)
            self.version += 1
        self._save_soon()

    def refresh(self) -> None:
        """Read the file again if another process changed it (a stat when it did not)."""
        try:
            stat = os.stat(self.path)
        except FileNotFoundError:
            return
        except OSError as error:
            log.warning("%s: cannot be read (%s)", self.path, error.strerror)
            return
        seen = (stat.st_mtime_ns, stat.st_size)
        if seen == self._seen:
            return
        with self._lock:
            self._merge_from(self._read())
            self._seen = seen
            self.version += 1

    async def saved(self) -> None:
        """Wait until every pin taken so far is written."""
        while self._writes:
            await asyncio.gather(*list(self._writes))

    def _entry(self, key: ServerKey) -> PinnedServer:
        entry = self._servers.get(key.id)
        if entry is None:
            entry = PinnedServer(agent=key.agent, server=key.server, consent=key.consent)
            self._servers[key.id] = entry
        return entry

    def _merge_from(self, stored: _PinFile) -> None:
        """The file's pins, with this process's unwritten changes over them."""
        mine = {server_id: self._servers[server_id] for server_id in self._changed}
        self._servers = {**stored.servers, **mine}

    def _save_soon(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._save()
            return
        write = loop.run_in_executor(None, self._save)
        self._writes.add(write)
        write.add_done_callback(self._writes.discard)

    def _save(self) -> None:
        """Merge this process's changes into the file as it is now and write it atomically."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock, _file_lock(self.path.with_name(self.path.name + ".lock")):
            self._merge_from(self._read())
            content = _PinFile(servers=self._servers).model_dump_json(indent=2) + "\n"
            try:
                write_files_atomically({self.path: content})
            except Exception:
                log.exception("%s: the tool pins could not be written", self.path)
                return
            self._changed.clear()
            stat = os.stat(self.path)
            self._seen = (stat.st_mtime_ns, stat.st_size)
            self.version += 1  # another process's pins may have come in with the merge

    def _read(self) -> _PinFile:
        try:
            return _PinFile.model_validate_json(self.path.read_bytes())
        except FileNotFoundError:
            return _PinFile()
        except (OSError, ValidationError) as error:
            # a damaged file pins nothing: each server's next listing is pinned afresh, as at
            # its first trust, and the file is replaced with the next write
            log.warning("%s: the tool pins cannot be read (%s)", self.path, error)
            return _PinFile()


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    """Hold the lock file of the pins, so that two processes' writes do not interleave."""
    if fcntl is None:
        yield
        return
    with open(path, "a+b") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
