"""Attacks on the approvals API from a local process: races, forged fields, guessed ids, odd
paths, held requests, grants bound to agents they are not. Labels: allowed (200, 201), rejected
(401 without the token, 404 for an id that is not one, 409 for a second resolution, 422 for a
body it does not take)."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from foundry.store import Store
from foundry.supervision.resolution import resolve_approval
from tests.api.records import TOKEN, agent_folder, pending


async def test_a_race_of_resolutions_has_one_winner(
    store: Store, client: httpx.AsyncClient
) -> None:
    """rejected 409 for all but one of 20 concurrent approvals and denials of one approval."""
    approval = pending(store)
    answers = await asyncio.gather(
        *(
            client.post(f"/approvals/{approval.id}/{verb}", json={"resolved_by": f"r{n}"})
            for n, verb in enumerate(["approve", "deny"] * 10)
        )
    )
    codes = sorted(answer.status_code for answer in answers)
    assert codes == [200] + [409] * 19
    [winner] = [answer.json() for answer in answers if answer.status_code == 200]
    stored = store.approvals.get(approval.id)
    assert stored.status == winner["status"]
    assert len(store.traces.list("claude")) == 1


@pytest.mark.parametrize(
    ("claimed", "recorded"),
    [
        ("agent:l1", "api:agent:l1"),
        ("timeout", "api:timeout"),
        ("withdrawn", "api:withdrawn"),
        ("gui", "api:gui"),
        ("human:ana\n\x1b[2Jpolicy:allow-all", "api:human:ana[2Jpolicy:allow-all"),
        ("\u202e\u200b", "api:http:127.0.0.1"),
    ],
)
async def test_a_claimed_resolver_is_only_a_label_under_api(
    store: Store, client: httpx.AsyncClient, claimed: str, recorded: str
) -> None:
    """allowed, as the API's: whatever name the body claims is kept printable under `api:`
    (but a supervisor's: see test_a_supervisor_resolver_is_recorded_and_traced_at_l1)."""
    approval = pending(store)
    answer = await client.post(f"/approvals/{approval.id}/approve", json={"resolved_by": claimed})
    assert answer.status_code == 200
    assert store.approvals.get(approval.id).resolved_by == recorded
    [trace] = store.traces.list("claude")
    assert trace.resolved_level == "human"


@pytest.mark.parametrize(
    "body",
    [
        {"status": "approved"},
        {"resolved_level": "policy"},
        {"level": "supervisor"},
        {"resolved_at": "2020-01-01T00:00:00Z"},
        {"approved": True},
    ],
)
async def test_a_forged_resolution_field_changes_nothing(
    store: Store, client: httpx.AsyncClient, body: Any
) -> None:
    """ignored, as agent-mesh ignores fields it does not know: the deny is a plain deny by the
    caller, with the call's own parameters, traced as a human's."""
    approval = pending(store)
    answer = await client.post(f"/approvals/{approval.id}/deny", json=body)
    assert answer.json() == {"status": "denied", "id": approval.id}
    stored = store.approvals.get(approval.id)
    assert (stored.status, stored.resolved_by) == ("denied", "api:http:127.0.0.1")
    assert stored.params == approval.params
    [trace] = store.traces.list("claude")
    assert (trace.resolved_level, trace.decision) == ("human", "deny")


@pytest.mark.parametrize(
    "body",
    [
        {"resolved_by": "x" * 201},
        {"resolved_by": True},
        {"reasoning": "x" * 10_001},
        {"confidence": "0.9"},
        {"arguments": {"path": "/etc/passwd"}},  # an edit would not be what runs: refused
        {"params": {"path": "/etc/passwd"}},
        [],
        "approve",
    ],
)
async def test_a_resolution_field_of_the_wrong_kind_is_refused(
    store: Store, client: httpx.AsyncClient, body: Any
) -> None:
    """rejected 422: too long, of another type (strict: "0.9" is not a number), an edit, or no
    object."""
    approval = pending(store)
    answer = await client.post(f"/approvals/{approval.id}/deny", json=body)
    assert answer.status_code == 422, answer.text
    assert store.approvals.get(approval.id).status == "pending"


@pytest.mark.parametrize(
    "approval_id",
    ["..", "..%2Fgrants", "%2e%2e", "x%00", "*", "%25", "' OR '1'='1", "x" * 8_000, "%E2%80%AE"],
)
async def test_a_guessed_or_crafted_id_resolves_nothing(
    store: Store, client: httpx.AsyncClient, approval_id: str
) -> None:
    """rejected (404, or 405 where the path reaches no route): no approval changes."""
    approval = pending(store)
    answer = await client.post(f"/approvals/{approval_id}/approve")
    assert answer.status_code in (404, 405, 414, 422), answer.text
    assert store.approvals.get(approval.id).status == "pending"


async def test_a_timed_out_approval_cannot_be_approved_afterwards(
    store: Store, client: httpx.AsyncClient
) -> None:
    """rejected 409: a withdrawn (or timed-out) approval stays as it ended."""
    approval = pending(store)
    resolve_approval(store, approval.id, "timed_out", "withdrawn", "the client cancelled")
    answer = await client.post(f"/approvals/{approval.id}/approve")
    assert answer.status_code == 409
    assert store.approvals.get(approval.id).status == "timed_out"


@pytest.mark.parametrize(
    "path",
    ["/health/../approvals", "/health/", "/HEALTH", "//approvals", "/./approvals", "/t//approvals"],
)
async def test_paths_near_the_open_one_need_the_token(
    store: Store, base_url: str, path: str
) -> None:
    """rejected 401: only exactly GET /health is open."""
    approval = pending(store)
    async with httpx.AsyncClient(base_url=base_url, timeout=10) as anonymous:
        request = anonymous.build_request("GET", path)
        request.url = request.url.copy_with(raw_path=path.encode())
        answer = await anonymous.send(request)
    assert answer.status_code == 401, (path, answer.text)
    assert approval.id not in answer.text


async def test_held_requests_do_not_hold_up_a_decision(
    store: Store, base_url: str, client: httpx.AsyncClient
) -> None:
    """allowed: 100 clients holding `wait=` lists, and strangers holding none (401 at once),
    while an approval is decided and the held lists are answered when one matches."""
    approval = pending(store, tool="other.tool")
    limits = httpx.Limits(max_connections=200)
    async with (
        httpx.AsyncClient(base_url=base_url, headers=client.headers, limits=limits, timeout=90)
        as holders,
        httpx.AsyncClient(base_url=base_url, timeout=10) as strangers,
    ):  # fmt: skip
        held = [
            asyncio.ensure_future(
                holders.get("/approvals", params={"status": "pending", "tool": "fs.*", "wait": 30})
            )
            for _ in range(100)
        ]
        refused = await strangers.get("/approvals", params={"wait": 60})
        assert refused.status_code == 401
        decided = await client.post(f"/approvals/{approval.id}/approve")
        assert decided.status_code == 200
        assert not any(request.done() for request in held)
        matching = pending(store, tool="fs.write_file")
        answers = await asyncio.gather(*held)
    assert all(answer.status_code == 200 for answer in answers)
    assert all([a["id"] for a in answer.json()] == [matching.id] for answer in answers)
    assert TOKEN not in refused.text


async def test_a_held_request_sending_an_endless_body_is_let_go(
    store: Store, base_url: str, client: httpx.AsyncClient
) -> None:
    """A `wait=` list whose client streams a body past the limit (no GET has one) is answered
    and let go, not held for its minute."""

    async def endless() -> AsyncIterator[bytes]:
        for _ in range(40):  # 2.5 MiB, over the 1 MiB limit
            yield b"x" * 65536

    answer = await client.request(
        "GET", "/approvals", params={"status": "pending", "wait": 60}, content=endless()
    )
    assert answer.status_code == 200 and answer.json() == []
    assert not store.approval_changes.listeners


# -- grants bound to one agent file -----------------------------------------------------------


def _loop(tmp_path: Path) -> str:
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    return str(tmp_path / "a")


def _not_an_agent(tmp_path: Path) -> str:
    (tmp_path / "notes.txt").write_text("metadata:\n  name: worker\n")
    return str(tmp_path / "notes.txt")


def _broken_agent(tmp_path: Path) -> str:
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "tsagent.json").write_text('{"metadata": ')
    return str(tmp_path / "broken")


# (case, the agent_path a client sends, given the folder holding the agent "one")
UNBINDABLE: list[tuple[str, Callable[[Path], str]]] = [
    ("a relative path", lambda tmp_path: "one"),
    ("a relative path climbing out", lambda tmp_path: "../one"),
    ("a path from the home folder", lambda tmp_path: "~/one"),
    ("a file that does not exist (yet)", lambda tmp_path: str(tmp_path / "later")),
    ("a folder that holds no agent", lambda tmp_path: str(tmp_path)),
    ("a folder inside the agent", lambda tmp_path: str(tmp_path / "one" / "src")),
    ("a file that is not an agent", _not_an_agent),
    ("an agent that cannot be read (whose name is not known)", _broken_agent),
    ("a loop of symbolic links", _loop),
    ("a name too long for the file system", lambda tmp_path: "/" + "x" * 300),
    ("longer than a path may be", lambda tmp_path: "/" + "x/" * 3000),
    ("empty", lambda tmp_path: ""),
]


@pytest.mark.parametrize(("case", "given"), UNBINDABLE, ids=[c[0] for c in UNBINDABLE])
async def test_a_grant_cannot_be_bound_to_a_path_that_is_no_agent(
    store: Store, client: httpx.AsyncClient, tmp_path: Path, case: str, given: Callable[[Path], str]
) -> None:
    """rejected 422 naming agent_path: never a grant bound to a file that is not an agent now
    (it would go to whoever puts one there), nor one that covers more than that file."""
    agent_folder(tmp_path / "one")
    body = {"tools": "fs.read", "duration": "1h", "agent_path": given(tmp_path)}
    answer = await client.post("/grants", json=body)
    assert answer.status_code == 422, (case, answer.text)
    assert answer.json()["detail"][0]["loc"] == ["body", "agent_path"], case
    assert len(answer.text) < 1000, case  # the input is not echoed back
    assert store.grants.active() == [], case


async def test_a_nul_in_an_agent_path_is_refused(store: Store, client: httpx.AsyncClient) -> None:
    """rejected 422: a path cut short at a NUL would name another file."""
    body = b'{"tools": "fs.read", "duration": "1h", "agent_path": "/tmp/a\\u0000/b"}'
    answer = await client.post(
        "/grants", content=body, headers={"Content-Type": "application/json"}
    )
    assert answer.status_code == 422, answer.text
    assert answer.json()["detail"][0]["loc"] == ["body", "agent_path"]
    assert store.grants.active() == []


# (case, the body's binding fields given an approval of the agent "one" and a copy "two")
MISMATCHED: list[tuple[str, Callable[[str, Path], dict[str, Any]], str]] = [
    ("an approval that is not there", lambda approval, tmp: {"approval_id": "nope"}, "approval_id"),
    ("an id too long to be one", lambda approval, tmp: {"approval_id": "a" * 201}, "approval_id"),
    (
        "an agent glob that is not the approval's agent",
        lambda approval, tmp: {"approval_id": approval, "agent": "other*"},
        "agent",
    ),
    (
        "another file than the approval's",
        lambda approval, tmp: {"approval_id": approval, "agent_path": str(tmp / "two")},
        "agent_path",
    ),
    (
        "an agent glob that is not the name of the agent at the path",
        lambda approval, tmp: {"agent_path": str(tmp / "one"), "agent": "other"},
        "agent",
    ),
]


@pytest.mark.parametrize(("case", "binding", "field"), MISMATCHED, ids=[c[0] for c in MISMATCHED])
async def test_a_binding_that_does_not_agree_is_refused(
    store: Store,
    client: httpx.AsyncClient,
    tmp_path: Path,
    case: str,
    binding: Callable[[str, Path], dict[str, Any]],
    field: str,
) -> None:
    """rejected 422 naming the field: the name, the approval and the path must all be one
    agent's, else the grant would cover an agent the client did not mean."""
    one = agent_folder(tmp_path / "one")
    shutil.copytree(one, tmp_path / "two")
    approval = pending(store, agent="worker", agent_path=str(one.resolve()))
    body = {"tools": "fs.read", "duration": "1h", **binding(approval.id, tmp_path)}
    answer = await client.post("/grants", json=body)
    assert answer.status_code == 422, (case, answer.text)
    assert answer.json()["detail"][0]["loc"] == ["body", field], case
    assert store.grants.active() == [], case


async def test_an_approval_that_names_no_file_gives_no_grant_by_name_instead(
    store: Store, client: httpx.AsyncClient
) -> None:
    """rejected 422: asked to bind, the API never quietly makes a grant for every agent of
    the name (an approval made outside a session, or before approvals named their file)."""
    approval = pending(store, agent="worker")
    body = {"tools": "fs.read", "duration": "1h", "approval_id": approval.id}
    answer = await client.post("/grants", json=body)
    assert answer.status_code == 422
    assert "by name" in answer.json()["detail"][0]["msg"]
    assert store.grants.active() == []


async def test_an_approval_and_a_path_to_its_file_agree(
    store: Store, client: httpx.AsyncClient, tmp_path: Path
) -> None:
    """allowed 201: the approval's own file written through a link is the same file."""
    one = agent_folder(tmp_path / "one")
    (tmp_path / "link").symlink_to(one, target_is_directory=True)
    approval = pending(store, agent="worker", agent_path=str(one.resolve()))
    body = {"tools": "fs.read", "duration": "1h", "approval_id": approval.id}
    answer = await client.post("/grants", json={**body, "agent_path": str(tmp_path / "link")})
    assert answer.status_code == 201, answer.text
    assert answer.json()["agent_path"] == str(one.resolve())
