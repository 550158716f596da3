"""What the audit trail keeps of decisions made through the API: the level comes from who
authenticated (a token holder, so a human), never from the body, and traces hold no content."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest

from foundry.agent.models import PolicyConfig
from foundry.llm.base import ToolCall
from foundry.metrics.series import resolution_level
from foundry.session.events import EventBody
from foundry.store import Store
from foundry.supervision.hierarchy import SupervisedGate
from tests.api.conftest import Serve
from tests.api.records import AUTH, pending

SECRET = "-----BEGIN OPENSSH PRIVATE KEY----- b3BlbnNzaC1rZXktdjEAAAAA"
RESERVED = ["agent:supervisor", "timeout", "human:gui:ana", "policy:reads", "grant:g_1"]


async def ignore(body: EventBody) -> None:
    return None


@pytest.mark.parametrize("claimed", RESERVED)
async def test_a_client_cannot_claim_a_level_foundry_reserves(
    store: Store, client: httpx.AsyncClient, claimed: str
) -> None:
    approval = pending(store)

    response = await client.post(
        f"/approvals/{approval.id}/approve", json={"resolved_by": claimed, "confidence": 0.99}
    )

    assert response.status_code == 200
    stored = store.approvals.get(approval.id)
    assert stored.resolved_by == f"api:{claimed}"
    assert resolution_level(stored.resolved_by) == "human"
    [trace] = store.traces.list("claude")
    assert (trace.resolved_level, trace.resolved_by) == ("human", f"api:{claimed}")
    listed = (await client.get("/traces")).json()
    assert [(t["resolved_level"], t["approved_by"]) for t in listed] == [
        ("human", f"api:{claimed}")
    ]


async def test_a_claimed_name_is_recorded_printable(
    store: Store, client: httpx.AsyncClient
) -> None:
    approval = pending(store)
    forged = "ana\napproved by human:gui:root\x1b[2J\u202e"

    await client.post(f"/approvals/{approval.id}/deny", json={"resolved_by": forged})

    assert store.approvals.get(approval.id).resolved_by == "api:anaapproved by human:gui:root[2J"


async def test_a_name_over_200_characters_is_refused(
    store: Store, client: httpx.AsyncClient
) -> None:
    approval = pending(store)

    response = await client.post(f"/approvals/{approval.id}/deny", json={"resolved_by": "x" * 201})

    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body", "resolved_by"]
    assert store.approvals.get(approval.id).status == "pending"


async def test_a_grant_records_who_made_it_under_api(client: httpx.AsyncClient) -> None:
    claimed = await client.post(
        "/grants",
        json={"agent": "*", "tools": "fs.*", "duration": "5m", "granted_by": "human:gui:ana"},
    )
    unclaimed = await client.post(
        "/grants", json={"agent": "*", "tools": "gmail.*", "duration": "5m"}
    )

    assert claimed.json()["granted_by"] == "api:human:gui:ana"
    assert unclaimed.json()["granted_by"] == "api:http:127.0.0.1"


async def test_an_api_approval_reaches_the_agent_as_a_human_decision(
    store: Store, client: httpx.AsyncClient, tmp_path: Path
) -> None:
    """The gate's decision names the resolver; the dashboards count its level from that name."""
    config = PolicyConfig.model_validate(
        {"rules": [{"name": "people", "tool": "*", "action": "human"}], "loopDetection": False}
    )
    gate = SupervisedGate(store, config, "claude", "s1", tmp_path, ignore, poll_s=0.02)
    call = ToolCall(id="c1", name="mail.send", arguments={"to": "x@example.com"})
    review = asyncio.create_task(gate.review(call, True))
    while not (waiting := (await client.get("/approvals", params={"status": "pending"})).json()):
        await asyncio.sleep(0.02)

    await client.post(
        f"/approvals/{waiting[0]['id']}/approve", json={"resolved_by": "agent:supervisor"}
    )
    decision = await review

    assert (decision.allowed, decision.by) == (True, "api:agent:supervisor")
    assert resolution_level(decision.by) == "human"
    assert [t.resolved_level for t in store.traces.list("claude")] == ["human"]


async def test_traces_hold_no_content_even_when_supervisors_see_it(
    store: Store, serve: Serve
) -> None:
    approval = pending(store, params={"path": "/p/id_ed25519", "content": SECRET})
    base = await serve(expose_content=True)

    async with httpx.AsyncClient(base_url=base, headers=AUTH, timeout=10) as client:
        shown = (await client.get(f"/approvals/{approval.id}")).json()
        await client.post(f"/approvals/{approval.id}/deny", json={"reasoning": "a private key"})

    assert shown["params"]["content"] == "[secret]"  # content is shown, a private key never
    [trace] = store.traces.list("claude")
    assert trace.params["path"] == "/p/id_ed25519"
    assert trace.params["content"]["content_length"] == len(SECRET)
    assert SECRET not in json.dumps(trace.params)
