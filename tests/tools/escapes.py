"""A campaign of escapes from a server's workspace, with no policy in the way: only the kernel.

Servers are started by Foundry's ToolHost, serving `workspace`, and asked straight (no gate) to
reach what lies outside: the reference filesystem server rooted above the workspace (so its own
checks let everything through), and tests/tools/hostile_server.py started as itself, through
`sh -c "exec ..."` and through `env`. Attempts: symlinks swapped in while calls run, hard links
and symlinks made by the server, renames in and out, reads of files outside, of /etc/shadow and
of Foundry's trust store, writes outside and into the server's own code and installation,
programs run from outside and from the workspace, TCP and UDP to a listener on loopback and a
Unix socket outside (as Docker's or the session bus's would be), and a
module planted in the agent's folder for `python -m` to import. An escape is any attempt that
returned or changed what lies outside. Used by tests/tools/test_confinement.py and
bench/escapes.py.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import sys
import sysconfig
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from foundry.agent.models import McpServerConfig, StdioServer
from foundry.tools.host import ToolHost

NPM_BIN = Path(__file__).parents[1] / "gateway" / "npm" / "node_modules" / ".bin"
HOSTILE = Path(__file__).with_name("hostile_server.py")
SECRET = "CROWN-JEWELS-7731"
PLANTED_MARK = "planted-module-ran"


@dataclass
class Place:
    root: Path
    workspace: Path
    outside: Path
    server_code: Path
    trust_store: Path


@dataclass
class Tally:
    attempts: Counter[str] = field(default_factory=Counter)
    escapes: Counter[str] = field(default_factory=Counter)
    examples: list[str] = field(default_factory=list)

    def count(self, kind: str, escaped: bool, what: str) -> None:
        self.attempts[kind] += 1
        if escaped:
            self.escapes[kind] += 1
            self.examples.append(f"{kind}: {what}")

    @property
    def total(self) -> int:
        return sum(self.attempts.values())

    @property
    def escaped(self) -> int:
        return sum(self.escapes.values())


def make_place(root: Path) -> Place:
    workspace = root / "workspace"
    outside = root / "outside"
    server_code = root / "server"
    for folder in (workspace / "sub", outside / "dir", server_code, root / "home" / "data"):
        folder.mkdir(parents=True, exist_ok=True)
    (workspace / "notes.md").write_text("inside\n")
    (outside / "secret.txt").write_text(f"{SECRET}\n")
    (outside / "target.txt").write_text("untouched\n")
    (outside / "dir" / "deep.txt").write_text(f"{SECRET} deep\n")
    shutil.copy(HOSTILE, server_code / "hostile_server.py")
    trust_store = root / "home" / "data" / "trusted-agents.json"
    trust_store.write_text(f'{{"note": "{SECRET}"}}\n')
    return Place(root, workspace, outside, server_code, trust_store)


def servers(place: Place) -> dict[str, McpServerConfig]:
    script = str(place.server_code / "hostile_server.py")
    offline = {"network": False}
    configs: dict[str, Any] = {
        "hostile": {"command": sys.executable, "args": [script], "confinement": offline},
        "wrapped": {"command": "sh", "args": ["-c", f"exec {sys.executable} {script}"],
                    "confinement": offline},
        "env-wrapped": {"command": "env", "args": ["MODE=x", sys.executable, script],
                        "confinement": offline},
    }  # fmt: skip
    if (NPM_BIN / "mcp-server-filesystem").exists():
        configs["fs"] = {"command": str(NPM_BIN / "mcp-server-filesystem"),
                         "args": [str(place.root)]}  # fmt: skip
    return {name: StdioServer.model_validate(config) for name, config in configs.items()}


async def run_campaign(place: Place, races: int = 60) -> Tally:
    """Every attempt once per hostile server, `races` swaps per racing kind."""
    tally = Tally()
    with listeners(unix_path(place)) as (tcp, udp, unix):
        assert unix is not None
        async with ToolHost(servers(place), place.workspace, workspace=place.workspace) as host:
            failed = [s for s in host.statuses() if s.state != "running"]
            if failed:
                raise RuntimeError(f"servers did not start: {failed}")
            for server in ("hostile", "wrapped", "env-wrapped"):
                await _direct(host, server, place, tally, tcp.port, udp.port)
                answer = await _call(host, f"{server}.check_socket", path=str(unix_path(place)))
                tally.count("network", answer.startswith("ok"), f"{server} unix socket: {answer}")
            await _races(host, "hostile", "read_file", place, tally, races)
            if host.tool("fs.read_text_file") is not None:
                await _filesystem(host, place, tally)
                await _races(host, "fs", "read_text_file", place, tally, races)
                await _write_races(host, place, tally, races)
        heard = tcp.received or udp.received or unix.received
        tally.count("network", heard, "a listener on loopback or a Unix socket heard us")
    await _planted_module(place, tally)
    return tally


async def _call(tools: ToolHost, name: str, **arguments: str) -> str:
    return (await tools.call(name, arguments, timeout_s=30)).text


def unix_path(place: Place) -> Path:
    return place.outside / "daemon.sock"


def _outside_changed(place: Place) -> bool:
    return (place.outside / "target.txt").read_text() != "untouched\n" or any(
        path.name not in ("secret.txt", "target.txt", "dir", "deep.txt", "daemon.sock")
        for path in place.outside.rglob("*")
    )


async def _direct(
    host: ToolHost, server: str, place: Place, tally: Tally, tcp: int, udp: int
) -> None:
    out, ws = place.outside, place.workspace
    site = sysconfig.get_paths()["purelib"]
    reads = {
        "read outside": str(out / "secret.txt"),
        "read outside by ..": str(ws / ".." / "outside" / "secret.txt"),
        "read the trust store": str(place.trust_store),
        "read /etc/shadow": "/etc/shadow",
        "read its own code's folder": str(place.server_code),
    }
    for what, path in reads.items():
        answer = await _call(host, f"{server}.read_file", path=path)
        escaped = answer.startswith("ok") and (SECRET in answer or path == "/etc/shadow")
        tally.count("read outside", escaped, f"{server} {what}: {answer[:80]}")
    listing = await _call(host, f"{server}.list_directory", path=str(out))
    tally.count("read outside", listing.startswith("ok"), f"{server} listed outside")
    writes = {
        "write outside": str(out / "target.txt"),
        "write its own code": str(place.server_code / "hostile_server.py"),
        "write into the installation": os.path.join(site, f"foundry_escape_{server}.py"),
        "write the trust store": str(place.trust_store),
    }
    for what, path in writes.items():
        before = _snapshot(path)
        answer = await _call(host, f"{server}.write_file", path=path, content="import evil")
        tally.count("write outside", _snapshot(path) != before, f"{server} {what}: {answer}")
        _restore(path, before)
    for kind, tool in (("hard link", "hard_link"), ("symlink", "symlink")):
        link = str(ws / f"{server}-{kind.replace(' ', '-')}")
        answer = await _call(
            host, f"{server}.{tool}", source=str(out / "secret.txt"), destination=link
        )
        tally.count("links made by the server", SECRET in answer, f"{server} {kind}: {answer}")
        Path(link).unlink(missing_ok=True)
    moved_in = await _call(
        host, f"{server}.rename", source=str(out / "secret.txt"), destination=str(ws / "in.txt")
    )
    tally.count("rename", not (out / "secret.txt").exists(), f"{server} moved in: {moved_in}")
    _put_back(out / "secret.txt", ws / "in.txt")
    (ws / "leaving.txt").write_text("x")
    await _call(
        host, f"{server}.rename", source=str(ws / "leaving.txt"), destination=str(out / "gone.txt")
    )
    tally.count("rename", (out / "gone.txt").exists(), f"{server} moved out")
    (out / "gone.txt").unlink(missing_ok=True)
    ran = await _call(host, f"{server}.stat_file", command=f"cat {out / 'secret.txt'}")
    tally.count("programs", SECRET in ran, f"{server} ran cat outside: {ran[:80]}")
    script = ws / f"{server}-run.sh"
    await _call(
        host, f"{server}.write_file", path=str(script), content=f"#!/bin/sh\ncat {out}/secret.txt\n"
    )
    script.chmod(0o755)
    ran = await _call(host, f"{server}.stat_file", command=str(script))
    tally.count("programs", SECRET in ran, f"{server} ran a script it wrote: {ran[:80]}")
    for tool, port in (("check_host", tcp), ("ping_host", udp)):
        answer = await _call(host, f"{server}.{tool}", host="127.0.0.1", port=str(port))
        tally.count("network", answer.startswith("ok"), f"{server} {tool}: {answer}")
    tally.count("write outside", _outside_changed(place), f"{server}: something outside changed")


def _snapshot(path: str) -> bytes | None:
    try:
        return Path(path).read_bytes()
    except OSError:
        return None


def _restore(path: str, before: bytes | None) -> None:
    if before is None:
        Path(path).unlink(missing_ok=True)
    elif Path(path).read_bytes() != before:
        Path(path).write_bytes(before)


def _put_back(original: Path, moved: Path) -> None:
    if not original.exists() and moved.exists():
        moved.rename(original)


async def _filesystem(host: ToolHost, place: Place, tally: Tally) -> None:
    """The reference server rooted above the workspace: its own checks allow all of root."""
    out, ws = place.outside, place.workspace
    for path in (out / "secret.txt", out / "dir" / "deep.txt", place.trust_store):
        answer = await _call(host, "fs.read_text_file", path=str(path))
        tally.count("read outside", SECRET in answer, f"fs read {path.name}")
    for tool in ("list_directory", "directory_tree"):
        answer = await _call(host, f"fs.{tool}", path=str(out))
        tally.count("read outside", "secret.txt" in answer, f"fs {tool} outside")
    searched = await _call(host, "fs.search_files", path=str(place.root), pattern="secret")
    tally.count("read outside", "secret.txt" in searched, "fs search_files found outside")
    for path in (out / "target.txt", out / "new.txt", place.server_code / "hostile_server.py"):
        before = _snapshot(str(path))
        await host.call("fs.write_file", {"path": str(path), "content": "evil"}, timeout_s=30)
        tally.count("write outside", _snapshot(str(path)) != before, f"fs wrote {path.name}")
        _restore(str(path), before)
    (ws / "leaving.txt").write_text("x")
    await _call(
        host, "fs.move_file", source=str(ws / "leaving.txt"), destination=str(out / "gone.txt")
    )
    tally.count("rename", (out / "gone.txt").exists(), "fs moved a file out")
    (out / "gone.txt").unlink(missing_ok=True)
    await host.call("fs.create_directory", {"path": str(out / "made")}, timeout_s=30)
    tally.count("write outside", (out / "made").exists(), "fs made a folder outside")
    shutil.rmtree(out / "made", ignore_errors=True)


@contextmanager
def _swapping(link: Path, target: Path) -> Iterator[None]:
    """`link` flips between a file in the workspace and a symlink to `target`, as fast as it
    can, until the block ends: whatever a server checked, the next moment it is the other."""
    stop = threading.Event()
    plain = link.with_name(link.name + ".plain")
    pointer = link.with_name(link.name + ".link")

    def flip() -> None:
        while not stop.is_set():
            plain.write_text("inside\n")
            os.replace(plain, link)
            pointer.unlink(missing_ok=True)
            pointer.symlink_to(target)
            os.replace(pointer, link)

    thread = threading.Thread(target=flip, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        for path in (link, plain, pointer):
            path.unlink(missing_ok=True)


async def _races(
    host: ToolHost, server: str, tool: str, place: Place, tally: Tally, count: int
) -> None:
    link = place.workspace / f"race-{server}.txt"
    with _swapping(link, place.outside / "secret.txt"):
        for _ in range(count):
            answer = await _call(host, f"{server}.{tool}", path=str(link))
            tally.count("symlink swapped in", SECRET in answer, f"{server} read through a swap")


async def _write_races(host: ToolHost, place: Place, tally: Tally, count: int) -> None:
    link = place.workspace / "race-write.txt"
    target = place.outside / "target.txt"
    with _swapping(link, target):
        for index in range(count):
            await host.call(
                "fs.write_file", {"path": str(link), "content": f"evil {index}"}, timeout_s=30
            )
            changed = target.read_text() != "untouched\n"
            tally.count("symlink swapped in", changed, "fs wrote through a swap")
            if changed:
                target.write_text("untouched\n")


async def _planted_module(place: Place, tally: Tally) -> None:
    """An allowed write of `mcp_server_time.py` into the agent's folder (the time server's
    working folder) must not be what `python -m mcp_server_time` runs next."""
    mark = place.outside / PLANTED_MARK
    planted = place.workspace / "mcp_server_time.py"
    planted.write_text(f"open({str(mark)!r}, 'w').write('ran')\nraise SystemExit(1)\n")
    time_server = StdioServer(command="python", args=["-m", "mcp_server_time"])
    try:
        async with ToolHost({"time": time_server}, place.workspace) as host:
            running = host.statuses()[0].state == "running"
        tally.count(
            "planted code", mark.exists() or not running, "python -m ran the planted module"
        )
    finally:
        planted.unlink(missing_ok=True)
        mark.unlink(missing_ok=True)


@contextmanager
def listeners(unix: Path | None = None) -> Iterator[tuple[_Listener, _Listener, _Listener | None]]:
    """A TCP and a UDP socket on loopback, and a Unix socket at `unix` when given."""
    tcp, udp = _Listener(socket.SOCK_STREAM), _Listener(socket.SOCK_DGRAM)
    local = None if unix is None else _Listener(socket.SOCK_STREAM, unix)
    try:
        yield tcp, udp, local
    finally:
        for listener in (tcp, udp, local):
            if listener is not None:
                listener.close()


class _Listener:
    """A socket on loopback that remembers whether anything reached it."""

    def __init__(self, kind: int, path: Path | None = None) -> None:
        self.received = False
        self._socket = socket.socket(socket.AF_INET if path is None else socket.AF_UNIX, kind)
        self._socket.bind(("127.0.0.1", 0) if path is None else str(path))
        self._socket.settimeout(0.2)
        if kind == socket.SOCK_STREAM:
            self._socket.listen()
        self.port = self._socket.getsockname()[1] if path is None else 0
        self._kind = kind
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._listen, daemon=True)
        self._thread.start()

    def _listen(self) -> None:
        while not self._stop.is_set():
            try:
                if self._kind == socket.SOCK_STREAM:
                    connection, _ = self._socket.accept()
                    connection.close()
                else:
                    self._socket.recvfrom(64)
                self.received = True
            except OSError:
                continue

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self._socket.close()


def run(root: Path, races: int = 60) -> Tally:
    return asyncio.run(run_campaign(make_place(root), races))
