"""Shadow mode: the L1 supervisor judges, unseen, the calls a person decides; nothing it says
changes what runs."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from foundry.agent.models import PolicyConfig
from foundry.llm.base import ChatRequest, Chunk, ModelProvider, ToolCall
from foundry.llm.embedded import EmbeddedProvider
from foundry.llm.scripted import ScriptedProvider
from foundry.runtime.approvals import Approvals
from foundry.session.events import ApprovalResolved, EventBody, ShadowVerdictGiven
from foundry.store import ApprovalRecord, Store, TraceRecord
from foundry.supervision.hierarchy import SupervisedGate
from foundry.supervision.l1 import L1Supervisor

RULES = {
    "rules": [
        {"name": "lists", "tool": "notes.list", "action": "allow"},
        {"name": "writes", "tool": "files.write*", "action": "supervisor"},
        {"name": "people", "tool": "*", "action": "human"},
    ],
    "loopDetection": False,
    "approvalTimeoutSeconds": 30,
}
SHADOW = {"shadowMode": True}
APPROVE = {"decision": "approve", "confidence": 0.97, "reasoning": "a note like the others"}


class Recorder:
    def __init__(self) -> None:
        self.events: list[EventBody] = []

    async def __call__(self, body: EventBody) -> None:
        self.events.append(body)

    def of(self, kind: type[EventBody]) -> list[Any]:
        return [event for event in self.events if isinstance(event, kind)]


class Held:
    """A provider that answers only once released, counting the requests it is sent."""

    def __init__(self, inner: ModelProvider) -> None:
        self.inner = inner
        self.name = inner.name
        self.calls = 0
        self.release = asyncio.Event()

    async def stream(self, request: ChatRequest) -> AsyncIterator[Chunk]:
        self.calls += 1
        await self.release.wait()
        async for chunk in self.inner.stream(request):
            yield chunk

    async def list_models(self) -> list[str]:
        return []

    async def aclose(self) -> None:
        await self.inner.aclose()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(f"sqlite:///{tmp_path / 'shadow.sqlite3'}") as opened:
        opened.traces.add(  # a past call: the worker is not an agent with no history
            TraceRecord(
                agent_id="worker",
                tool="files.read_file",
                decision="allow",
                resolved_level="policy",
                resolved_by="policy:reads",
            )
        )
        yield opened


def scripted(tmp_path: Path, *turns: dict[str, Any]) -> Held:
    (tmp_path / "verdicts.json").write_text(json.dumps({"turns": list(turns)}))
    return Held(ScriptedProvider(tmp_path / "verdicts.json"))


def gate(
    store: Store, tmp_path: Path, recorder: Recorder, model: Any, **config: Any
) -> SupervisedGate:
    policy = PolicyConfig.model_validate({**RULES, **config})
    return SupervisedGate(
        store,
        policy,
        "worker",
        "s1",
        tmp_path,
        recorder,
        supervisor=L1Supervisor(model, "x"),
        poll_s=0.02,
    )


def note(text: str = "buy milk") -> ToolCall:
    return ToolCall(id="c1", name="notes.add", arguments={"text": text})


async def pending(store: Store) -> ApprovalRecord:
    for _ in range(500):
        found = await asyncio.to_thread(store.approvals.list, "pending")
        if found:
            return found[0]
        await asyncio.sleep(0.01)
    raise AssertionError("no approval appeared")


async def shadow_kept(store: Store, approval_id: str) -> dict[str, Any]:
    for _ in range(500):
        approval = await asyncio.to_thread(store.approvals.get, approval_id)
        if approval.shadow_verdict is not None:
            return approval.shadow_verdict
        await asyncio.sleep(0.01)
    raise AssertionError("no shadow verdict was kept")


async def decide(store: Store, approval_id: str, status: str, **fields: Any) -> None:
    await asyncio.to_thread(store.approvals.resolve, approval_id, status, "human:ana", **fields)


async def test_a_verdict_before_the_person_rides_on_the_resolution_and_changes_nothing(
    store: Store, tmp_path: Path
) -> None:
    model, recorder = scripted(tmp_path, {"json": APPROVE}), Recorder()
    checks = gate(store, tmp_path, recorder, model, **SHADOW)
    review = asyncio.create_task(checks.review(note(), True))
    approval = await pending(store)
    model.release.set()
    kept = await shadow_kept(store, approval.id)
    # a confident approval resolves nothing: the call still waits for the person
    assert (await asyncio.to_thread(store.approvals.get, approval.id)).status == "pending"
    await decide(store, approval.id, "denied", reasoning="not today")
    decision = await review
    await checks.aclose()

    assert (decision.allowed, decision.by, decision.reason) == (False, "human:ana", "not today")
    assert "a note like the others" not in decision.model_dump_json()  # the agent never reads it
    assert (kept["decision"], kept["confidence"], kept["supervisor"]) == (
        "approve",
        0.97,
        "agent:supervisor",
    )
    assert kept["tokens"] > 0 and kept["seconds"] >= 0
    [resolved] = recorder.of(ApprovalResolved)
    assert (resolved.shadow, resolved.shadow_confidence) == ("approve", 0.97)
    [given] = recorder.of(ShadowVerdictGiven)
    assert (given.approval_id, given.decision, given.person) == (approval.id, "approve", None)


async def test_a_person_first_is_not_kept_waiting_and_the_verdict_follows_with_their_decision(
    store: Store, tmp_path: Path
) -> None:
    model, recorder = scripted(tmp_path, {"json": APPROVE}), Recorder()
    checks = gate(store, tmp_path, recorder, model, **SHADOW)
    review = asyncio.create_task(checks.review(note(), True))
    approval = await pending(store)
    await decide(store, approval.id, "approved", params={"text": "buy oat milk"})
    decision = await review  # returned while the supervisor has not answered
    assert model.calls == 1 and not recorder.of(ShadowVerdictGiven)
    model.release.set()
    kept = await shadow_kept(store, approval.id)
    for _ in range(200):
        if recorder.of(ShadowVerdictGiven):
            break
        await asyncio.sleep(0.01)
    await checks.aclose()

    assert decision.allowed and decision.arguments == {"text": "buy oat milk"}
    [resolved] = recorder.of(ApprovalResolved)
    assert resolved.shadow is None and resolved.edited
    [given] = recorder.of(ShadowVerdictGiven)
    assert (given.decision, given.person, given.edited) == ("approve", "approved", True)
    assert kept["decision"] == "approve"


async def test_shadow_mode_is_off_by_default_and_asks_nothing_more(
    store: Store, tmp_path: Path
) -> None:
    model, recorder = scripted(tmp_path, {"json": APPROVE}), Recorder()
    model.release.set()
    checks = gate(store, tmp_path, recorder, model)
    review = asyncio.create_task(checks.review(note(), True))
    approval = await pending(store)
    await decide(store, approval.id, "approved")
    assert (await review).allowed
    await checks.aclose()

    assert model.calls == 0
    assert (await asyncio.to_thread(store.approvals.get, approval.id)).shadow_verdict is None
    assert not recorder.of(ShadowVerdictGiven)
    assert recorder.of(ApprovalResolved)[0].shadow is None


async def test_the_embedded_model_is_never_asked_in_shadow_mode(
    store: Store, tmp_path: Path
) -> None:
    model, recorder = Held(EmbeddedProvider()), Recorder()
    model.release.set()
    checks = gate(store, tmp_path, recorder, model, **SHADOW)
    review = asyncio.create_task(checks.review(note(), True))
    approval = await pending(store)
    await decide(store, approval.id, "approved")
    assert (await review).allowed
    await checks.aclose()

    assert model.calls == 0
    assert (await asyncio.to_thread(store.approvals.get, approval.id)).shadow_verdict is None
    assert not recorder.of(ShadowVerdictGiven)


async def test_a_failing_supervisor_leaves_no_verdict_and_is_logged(
    store: Store, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    model, recorder = scripted(tmp_path, {"error": "the model server is down"}), Recorder()
    model.release.set()
    checks = gate(store, tmp_path, recorder, model, **SHADOW)
    review = asyncio.create_task(checks.review(note(), True))
    approval = await pending(store)
    for _ in range(500):  # until the review has failed
        if model.calls and not checks._shadows.running:
            break
        await asyncio.sleep(0.01)
    await decide(store, approval.id, "denied", reasoning="no")
    assert not (await review).allowed
    await checks.aclose()

    assert (await asyncio.to_thread(store.approvals.get, approval.id)).shadow_verdict is None
    assert not recorder.of(ShadowVerdictGiven)
    assert recorder.of(ApprovalResolved)[0].shadow is None
    assert any("shadow review failed" in record.message for record in caplog.records)


async def test_closing_cancels_a_pending_review_cleanly(
    store: Store, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    model, recorder = scripted(tmp_path, {"json": APPROVE}), Recorder()
    checks = gate(store, tmp_path, recorder, model, **SHADOW)
    review = asyncio.create_task(checks.review(note(), True))
    approval = await pending(store)
    await decide(store, approval.id, "approved")
    assert (await review).allowed
    assert checks._shadows.running == 1
    await checks.aclose()

    assert checks._shadows.running == 0
    assert (await asyncio.to_thread(store.approvals.get, approval.id)).shadow_verdict is None
    assert not recorder.of(ShadowVerdictGiven)
    assert not [record for record in caplog.records if record.levelno >= logging.WARNING]


async def test_an_escalation_by_the_supervisor_counts_as_its_verdict_without_asking_again(
    store: Store, tmp_path: Path
) -> None:
    unsure = {"decision": "escalate", "confidence": 0.4, "reasoning": "an unusual file"}
    model, recorder = scripted(tmp_path, {"json": unsure}), Recorder()
    model.release.set()
    checks = gate(store, tmp_path, recorder, model, **SHADOW)
    write = ToolCall(id="c2", name="files.write_file", arguments={"path": "a.txt"})
    review = asyncio.create_task(checks.review(write, True))
    approval = await pending(store)
    kept = await shadow_kept(store, approval.id)
    await decide(store, approval.id, "approved")
    assert (await review).allowed
    await checks.aclose()

    assert model.calls == 1  # the visible review only
    assert (kept["decision"], kept["confidence"], kept["seen"]) == ("escalate", 0.4, True)
    [resolved] = recorder.of(ApprovalResolved)
    assert (resolved.shadow, resolved.shadow_confidence) == ("escalate", 0.4)


async def test_an_api_supervisors_verdict_rides_on_the_resolution_event(
    store: Store, tmp_path: Path
) -> None:
    model, recorder = scripted(tmp_path, {"json": APPROVE}), Recorder()
    checks = gate(store, tmp_path, recorder, model)  # Foundry's own L1 not in shadow mode
    review = asyncio.create_task(checks.review(note(), True))
    approval = await pending(store)
    approvals = Approvals(store)
    await asyncio.to_thread(
        approvals.keep_supervisor_verdict, approval.id, "approved", "supervisor:agent7", "ok", 0.9
    )
    await decide(store, approval.id, "denied", reasoning="no")
    assert not (await review).allowed
    await checks.aclose()

    [resolved] = recorder.of(ApprovalResolved)
    assert (resolved.shadow, resolved.shadow_confidence) == ("approve", 0.9)


async def test_shadow_mode_asks_no_one_about_calls_the_rules_or_the_supervisor_settle(
    store: Store, tmp_path: Path
) -> None:
    model, recorder = scripted(tmp_path, {"json": APPROVE}), Recorder()
    model.release.set()
    checks = gate(store, tmp_path, recorder, model, **SHADOW)
    listed = await checks.review(ToolCall(id="c3", name="notes.list", arguments={}), True)
    write = ToolCall(id="c4", name="files.write_file", arguments={"path": "a.txt"})
    written = await checks.review(write, True)
    await checks.aclose()

    assert (listed.allowed, listed.by) == (True, "policy:lists")
    assert (written.allowed, written.by) == (True, "agent:supervisor")
    assert model.calls == 1  # the supervisor's visible verdict on the write, nothing more
    assert store.approvals.list() == []
    assert not recorder.of(ShadowVerdictGiven)


def test_the_cli_shows_no_shadow_verdict_with_an_approval(store: Store) -> None:
    from foundry.cli.supervision import approval_lines
    from foundry.store.tables import utc_now

    approval = store.approvals.create(
        ApprovalRecord(agent_id="worker", tool="notes.add", params={"text": "a"})
    )
    verdict = {"decision": "deny", "confidence": 0.9, "reasoning": "UNSEEN", "supervisor": "x"}
    store.approvals.keep_shadow_verdict(approval.id, verdict)
    lines = approval_lines(store.approvals.get(approval.id), True, utc_now())
    assert not any("UNSEEN" in line or "shadow" in line for line in lines)


async def test_a_call_the_supervisor_never_decides_alone_costs_no_model_call(
    store: Store, tmp_path: Path
) -> None:
    model, recorder = scripted(tmp_path, {"json": APPROVE}), Recorder()
    checks = gate(store, tmp_path, recorder, model, **SHADOW)
    mail = ToolCall(id="c5", name="mail.send", arguments={"to": "all@example.com"})
    review = asyncio.create_task(checks.review(mail, True))
    approval = await pending(store)
    kept = await shadow_kept(store, approval.id)
    await decide(store, approval.id, "denied", reasoning="no")
    assert not (await review).allowed
    await checks.aclose()

    assert model.calls == 0
    assert (kept["decision"], kept["confidence"]) == ("escalate", 1.0)
    assert (kept["seconds"], kept["tokens"]) == (0.0, 0)
    assert "high-stakes" in kept["reasoning"]
