"""A client's mistake gets a 4xx that says what is wrong, never a 500 and never a swollen server:
numbers JSON has not, text JSON cannot carry, bodies over 1 MiB."""

from __future__ import annotations

import asyncio
import json
import resource
import select
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx
import pytest

from foundry.store import Store
from tests.api.records import TOKEN, pending

JSON = {"Content-Type": "application/json"}
MIB = 1 << 20
BIG = 512 * MIB
PIECE = 64 * 1024


@pytest.mark.parametrize(
    ("content", "field", "words"),
    [
        (b'{"confidence": NaN}', "confidence", "finite number"),
        (b'{"confidence": Infinity}', "confidence", "finite number"),
        (b'{"confidence": -Infinity}', "confidence", "finite number"),
        (b'{"confidence": 1e309}', "confidence", "finite number"),
        (b'{"resolved_by": "\\ud800"}', "resolved_by", "lone UTF-16 surrogate"),
        (b'{"reasoning": "fine \\udfff here"}', "reasoning", "lone UTF-16 surrogate"),
        (b'{"reasoning": "a\\u0000b"}', "reasoning", "NUL"),
    ],
)
async def test_a_resolution_json_cannot_carry_gets_422_naming_the_field(
    store: Store, client: httpx.AsyncClient, content: bytes, field: str, words: str
) -> None:
    approval = pending(store)

    for action in ("approve", "deny"):
        response = await client.post(
            f"/approvals/{approval.id}/{action}", content=content, headers=JSON
        )

        assert response.status_code == 422
        [problem] = response.json()["detail"]
        assert problem["loc"] == ["body", field]
        assert words in problem["msg"]
    assert store.approvals.get(approval.id).status == "pending"
    assert list(store.traces.list()) == []


@pytest.mark.parametrize(
    ("content", "where"),
    [
        (b'{"tools": "fs.*", "duration_seconds": 1e309}', ["body", "duration_seconds"]),
        (b'{"tools": "fs.*", "duration_seconds": NaN}', ["body", "duration_seconds"]),
        (b'{"tools": "fs.\\udc00", "duration_seconds": 60}', ["body", "tools"]),
        (b'{"tools": "fs.*", "agent": "\\ud83d", "duration": "5m"}', ["body", "agent"]),
        (
            b'{"tools": "fs.*", "duration": "5m",'
            b' "params": [{"param": "size", "op": "==", "value": Infinity}]}',
            ["body", "params", 0, "value"],
        ),
    ],
)
async def test_a_grant_json_cannot_carry_gets_422_naming_the_field(
    client: httpx.AsyncClient, content: bytes, where: list[str | int]
) -> None:
    response = await client.post("/grants", content=content, headers=JSON)

    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == where
    assert (await client.get("/grants")).json() == []


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b'{"reasoning": "\xff\xfe"}', "not UTF-8"),
        (b"[" * 100_000, "nested too deeply"),
        (b'{"confidence": 1' + b"0" * 5000 + b"}", "JSON decode error"),
        (b"\xef\xbb\xbf{}", "JSON decode error"),
    ],
)
async def test_a_body_that_is_not_json_gets_422_saying_why(
    store: Store, client: httpx.AsyncClient, content: bytes, words: str
) -> None:
    approval = pending(store)

    response = await client.post(f"/approvals/{approval.id}/approve", content=content, headers=JSON)

    assert response.status_code == 422
    assert words in response.json()["detail"][0]["msg"]
    assert store.approvals.get(approval.id).status == "pending"


async def test_a_stored_call_with_a_lone_surrogate_does_not_break_the_list(
    store: Store, client: httpx.AsyncClient
) -> None:
    """A model's tool call (JSON from a model) can carry a lone surrogate into the store."""
    odd = pending(store, params={"path": "/p/a\ud800.txt", "k\udfff": "v"})
    plain = pending(store)

    listed = await client.get("/approvals")
    detail = await client.get(f"/approvals/{odd.id}")

    assert listed.status_code == detail.status_code == 200
    assert {a["id"] for a in listed.json()} == {odd.id, plain.id}
    assert detail.json()["params"] == {"path": "/p/a\ufffd.txt", "k\ufffd": "v"}


# -- bodies over 1 MiB ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Upload:
    """What a client streaming a body saw: the status line, and how much it sent before it."""

    status: int
    sent: int


def upload(base_url: str, path: str, total: int, framing: str) -> Upload:
    """POST `total` bytes of JSON whitespace in 64 KiB pieces, `chunked` or after a declared
    Content-Length (which may lie), stopping as soon as the server answers or hangs up."""
    url = urlsplit(base_url)
    head = f"POST {path} HTTP/1.1\r\nHost: {url.netloc}\r\nAuthorization: Bearer {TOKEN}\r\n"
    head += "Content-Type: application/json\r\n" + framing + "\r\n"
    chunked = "chunked" in framing
    piece = b" " * PIECE
    frame = f"{PIECE:x}\r\n".encode() + piece + b"\r\n" if chunked else piece
    sent = 0
    with socket.create_connection((url.hostname, url.port), timeout=30) as connection:
        connection.sendall(head.encode())
        answered = select.poll()  # not select.select: a busy process's descriptors pass 1024
        answered.register(connection, select.POLLIN)
        while sent < total and not answered.poll(0):
            try:
                connection.sendall(frame)
            except OSError:  # the server hung up: its answer is already here
                break
            sent += PIECE
        return Upload(status=_status(connection), sent=sent)


def _status(connection: socket.socket) -> int:
    try:
        line = connection.recv(256).split(b"\r\n", 1)[0]
    except OSError:
        return 0
    return int(line.split()[1]) if line.startswith(b"HTTP/1.1 ") else 0


def peak_rss() -> int:
    """The most memory this process has held, in bytes (Linux counts ru_maxrss in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


@pytest.mark.parametrize(
    "framing",
    ["Transfer-Encoding: chunked\r\n", f"Content-Length: {BIG}\r\n"],
    ids=["chunked", "declared"],
)
async def test_a_512_mib_body_gets_413_without_being_read(
    store: Store, base_url: str, framing: str
) -> None:
    approval = pending(store)
    before = peak_rss()

    seen = await asyncio.to_thread(
        upload, base_url, f"/approvals/{approval.id}/approve", BIG, framing
    )

    assert seen.status == 413
    assert seen.sent < 64 * MIB  # the server stopped it: what the socket buffers took, no more
    assert peak_rss() - before < 64 * MIB
    assert store.approvals.get(approval.id).status == "pending"


async def test_a_content_length_that_lies_is_read_only_as_far_as_it_says(
    store: Store, base_url: str
) -> None:
    approval = pending(store)
    before = peak_rss()

    seen = await asyncio.to_thread(
        upload, base_url, f"/approvals/{approval.id}/approve", BIG, "Content-Length: 100\r\n"
    )

    # a hundred spaces are no body, as agent-mesh reads them: approved, the rest never taken
    assert seen.status == 200
    assert seen.sent < 64 * MIB
    assert peak_rss() - before < 64 * MIB
    assert store.approvals.get(approval.id).status == "approved"


async def test_the_limit_is_1_mib_exactly(store: Store, client: httpx.AsyncClient) -> None:
    approval = pending(store)
    body = json.dumps({"reasoning": "fine"}).encode()
    at_limit = body + b" " * (MIB - len(body))

    over = await client.post(
        f"/approvals/{approval.id}/approve", content=at_limit + b" ", headers=JSON
    )
    assert (await client.post("/grants", content=b" " * (MIB + 1), headers=JSON)).status_code == 413
    at = await client.post(f"/approvals/{approval.id}/approve", content=at_limit, headers=JSON)

    assert over.status_code == 413
    assert "1 MiB" in over.json()["detail"]
    assert at.status_code == 200
