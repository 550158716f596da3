"""`foundry serve --shadow-supervisors`: an agent-mesh supervisor's resolution is kept as its shadow
verdict, answered as agent-mesh answers an accepted one, and a person still decides."""

from __future__ import annotations

import httpx

from foundry.store import Store
from tests.api.conftest import Serve
from tests.api.records import AUTH, pending

AGENT7 = {"resolved_by": "supervisor:agent7", "reasoning": "inside the project", "confidence": 0.9}


async def shadow_client(serve: Serve) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        base_url=await serve(shadow_supervisors=True), headers=AUTH, timeout=10
    )


async def test_a_supervisors_resolution_is_its_shadow_verdict_and_the_call_waits_for_a_person(
    store: Store, serve: Serve
) -> None:
    approval = pending(store)
    async with await shadow_client(serve) as client:
        answer = await client.post(f"/approvals/{approval.id}/approve", json=AGENT7)
        listed = await client.get("/approvals", params={"status": "pending"})
        shown = await client.get(f"/approvals/{approval.id}")

    assert answer.status_code == 200
    assert answer.json() == {"status": "approved", "id": approval.id}
    kept = store.approvals.get(approval.id)
    assert kept.status == "pending" and kept.resolved_by is None
    assert kept.shadow_verdict == {
        "decision": "approve",
        "confidence": 0.9,
        "reasoning": "inside the project",
        "supervisor": "supervisor:agent7",
        "seconds": 0.0,
    }
    assert not store.traces.list(None)  # nothing was decided
    assert [item["id"] for item in listed.json()] == [approval.id]
    body = shown.json()  # the person's view shows no verdict
    assert body["status"] == "pending"
    assert not {"shadow", "shadow_verdict", "resolved_by", "confidence"} & body.keys()
    assert "inside the project" not in shown.text


async def test_a_repeated_resolution_replaces_the_supervisors_verdict(
    store: Store, serve: Serve
) -> None:
    approval = pending(store)
    async with await shadow_client(serve) as client:
        first = await client.post(f"/approvals/{approval.id}/approve", json=AGENT7)
        second = await client.post(
            f"/approvals/{approval.id}/deny", json={**AGENT7, "reasoning": "changed my mind"}
        )
    assert (first.status_code, second.status_code) == (200, 200)
    verdict = store.approvals.get(approval.id).shadow_verdict
    assert verdict is not None
    assert (verdict["decision"], verdict["reasoning"]) == ("deny", "changed my mind")


async def test_another_supervisors_verdict_is_not_replaced(store: Store, serve: Serve) -> None:
    approval = pending(store)
    own = {"decision": "escalate", "confidence": 0.5, "reasoning": "r", "supervisor": "agent:x"}
    store.approvals.keep_shadow_verdict(approval.id, own)
    async with await shadow_client(serve) as client:
        answer = await client.post(f"/approvals/{approval.id}/approve", json=AGENT7)
    assert answer.status_code == 200
    assert store.approvals.get(approval.id).shadow_verdict == own


async def test_a_person_still_decides_through_the_api_and_a_late_verdict_conflicts(
    store: Store, serve: Serve
) -> None:
    approval = pending(store)
    async with await shadow_client(serve) as client:
        person = await client.post(f"/approvals/{approval.id}/deny", json={"resolved_by": "ana"})
        late = await client.post(f"/approvals/{approval.id}/approve", json=AGENT7)
    assert person.status_code == 200
    assert late.status_code == 409 and late.json() == {"error": "approval already resolved"}
    decided = store.approvals.get(approval.id)
    assert (decided.status, decided.resolved_by, decided.shadow_verdict) == (
        "denied",
        "api:ana",
        None,
    )


async def test_a_forged_shadow_field_is_ignored(store: Store, serve: Serve) -> None:
    approval = pending(store)
    forged = {
        "resolved_by": "ana",
        "shadow": "deny",
        "shadow_verdict": {"decision": "deny", "supervisor": "agent:supervisor"},
        "shadow_confidence": 1.0,
    }
    async with await shadow_client(serve) as client:
        answer = await client.post(f"/approvals/{approval.id}/approve", json=forged)
    assert answer.status_code == 200
    decided = store.approvals.get(approval.id)
    assert (decided.status, decided.shadow_verdict) == ("approved", None)


async def test_without_shadow_supervisors_a_supervisor_resolves_as_before(
    store: Store, client: httpx.AsyncClient
) -> None:
    approval = pending(store)
    answer = await client.post(f"/approvals/{approval.id}/approve", json=AGENT7)
    assert answer.status_code == 200
    decided = store.approvals.get(approval.id)
    assert (decided.status, decided.resolved_by, decided.shadow_verdict) == (
        "approved",
        "supervisor:agent7",
        None,
    )
