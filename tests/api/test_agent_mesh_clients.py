"""Real agent-mesh clients read Foundry's answers as they read agent-mesh's own.

What the clients expect, from their code:

- agent-mesh (github.com/KTCrisis/agent-mesh, proxy/handler.go) serves Go structs: every text
  field of `approvalView`, `grantView` and `trace.Entry` is a Go `string`, so it is never null
  (an empty string, or absent when `omitempty`); its grant body is `grantRequest{agent, tools,
  duration}` with `duration` parsed by `time.ParseDuration` ("30m", "2h", "1h30m").
- agent7's supervisor (github.com/KTCrisis/agent7, backend/app/services/supervisor/models.py
  and client.py) validates every listed approval with pydantic, `policy_rule: str = ""` among
  its fields, inside one list comprehension: a single null makes the whole poll fail, so no
  approval is handled, and its runner logs the error and polls again, forever. The models
  below are its models, field for field.
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from typing import Any

import httpx
import pytest
from pydantic import BaseModel, Field

from foundry.store import Store
from foundry.store.tables import utc_now
from tests.api.records import TOKEN, pending, trace

# Fields that are not text, where null means "none" and every known client accepts it.
NULLABLE = {"resolved_at", "confidence", "supervisor_confidence", "decided_ms", "params"}


class ApprovalSummary(BaseModel):
    id: str
    agent_id: str
    tool: str
    params: dict[str, Any] = Field(default_factory=dict)
    policy_rule: str = ""
    status: str = "pending"
    created_at: datetime
    remaining: str | None = None
    resolved_by: str | None = None
    resolved_at: datetime | None = None
    reasoning: str | None = None
    confidence: float | None = None
    injection_risk: bool = False


class TraceEntry(BaseModel):
    trace_id: str = ""
    agent_id: str = ""
    tool: str = ""
    params: dict[str, Any] = Field(default_factory=dict)
    policy: str = ""
    policy_rule: str = ""
    status_code: int = 0
    latency_ms: int = 0
    error: str | None = None
    timestamp: datetime | None = None


class GrantInfo(BaseModel):
    id: str
    agent: str
    tools: str
    expires_at: str
    remaining: str
    granted_by: str


class ApprovalDetail(ApprovalSummary):
    recent_traces: list[TraceEntry] = Field(default_factory=list)
    active_grants: list[GrantInfo] = Field(default_factory=list)


class ResolveRequest(BaseModel):
    resolved_by: str
    reasoning: str
    confidence: float


def message_review(store: Store, agent: str = "claude") -> str:
    """An approval as the engine makes one when a message supervisor asks for a human review:
    no policy rule sent it there, so its policy_rule is None in the store."""
    return pending(
        store,
        tool="supervision.review_request",
        agent=agent,
        params={"content": "the user's message", "reason": "the guardian saw a card number"},
        policy_rule=None,
    ).id


def agent7_poll(mesh_url: str, agent_id: str = "agent7") -> list[str]:
    """agent7's SupervisorRunner in one round: list pending (each validated), read each one's
    detail, approve it with its own ResolveRequest; the ids it resolved."""
    resolved = []
    with httpx.Client(base_url=mesh_url, timeout=10) as http:
        listed = http.get("/approvals", params={"status": "pending"}).raise_for_status()
        for summary in [ApprovalSummary.model_validate(item) for item in listed.json()]:
            detail = http.get(f"/approvals/{summary.id}").raise_for_status()
            ApprovalDetail.model_validate(detail.json())
            verdict = ResolveRequest(
                resolved_by=f"supervisor:{agent_id}", reasoning="rule: known agent", confidence=0.9
            )
            answer = http.post(f"/approvals/{summary.id}/approve", json=verdict.model_dump())
            if answer.status_code == 200:
                resolved.append(summary.id)
    return resolved


async def test_agent7_handles_every_approval_when_one_is_a_message_review(
    store: Store, base_url: str
) -> None:
    review = message_review(store)
    write = pending(store).id
    trace(store)

    resolved = await asyncio.to_thread(agent7_poll, f"{base_url}/t/{TOKEN}")

    assert sorted(resolved) == sorted([review, write])
    assert store.approvals.get(review).resolved_by == "supervisor:agent7"
    traced = [t for t in store.traces.list("claude") if t.approval_id]
    assert {(t.resolved_level, t.confidence) for t in traced} == {("supervisor", 0.9)}


async def test_agent7_reads_a_detail_with_traces_and_grants(
    store: Store, client: httpx.AsyncClient
) -> None:
    review = message_review(store)
    trace(store)
    store.grants.add("filesystem.read_*", utc_now() + timedelta(minutes=30), "me", "claude")

    detail = ApprovalDetail.model_validate((await client.get(f"/approvals/{review}")).json())

    assert detail.policy_rule == ""
    assert detail.remaining in ("4m59s", "5m0s")
    assert [t.policy for t in detail.recent_traces] == ["allow"]
    assert [g.tools for g in detail.active_grants] == ["filesystem.read_*"]


async def test_no_text_field_is_ever_null(store: Store, client: httpx.AsyncClient) -> None:
    review = message_review(store)
    done = message_review(store)
    await client.post(f"/approvals/{done}/deny")
    trace(store)  # a policy decision: no rule name, no approval
    await client.post("/grants", json={"tools": "fs.*", "duration": "1h"})

    answers = [
        (await client.get("/approvals")).json(),
        (await client.get(f"/approvals/{review}")).json(),
        (await client.get(f"/approvals/{done}")).json(),
        (await client.get("/traces")).json(),
        (await client.get("/grants")).json(),
        (await client.post(f"/approvals/{review}/approve")).json(),
        (await client.post(f"/approvals/{review}/approve")).json(),  # the 409's body
    ]

    assert sorted(nulls(answers) - NULLABLE) == []


def nulls(value: Any, key: str = "") -> set[str]:
    """The names of the fields that are null anywhere in `value`."""
    if isinstance(value, dict):
        return {name for item, sub in value.items() for name in nulls(sub, item)}
    if isinstance(value, list):
        return {name for item in value for name in nulls(item, key)}
    return {key} if value is None else set()


@pytest.mark.parametrize(
    ("duration", "seconds"),
    [
        ("45s", 45),
        ("30m", 1800),
        ("2h", 7200),
        ("1h30m", 5400),
        ("1.5h", 5400),
        ("168h", 604800),
        ("500ms", 0.5),
        ("1m30.5s", 90.5),
    ],
)
async def test_a_grant_takes_agent_meshs_duration_form(
    client: httpx.AsyncClient, duration: str, seconds: float
) -> None:
    body = {"agent": "claude", "tools": "filesystem.write_*", "duration": duration}

    response = await client.post("/grants", json=body)

    assert response.status_code == 201
    grant = GrantInfo.model_validate(response.json())
    expires = datetime.fromisoformat(grant.expires_at)
    assert abs((expires - utc_now()).total_seconds() - seconds) < 5
    assert (grant.agent, grant.tools) == ("claude", "filesystem.write_*")


@pytest.mark.parametrize(
    "body",
    [
        {"agent": "*", "tools": "fs.*", "duration": "30"},
        {"agent": "*", "tools": "fs.*", "duration": "m"},
        {"agent": "*", "tools": "fs.*", "duration": "30x"},
        {"agent": "*", "tools": "fs.*", "duration": "-5m"},
        {"agent": "*", "tools": "fs.*", "duration": "0s"},
        {"agent": "*", "tools": "fs.*", "duration": "87601h"},
        {"agent": "*", "tools": "fs.*", "duration": "9" * 60 + "h"},
        {"agent": "*", "tools": "fs.*", "duration": "1e3h"},
        {"agent": "*", "tools": "fs.*", "duration": "7d"},  # Go has no days
        {"agent": "*", "tools": "fs.*", "duration": " 30m"},
        {"agent": "*", "tools": "fs.*", "duration": ""},
        {"agent": "*", "tools": "fs.*", "duration": 1800},
        {"agent": "*", "tools": "fs.*", "duration": "30m", "duration_seconds": 1800},
        {"agent": "*", "tools": "fs.*", "duration": "30m", "expires_at": "2099-01-01T00:00:00Z"},
    ],
)
async def test_a_duration_that_is_not_one_is_refused(
    client: httpx.AsyncClient, body: dict[str, Any]
) -> None:
    response = await client.post("/grants", json=body)

    assert response.status_code == 422
    assert "duration" in response.text
    assert (await client.get("/grants")).json() == []
