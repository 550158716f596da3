"""Attacks on the MCP gateway from the client's side, with real parts: the SDK's client in front of
`foundry gateway`, the reference filesystem server behind it, the agent's default policy.

Each case is labelled with what must happen:
- allowed: the call runs (and a plain read in the workspace never asks anyone);
- denied: the policy refuses it, a tool error naming the rule, nothing runs;
- asked: a person is asked (an approval appears; the test denies it), nothing runs meanwhile;
- rejected: the gateway refuses it before any decision (no approval, nothing runs): a name it
  does not offer, arguments its tool's schema refuses, a protocol error.

The workspace is the agent's folder; the filesystem server may reach all of its parent, so only
the gateway and the policy keep calls inside the workspace.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from concurrent.futures import Future
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import httpx
import mcp.types as mcp_types
import pytest
from mcp import ClientSession
from mcp.shared.exceptions import MCPError

from foundry.cli import main
from foundry.gateway.stdio import LINE_LIMIT, too_deep_refusal
from foundry.home import FoundryHome
from foundry.metrics.terms import resolution_level
from foundry.store import Store
from foundry.supervision.resolution import resolve_approval
from tests.gateway.test_gateway_http import free_port, http_client
from tests.gateway.test_gateway_stdio import gateway, text_of
from tests.gateway.test_gateway_third_party import (  # noqa: F401 (pytestmark: skip w/o npm)
    BIN,
    inspector,
    pytestmark,
)

T = TypeVar("T")
ANSWER_S = 60


@dataclass(frozen=True)
class Place:
    """Where the attacks happen: the agent's folder (the workspace) and what lies around it."""

    root: Path
    workspace: Path
    home: FoundryHome

    @property
    def outside(self) -> Path:
        return self.root / "outside"


class SharedGateway:
    """One `foundry gateway` process and an SDK client to it, on a loop in a thread of its own,
    shared by every case of the module (each case's calls differ, so loop detection stays out of
    the way of the cases that do not test it)."""

    def __init__(self, place: Place) -> None:
        self.place = place
        self.client: ClientSession | None = None
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._stop: asyncio.Event | None = None
        self._serving: Future[None] | None = None

    def start(self) -> None:
        self._thread.start()
        ready: Future[None] = Future()
        self._serving = asyncio.run_coroutine_threadsafe(self._serve(ready), self._loop)
        ready.result(ANSWER_S)

    async def _serve(self, ready: Future[None]) -> None:
        self._stop = asyncio.Event()
        try:
            async with gateway(self.place.workspace, self.place.home.config_dir.parent) as client:
                self.client = client
                ready.set_result(None)
                await self._stop.wait()
        except BaseException as error:
            if not ready.done():
                ready.set_exception(error)
            raise

    def run(self, work: Callable[[ClientSession], Coroutine[Any, Any, T]]) -> T:
        assert self.client is not None
        return asyncio.run_coroutine_threadsafe(work(self.client), self._loop).result(ANSWER_S)

    def call(self, name: str, arguments: dict[str, Any]) -> Any:
        return self.run(lambda client: client.call_tool(name, arguments))

    def close(self) -> None:
        if self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        if self._serving is not None:
            self._serving.result(ANSWER_S)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(ANSWER_S)


def filesystem_agent(root: Path) -> Path:
    """The default policy in front of the reference filesystem server (reaching all of `root`);
    `move_file` is `manual` (never offered), the other tools need no permission of their own."""
    workspace = root / "agent"
    assert main(["create-agent", str(workspace), "--name", "Files"]) == 0
    config = json.loads((workspace / "tsagent.json").read_text())
    config["mcpServers"] = {
        "fs": {
            "type": "stdio",
            "command": str(BIN / "mcp-server-filesystem"),
            "args": [str(root)],
            "serverToolDefaults": {"include": "always", "permissionRequired": False},
            "tools": {"move_file": {"include": "manual"}},
        }
    }
    (workspace / "tsagent.json").write_text(json.dumps(config))
    assert main(["trust", "--yes", str(workspace)]) == 0
    return workspace


@pytest.fixture(scope="module")
def place(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Place]:
    root = tmp_path_factory.mktemp("attacks").resolve()
    with pytest.MonkeyPatch.context() as env:
        env.setenv("FOUNDRY_HOME", str(root / "home"))
        env.delenv("FOUNDRY_DATABASE_URL", raising=False)
        workspace = filesystem_agent(root)
    (workspace / "notes.md").write_text("inside: heliotrope\n")
    (workspace / "sub").mkdir()
    (workspace / "sub" / "deep.md").write_text("deep inside\n")
    outside = root / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("outside: the crown jewels\n")
    (root / "notes.md").write_text("the wrong notes: outside\n")
    (workspace / "link").symlink_to(outside, target_is_directory=True)
    (workspace / "notes-link.md").symlink_to(outside / "secret.md")
    (workspace / "caf\u00e9").symlink_to(outside, target_is_directory=True)  # NFC
    home = FoundryHome(config_dir=root / "home" / "config", data_dir=root / "home" / "data")
    yield Place(root=root, workspace=workspace, home=home)


@pytest.fixture(scope="module")
def shared(place: Place) -> Iterator[SharedGateway]:
    live = SharedGateway(place)
    live.start()
    try:
        yield live
    finally:
        live.close()


@pytest.fixture(scope="module")
def store(place: Place) -> Iterator[Store]:
    opened = Store.open(home=place.home)
    yield opened
    opened.close()


# --- what a case is and how its outcome is checked ----------------------------------------------


@dataclass(frozen=True)
class Case:
    label: str  # allowed, denied, asked, rejected
    name: str
    arguments: Callable[[Place], dict[str, Any]]
    says: str = ""  # found in the result's text

    def __str__(self) -> str:
        return self.label


def outcome(shared: SharedGateway, store: Store, case: Case) -> tuple[str, str]:
    """(what happened, the result's text): a pending approval is denied as a person would."""
    before = {approval.id for approval in store.approvals.list()}
    arguments = case.arguments(shared.place)
    answer: Future[Any] = asyncio.run_coroutine_threadsafe(
        _call(shared, case.name, arguments), shared._loop
    )
    asked = _deny_when_asked(store, before, answer)
    try:
        result = answer.result(ANSWER_S)
    except MCPError as error:  # a tool the gateway does not offer: a JSON-RPC error
        return "rejected", error.message
    text = text_of(result)
    if asked:
        return "asked", text
    if not result.is_error:
        return "allowed", text
    if text.startswith("Denied by"):
        return "denied", text
    return "rejected", text


async def _call(shared: SharedGateway, name: str, arguments: dict[str, Any]) -> Any:
    assert shared.client is not None
    return await shared.client.call_tool(name, arguments)


def _deny_when_asked(store: Store, before: set[str], answer: Future[Any]) -> bool:
    """Whether the call asked a person; if so, its approval is denied."""
    while not answer.done():
        fresh = [a for a in store.approvals.list("pending") if a.id not in before]
        if fresh:
            resolve_approval(store, fresh[0].id, "denied", "human:attack-test", "no")
            return True
        threading.Event().wait(0.05)
    return any(a.id not in before for a in store.approvals.list())


def _path(*parts: str) -> Callable[[Place], str]:
    return lambda place: str(place.workspace.joinpath(*parts))


def read(where: Callable[[Place], str], **extra: Any) -> Callable[[Place], dict[str, Any]]:
    return lambda place: {"path": where(place), **extra}


def write(where: Callable[[Place], str], content: Any = "x") -> Callable[[Place], dict[str, Any]]:
    return lambda place: {"path": where(place), "content": content}


def nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {"leaf": "/etc/passwd"}
    for _ in range(depth):
        value = {"more": value}
    return value


NOTES = _path("notes.md")


def OUTSIDE_FILE(place: Place) -> str:
    return str(place.outside / "written.txt")


NAME_CASES = [
    Case("allowed", "fs__read_text_file", read(NOTES), "heliotrope"),
    Case("allowed", "fs.read_text_file", read(_path("sub", "deep.md")), "deep inside"),
    Case("rejected", "fs__move_file", lambda p: {"source": NOTES(p), "destination": "n2.md"}),
    Case("rejected", "fs.move_file", lambda p: {"source": NOTES(p), "destination": "n3.md"}),
    Case("rejected", "FS__READ_TEXT_FILE", read(NOTES), "offers no tool"),
    Case("rejected", "Fs.Read_Text_File", read(NOTES), "offers no tool"),
    Case("rejected", "fs__re\u0430d_text_file", read(NOTES), "offers no tool"),  # Cyrillic a
    Case("rejected", "fs__read_text_file\u200b", read(NOTES), "offers no tool"),
    Case("rejected", "\uff46\uff53__read_text_file", read(NOTES), "offers no tool"),  # full width
    Case("rejected", "fs__read_text_file__x", read(NOTES), "offers no tool"),
    Case("rejected", "fs____read_text_file", read(NOTES), "offers no tool"),
    Case("rejected", "fs..read_text_file", read(NOTES), "offers no tool"),
    Case("rejected", "fs.", read(NOTES), "offers no tool"),
    Case("rejected", "", read(NOTES), "offers no tool"),
]


@pytest.mark.parametrize("case", NAME_CASES, ids=lambda c: f"{c.label}:{c.name or 'empty'}")
def test_tool_names(shared: SharedGateway, store: Store, case: Case) -> None:
    got, text = outcome(shared, store, case)
    assert got == case.label, text
    assert case.says in text
    assert (shared.place.workspace / "notes.md").exists()  # no move ran


ARGUMENT_CASES = [
    Case(*fields)
    for fields in [
        ("allowed", "fs__list_directory", read(_path("sub")), "deep.md"),
        # the same outside file, reached many ways: each with a head of its own, or the third
        # would be the same call repeated (a loop) and denied as one
        ("denied", "fs__read_text_file", read(lambda p: str(p.outside / "secret.md")), "outside"),
        ("denied", "fs__read_text_file", read(lambda p: "../outside/secret.md"), "outside"),
        ("denied", "fs__read_text_file", read(_path("link", "secret.md"), head=7), "outside"),
        ("denied", "fs__read_text_file", read(_path("notes-link.md"), head=8), "outside"),
        (
            "denied",
            "fs__read_text_file",
            read(_path("sub", "..", "..", "outside", "secret.md"), head=10),
            "",
        ),
        (
            "denied",
            "fs__read_text_file",
            read(lambda p: f"file://{p.outside}/secret.md", head=11),
            "",
        ),
        (
            "denied",
            "fs__read_text_file",
            read(lambda p: f"file://evil.example{p.workspace}/notes.md"),
            "",
        ),
        (
            "asked",
            "fs__read_text_file",
            read(lambda p: f"{p.workspace}/%2e%2e/outside/secret.md", head=9),
            "",
        ),
        ("denied", "fs__read_text_file", read(lambda p: f"{p.workspace}/\u202enotes.md"), ""),
        ("denied", "fs__read_text_file", read(lambda p: f"{p.workspace}/notes.md\x00"), ""),
        ("denied", "fs__write_file", write(OUTSIDE_FILE), "deny-writing-outside-the-workspace"),
        ("denied", "fs__write_file", write(lambda p: "../outside/written.txt"), "outside"),
        ("denied", "fs__write_file", write(_path("link", "written.txt")), "outside"),
        ("asked", "fs__write_file", write(_path(".env")), ""),
        ("asked", "fs__write_file", write(_path("a.txt"), "x" * (1024 * 1024 + 1)), ""),
        (
            "denied",
            "fs__read_multiple_files",
            lambda p: {"paths": [NOTES(p), str(p.outside / "secret.md")]},
            "",
        ),
        # arguments the tool's schema refuses are refused before anyone is asked
        (
            "rejected",
            "fs__write_file",
            lambda p: {"file": OUTSIDE_FILE(p), "content": "x"},
            "'path' is a required property",
        ),
        ("rejected", "fs__read_text_file", read(lambda p: 42), "not of type 'string'"),
        ("rejected", "fs__read_text_file", read(lambda p: [NOTES(p)]), "not of type 'string'"),
        ("rejected", "fs__write_file", write(_path("typed.txt"), {"text": "x" * 100_000}), "…"),
        ("rejected", "fs__write_file", write(lambda p: {"path": OUTSIDE_FILE(p)}), "$.path"),
        ("allowed", "fs__read_text_file", read(NOTES, head=1, nonce="extra fields"), "inside"),
        ("allowed", "fs__read_text_file", read(NOTES, head=5), "heliotrope"),
        # a parameter the tool does not declare is neither passed on nor judged: the result
        # says it was dropped (a declared one naming a path outside is judged: above)
        (
            "allowed",
            "fs__read_text_file",
            lambda p: {"path": NOTES(p), "head": 1, "target": str(p.outside)},
            "does not declare: target",
        ),
        (
            "allowed",
            "fs__read_text_file",
            lambda p: {"path": NOTES(p), "opts": nested(30)},
            "does not declare: opts",
        ),
    ]
]


@pytest.mark.parametrize("case", ARGUMENT_CASES, ids=lambda c: f"{c.label}:{c.name}")
def test_arguments(shared: SharedGateway, store: Store, case: Case) -> None:
    got, text = outcome(shared, store, case)
    assert got == case.label, text
    assert case.says in text
    assert not (shared.place.outside / "written.txt").exists()


# Paths a server may read otherwise than they are written. A relative path: the reference server
# joins it to its first allowed folder (here the workspace's parent), not to the folder it runs
# in (the workspace); the policy judges both. A name in another Unicode form (NFD `cafe\u0301`):
# the server, finding no such name, takes the NFC one (`caf\u00e9`, a symlink out of the
# workspace); the policy cannot judge such a name.
POLICY_ESCAPES = [
    Case("denied", "fs__read_text_file", read(_path("cafe\u0301", "secret.md"))),  # NFD
    Case("denied", "fs__read_text_file", read(lambda p: "notes.md")),
    Case("denied", "fs__read_text_file", read(lambda p: "./sub/../notes.md")),
    Case("denied", "fs__write_file", write(lambda p: "outside/escaped.txt")),
]


@pytest.mark.parametrize("case", POLICY_ESCAPES, ids=lambda c: f"{c.label}:{c.name}")
def test_paths_are_judged_where_the_server_resolves_them(
    shared: SharedGateway, store: Store, case: Case
) -> None:
    escaped = shared.place.outside / "escaped.txt"
    try:
        got, text = outcome(shared, store, case)
        assert "wrong notes" not in text and "crown jewels" not in text
        assert not escaped.exists()
        assert got in ("denied", "asked"), text
    finally:
        escaped.unlink(missing_ok=True)


def test_a_repeated_call_is_stopped_by_loop_detection(shared: SharedGateway) -> None:
    arguments = {"path": str(shared.place.workspace / "sub" / "deep.md"), "head": 2}
    results = [shared.call("fs__read_text_file", arguments) for _ in range(3)]
    assert [r.is_error for r in results] == [False, False, True]
    assert "loop" in text_of(results[2])


def test_a_field_the_tool_does_not_declare_does_not_hide_a_loop(shared: SharedGateway) -> None:
    """denied: the same read with a new junk field each time (the schema allows extra fields;
    the gateway knows which ones the tool declares), or the same file spelt another way."""
    deep = shared.place.workspace / "sub" / "deep.md"
    calls = [
        {"path": str(deep), "head": 3, "nonce": 1},
        {"nonce": 2, "head": 3, "path": f"{shared.place.workspace}/sub/../sub/deep.md"},
        {"path": str(deep), "head": 3, "x": {"y": [3]}},
    ]
    results = [shared.call("fs__read_text_file", arguments) for arguments in calls]
    assert [r.is_error for r in results] == [False, False, True]
    assert "loop" in text_of(results[2])


# --- the protocol: raw JSON-RPC lines on the gateway's stdin ------------------------------------


class RawClient:
    """`foundry gateway` on stdio, spoken to line by line, mistakes included."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    async def send(self, line: str | dict[str, Any]) -> None:
        assert self.process.stdin is not None
        text = line if isinstance(line, str) else json.dumps(line)
        self.process.stdin.write(text.encode("utf-8", "surrogatepass") + b"\n")
        await self.process.stdin.drain()

    async def answer(self, request_id: int) -> dict[str, Any]:
        """The response to `request_id` (notifications and other responses skipped)."""
        assert self.process.stdout is not None
        while True:
            line = await asyncio.wait_for(self.process.stdout.readline(), ANSWER_S)
            assert line, "the gateway closed its output"
            message = json.loads(line)
            if message.get("id") == request_id and "method" not in message:
                return dict(message)

    async def request(self, request_id: int, method: str, **params: Any) -> dict[str, Any]:
        await self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        return await self.answer(request_id)

    async def initialize(self, name: str = "raw-client") -> dict[str, Any]:
        answer = await self.request(
            0,
            "initialize",
            protocolVersion="2025-06-18",
            capabilities={},
            clientInfo={"name": name, "version": "1"},
        )
        await self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return answer


@asynccontextmanager
async def raw_gateway(place: Place) -> AsyncIterator[RawClient]:
    env = {**os.environ, "FOUNDRY_HOME": str(place.home.config_dir.parent)}
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "foundry.cli", "gateway", str(place.workspace),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, env=env,
        limit=64 * 1024 * 1024,
    )  # fmt: skip
    try:
        yield RawClient(process)
    finally:
        assert process.stdin is not None
        process.stdin.close()
        await asyncio.wait_for(process.wait(), ANSWER_S)


def calls_of(store: Store, title_start: str) -> list[dict[str, Any]]:
    """The decided calls of the gateway sessions whose title starts so."""
    sessions = [s for s in store.sessions.list() if s.title.startswith(title_start)]
    kinds = ("tool_call_decided",)
    return [e.payload for s in sessions for e in store.events.list(s.id, kinds=kinds)]


async def test_protocol_mistakes_get_errors_and_run_nothing(place: Place, store: Store) -> None:
    approvals = store.approvals.count()
    notes = str(place.workspace / "notes.md")
    async with raw_gateway(place) as raw:
        # rejected: a call before initialize runs nothing
        early = await raw.request(1, "tools/call", name="fs__write_file",
                                  arguments={"path": notes, "content": "overwritten"})  # fmt: skip
        assert "error" in early or early["result"].get("isError"), early
        await raw.send("{this is not json")  # rejected: the gateway keeps serving
        await raw.send(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})[:-5])
        await raw.send("[" + json.dumps({"jsonrpc": "2.0", "id": 3, "method": "ping"}) + "]")
        await raw.send('{"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": '
                       + "[" * 100_000 + "]" * 100_000 + "}")  # fmt: skip
        assert "result" in await raw.initialize("protocol-attacks")
        unknown = await raw.request(5, "no/such/method")
        assert unknown["error"]["code"] == -32601
        # rejected: cancelling a request id that is not in flight (or is another's) does nothing
        await raw.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": 6, "reason": "forged"}})  # fmt: skip
        forged = await raw.request(6, "tools/call", name="fs__read_text_file",
                                   arguments={"path": notes},
                                   _meta={"progressToken": "someone-else"})  # fmt: skip
        assert not forged["result"].get("isError") and "heliotrope" in json.dumps(forged)
        # rejected: a lone surrogate is not JSON text the SDK accepts; the message is dropped
        await raw.send({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                        "params": {"name": "fs__write_file",
                                   "arguments": {"path": notes, "content": "\ud800"}}})  # fmt: skip
        assert "result" in await raw.request(8, "ping")
    assert (place.workspace / "notes.md").read_text() == "inside: heliotrope\n"
    assert store.approvals.count() == approvals
    decided = await _eventually(lambda: calls_of(store, "protocol-attacks"), 1)
    assert [call["call"]["name"] for call in decided] == ["fs.read_text_file"]


async def _eventually(read: Callable[[], list[T]], count: int) -> list[T]:
    """What `read` gives once it has `count` items (the gateway records after it answers)."""
    for _ in range(200):
        found = read()
        if len(found) >= count:
            return found
        await asyncio.sleep(0.05)
    return read()


CRAFTED_NAMES = [
    ("Claude\x1b[31m Desktop\r\nApproved by admin", "Claude[31m Desktop Approved by admin"),
    ("\u202eppa.live\u202c Cursor\u200b", "ppa.live Cursor"),
    ("<b>VS Code</b> <a href='x'>ok</a>", "<b>VS Code</b> <a href='x'>ok</a>"),  # UI escapes
    ("A" * 100_000, "A" * 100),
    ("\x00\x07\u2028", "an MCP client"),
]


@pytest.mark.parametrize(("name", "shown"), CRAFTED_NAMES, ids=range(len(CRAFTED_NAMES)))
async def test_a_crafted_client_name_is_shown_as_one_printable_line(
    place: Place, store: Store, name: str, shown: str
) -> None:
    """The clientInfo name titles the session (the inbox, the Gateway view): control and
    direction characters are dropped, line breaks become spaces, at most 100 characters."""
    before = {s.id for s in store.sessions.list()}
    async with raw_gateway(place) as raw:
        await raw.initialize(name)
        assert "result" in await raw.request(1, "tools/list")
    [session] = [s for s in store.sessions.list() if s.id not in before]
    assert session.title == f"{shown} via the gateway"


# --- over HTTP: the token, the headers a browser sends, bodies ----------------------------------

TOKEN = "attack-" + "k" * 40
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "http-attacks", "version": "1"},
    },
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture(scope="module")
def http_url(place: Place) -> Iterator[str]:
    port = free_port()
    env = {**os.environ, "FOUNDRY_HOME": str(place.home.config_dir.parent)}
    env["FOUNDRY_API_TOKEN"] = TOKEN
    command = [sys.executable, "-m", "foundry.cli", "gateway", "--http", "--port", str(port)]
    process = subprocess.Popen(
        [*command, str(place.workspace)], env=env, stderr=subprocess.PIPE, text=True
    )
    try:
        assert process.stderr is not None
        assert f"127.0.0.1:{port}/mcp" in process.stderr.readline()
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(30)


BEARER = {"Authorization": f"Bearer {TOKEN}"}
HTTP_CASES = [
    # (label, what must happen, path, headers)
    ("rejected", 401, "/mcp", {}),
    ("rejected", 401, "/mcp", {"Authorization": "Bearer " + "w" * 47}),
    ("rejected", 401, "/mcp", {"Authorization": f"Basic {TOKEN}"}),
    ("rejected", 401, "/mcp", {"Authorization": f"Bearer {TOKEN[:-1]}"}),
    ("rejected", 401, f"/mcp?token={TOKEN}", {}),
    ("rejected", 401, f"/mcp?access_token={TOKEN}", {}),
    ("rejected", 401, f"/t/{TOKEN}/mcp", {}),  # the approvals API's path form is not the gateway's
    ("rejected", 421, "/mcp", {**BEARER, "Host": "evil.example"}),  # DNS rebinding
    ("rejected", 421, "/mcp", {**BEARER, "Host": "127.0.0.1.evil.example:80"}),
    ("rejected", 403, "/mcp", {**BEARER, "Origin": "http://evil.example"}),
    ("rejected", 403, "/mcp", {**BEARER, "Origin": "null"}),
    ("allowed", 200, "/mcp", BEARER),
    ("allowed", 200, "/mcp", {"Authorization": f"bearer {TOKEN}"}),
    ("allowed", 200, "/mcp", {**BEARER, "Origin": "http://localhost:1234"}),
]


@pytest.mark.parametrize(("label", "status", "path", "headers"), HTTP_CASES)
def test_who_may_reach_the_http_gateway(
    http_url: str, label: str, status: int, path: str, headers: dict[str, str]
) -> None:
    answer = httpx.post(
        http_url + path, json=INITIALIZE, headers={**MCP_HEADERS, **headers}, timeout=30
    )
    assert answer.status_code == status, answer.text
    assert ("http-attacks" in answer.text or "foundry-gateway" in answer.text) == (status == 200)


def raw_http(url: str, head: str, body: bytes = b"") -> int:
    """Send `head` (and `body`) on a socket of its own; the status line's code."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as connection:
        connection.sendall(head.encode("latin-1") + body)
        status = connection.recv(4096).split(b"\r\n", 1)[0]
    return int(status.split()[1])


def test_a_body_that_never_comes_is_refused_without_the_token(http_url: str) -> None:
    """rejected 401 at once: the token is checked before a byte of the body is read."""
    head = (
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        "Content-Length: 1000000\r\n\r\n"
    )
    status = raw_http(http_url, head, b"{")
    assert status == 401


def test_a_huge_body_is_refused_before_it_is_read(http_url: str) -> None:
    """rejected 413 with the token: a declared length over the SDK's 4 MiB is never read."""
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\n"
        "Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n"
        f"Content-Length: {200 * 1024 * 1024}\r\n\r\n"
    )
    status = raw_http(http_url, head, b"{")
    assert status == 413


async def test_a_client_cannot_cancel_another_clients_call(
    http_url: str, place: Place, store: Store
) -> None:
    """rejected: over HTTP each client's request ids are its own; a forged cancellation from
    another client leaves the waiting call (and its approval) alone."""
    before = {approval.id for approval in store.approvals.list()}
    secret = {"path": str(place.workspace / ".env.cancel"), "content": "KEY=1"}
    async with (
        http_client(http_url + "/mcp", TOKEN) as victim,
        http_client(http_url + "/mcp", TOKEN) as other,
    ):
        waiting = asyncio.ensure_future(victim.call_tool("fs__write_file", secret))
        pending = await _eventually(
            lambda: [a for a in store.approvals.list("pending") if a.id not in before], 1
        )
        assert pending, "the write did not ask a person"
        for request_id in range(10):
            params = mcp_types.CancelledNotificationParams(request_id=request_id, reason="forged")
            await other.send_notification(mcp_types.CancelledNotification(params=params))
        assert await other.call_tool("fs__list_allowed_directories", {})
        assert store.approvals.get(pending[0].id).status == "pending"
        resolve_approval(store, pending[0].id, "denied", "human:attack-test", "no")
        result = await asyncio.wait_for(waiting, ANSWER_S)
    assert result.is_error and "Denied by human:attack-test" in text_of(result)


def test_the_inspector_cannot_reach_a_tool_the_agent_does_not_offer(place: Place) -> None:
    """rejected, through the MCP Inspector's CLI: the `manual` move_file by its qualified name
    (the Inspector looks the name up in the gateway's list first, and finds none)."""
    source = place.workspace / "sub" / "deep.md"
    code_path = [f"PYTHONPATH={os.environ['PYTHONPATH']}"] if "PYTHONPATH" in os.environ else []
    moved = inspector(
        *(arg for pair in zip(["-e"] * len(code_path), code_path, strict=True) for arg in pair),
        "--method", "tools/call", "--tool-name", "fs.move_file",
        "--tool-arg", f"source={source}", "--tool-arg", "destination=moved.md",
        home=place.home.config_dir.parent, agent=place.workspace,
    )  # fmt: skip
    assert moved.returncode != 0 and "fs.move_file" in moved.stdout + moved.stderr
    assert source.exists() and not (place.root / "moved.md").exists()


def test_a_refusal_before_any_decision_is_recorded_at_the_policy_level(
    shared: SharedGateway, store: Store
) -> None:
    """The Gateway view and the dashboards see a refused name as the gateway's, never a
    person's: no human level, no approval."""
    approvals = store.approvals.count()
    with pytest.raises(MCPError, match="offers no tool"):  # not offered: a JSON-RPC error
        shared.call("fs.move_file", {"source": "a", "destination": "b"})
    decided = asyncio.run(_eventually(lambda: _refusals(store, "fs.move_file"), 1))
    assert {(d["by"], d["allowed"]) for d in decided} == {("policy:gateway", False)}
    assert resolution_level(decided[0]["by"]) == "policy"
    assert store.approvals.count() == approvals


def _refusals(store: Store, tool: str) -> list[dict[str, Any]]:
    return [call for call in calls_of(store, "") if call["call"]["name"] == tool]


def deep_call(request_id: int | str, depth: int, before_id: str = "") -> str:
    """A tools/call whose arguments nest `depth` arrays deep, its id after `before_id`."""
    params = {"name": "fs__list_allowed_directories", "arguments": {"a": "NESTED"}}
    envelope = {"jsonrpc": "2.0", "method": "tools/call", "params": params}
    text = json.dumps(envelope).replace('"NESTED"', "[" * depth + "]" * depth)
    return "{" + before_id + f'"id": {json.dumps(request_id)}, ' + text[1:]


DEEP_FIRST = '{"params": {"a": ' + "[" * 300 + "]" * 300 + '}, %s, "method": "tools/call"}'
DEEP_CASES = ["number id", "text id", "escaped id", "nested ids first", "readable",
              "notification", "brackets in text", "not JSON", "bad key after the depth",
              "bad id"]  # fmt: skip


@pytest.mark.parametrize(
    ("line", "answered_id"),
    [
        (deep_call(7, 300), 7),
        (deep_call("req-7", 5000), "req-7"),
        (deep_call('a"b', 300), 'a"b'),  # an escaped quote in the id
        (deep_call(8, 300, before_id='"params0": {"id": 99, "x": "id"}, "method0": "id", '), 8),
        (deep_call(9, 150), None),  # readable: the SDK answers it
        ('{"jsonrpc": "2.0", "method": "x", "params": ' + "[" * 300 + "]" * 300 + "}", None),
        ('{"jsonrpc": "2.0", "id": 1, "params": "' + "[" * 300 + '"}', None),  # text, no nesting
        ("[" * 300, None),  # not JSON at all
        (DEEP_FIRST % '"\\x": 1, "id": 10', 10),  # after the depth, a key no JSON reads
        (DEEP_FIRST % '"id": "\\x"', None),  # an id no JSON reads: nothing to answer
    ],
    ids=DEEP_CASES,
)
def test_only_a_request_nested_too_deep_to_read_is_answered_by_the_gateway_itself(
    line: str, answered_id: int | str | None
) -> None:
    refusal = too_deep_refusal(line)
    if answered_id is None:
        assert refusal is None
    else:
        assert refusal is not None
        answer = json.loads(refusal)
        assert answer["id"] == answered_id and answer["error"]["code"] == -32700
        assert "levels deep" in answer["error"]["message"]


async def test_a_call_nested_too_deep_to_read_gets_an_error_and_serving_goes_on(
    place: Place,
) -> None:
    """rejected: arguments nested deeper than the SDK's JSON parser reads got no answer at all
    (the client waited for ever); the call is answered with an error and nothing runs."""
    async with raw_gateway(place) as raw:
        await raw.initialize("deep")
        await raw.send(deep_call(11, 1000))
        refused = await raw.answer(11)
        assert refused["error"]["code"] == -32700, refused
        readable = json.loads(deep_call(12, 20))
        answered = await raw.request(12, "tools/call", **readable["params"])
        assert "result" in answered, answered


async def test_a_message_over_the_line_limit_is_dropped_and_serving_goes_on(
    place: Place, store: Store
) -> None:
    """rejected: a line over 64 MiB is dropped whole (it used to end the gateway with a
    traceback); the next request is answered and the oversized write never ran."""
    target = place.workspace / "oversized.txt"
    arguments = {"path": str(target), "content": "x" * (LINE_LIMIT + 1)}
    params = {"name": "fs__write_file", "arguments": arguments}
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    async with raw_gateway(place) as raw:
        await raw.initialize("oversized")
        await raw.send(call)
        assert "result" in await raw.request(2, "ping")
        listed = await raw.request(3, "tools/list")
        assert "fs__write_file" in json.dumps(listed)
    assert not target.exists()
