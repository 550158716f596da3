"""L1 only where it can judge: the embedded model is skipped, a real model server decides."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from foundry.agent.models import PolicyConfig
from foundry.llm.base import ChatRequest, Chunk, ModelProvider, ToolCall
from foundry.llm.embedded import EmbeddedProvider
from foundry.llm.ollama import OllamaProvider
from foundry.llm.openai_compat import OpenAICompatibleProvider
from foundry.session.events import ApprovalRequested
from foundry.store import Store, TraceRecord
from foundry.supervision.hierarchy import SupervisedGate
from foundry.supervision.l1 import NO_JUDGE, CallUnderReview, L1Supervisor
from tests.llm.fakes import DONE, FakeOllama, FakeOpenAI, said, serve_openai, sse_event
from tests.supervision.test_hierarchy import Recorder

POLICY = {
    "rules": [{"name": "writes", "tool": "files.write*", "action": "supervisor"}],
    "loopDetection": False,
    "approvalTimeoutSeconds": 5,
}
APPROVE = {"decision": "approve", "confidence": 0.95, "reasoning": "inside the project"}
UNSURE = {"decision": "approve", "confidence": 0.5, "reasoning": "looks fine"}


class Spy:
    """A provider that counts the calls it passes on to the real one."""

    def __init__(self, inner: ModelProvider) -> None:
        self.inner = inner
        self.name = inner.name
        self.calls = 0

    def stream(self, request: ChatRequest) -> AsyncIterator[Chunk]:
        self.calls += 1
        return self.inner.stream(request)

    async def list_models(self) -> list[str]:
        return await self.inner.list_models()

    async def aclose(self) -> None:
        await self.inner.aclose()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    store = Store.open(f"sqlite:///{tmp_path / 'l1.sqlite3'}")
    store.traces.add(  # a past call, so that the worker is not an agent without history
        TraceRecord(
            agent_id="worker",
            tool="files.read_file",
            decision="allow",
            resolved_level="policy",
            resolved_by="policy:reads",
        )
    )
    yield store
    store.close()


@pytest.fixture(scope="module")
def ollama_server() -> Iterator[FakeOllama]:
    server = FakeOllama(
        {
            "judge": [said(json.dumps(APPROVE)), DONE],
            "unsure": [said(json.dumps(UNSURE)), DONE],
        }
    )
    server.start()
    yield server
    server.stop()


@pytest.fixture
async def openai_server() -> AsyncIterator[FakeOpenAI]:
    fake = FakeOpenAI({"judge": [sse_event({"content": json.dumps(APPROVE)})]})
    async with await serve_openai(fake):
        yield fake


def gate(
    store: Store, tmp_path: Path, supervisor: L1Supervisor, recorder: Recorder
) -> SupervisedGate:
    config = PolicyConfig.model_validate(POLICY)
    return SupervisedGate(
        store, config, "worker", "s1", tmp_path, recorder, supervisor=supervisor, poll_s=0.02
    )


def write_call() -> ToolCall:
    return ToolCall(id="c1", name="files.write_file", arguments={"path": "notes.md"})


async def answer_first_approval(store: Store, status: str) -> None:
    """Act as the person at the inbox."""
    for _ in range(500):
        pending = await asyncio.to_thread(store.approvals.list, "pending")
        if pending:
            await asyncio.to_thread(store.approvals.resolve, pending[0].id, status, "human:ana")
            return
        await asyncio.sleep(0.01)
    raise AssertionError("no approval appeared")


async def review_with_a_person(
    store: Store, tmp_path: Path, supervisor: L1Supervisor, recorder: Recorder
) -> None:
    review = asyncio.create_task(
        gate(store, tmp_path, supervisor, recorder).review(write_call(), True)
    )
    await answer_first_approval(store, "approved")
    assert (await asyncio.wait_for(review, 30)).allowed


async def test_the_embedded_model_is_not_asked_and_a_person_decides(
    store: Store, tmp_path: Path
) -> None:
    model = Spy(EmbeddedProvider())
    supervisor = L1Supervisor(model, "smollm2", trusted=False)
    recorder = Recorder()
    await review_with_a_person(store, tmp_path, supervisor, recorder)

    assert model.calls == 0
    [approval] = store.approvals.list()
    assert approval.supervisor_verdict is not None
    assert approval.supervisor_verdict["reasoning"] == NO_JUDGE
    [requested] = [e for e in recorder.events if isinstance(e, ApprovalRequested)]
    assert requested.reason == NO_JUDGE
    [skipped] = [t for t in store.traces.list("worker") if t.decision == "escalate"]
    assert (skipped.tool, skipped.reasoning) == ("files.write_file", NO_JUDGE)
    assert skipped.resolved_by == "supervisor:skipped"


async def test_a_call_that_must_escalate_says_both_reasons() -> None:
    supervisor = L1Supervisor(EmbeddedProvider(), "smollm2")
    call = CallUnderReview(
        agent_id="w",
        tool="files.write_file",
        params={"path": "../../etc/passwd"},
        injection_risk=False,
        outside_project=True,
        recent_calls=("files.read_file: allow",),
    )
    verdict = await supervisor.review(call)
    assert verdict.decision == "escalate"
    assert verdict.reasoning.startswith(NO_JUDGE) and "outside the project" in verdict.reasoning
    first = call.model_copy(update={"outside_project": False, "recent_calls": ()})
    assert (await supervisor.review(first)).reasoning == NO_JUDGE  # history is for a judge only


@pytest.mark.parametrize("server", ["ollama", "openai"])
async def test_a_real_model_server_decides_alone(
    store: Store,
    tmp_path: Path,
    ollama_server: FakeOllama,
    openai_server: FakeOpenAI,
    server: str,
) -> None:
    provider: ModelProvider = (
        OllamaProvider(ollama_server.url, timeout_s=5)
        if server == "ollama"
        else OpenAICompatibleProvider(openai_server.url, timeout_s=5)
    )
    supervisor = L1Supervisor(provider, "judge")
    try:
        decision = await gate(store, tmp_path, supervisor, Recorder()).review(write_call(), True)
    finally:
        await provider.aclose()

    assert (decision.allowed, decision.by) == (True, "agent:supervisor")
    assert store.approvals.list() == []
    assert store.traces.list("worker")[0].confidence == 0.95


async def test_an_unsure_real_model_still_escalates_with_its_verdict(
    store: Store, tmp_path: Path, ollama_server: FakeOllama
) -> None:
    provider = OllamaProvider(ollama_server.url, timeout_s=5)
    try:
        await review_with_a_person(store, tmp_path, L1Supervisor(provider, "unsure"), Recorder())
    finally:
        await provider.aclose()

    [approval] = store.approvals.list()
    assert approval.level == "L1" and approval.supervisor_verdict is not None
    assert "below the threshold" in approval.supervisor_verdict["reasoning"]
    assert all(t.decision != "escalate" for t in store.traces.list("worker"))


async def test_the_supervisors_timeout_bounds_a_server_that_never_answers(
    openai_server: FakeOpenAI,
) -> None:
    provider = OpenAICompatibleProvider(openai_server.url, timeout_s=120)
    supervisor = L1Supervisor(provider, "silent", timeout_s=0.3)
    call = CallUnderReview(
        agent_id="w",
        tool="files.write_file",
        params={"path": "notes.md"},
        injection_risk=False,
        outside_project=False,
        recent_calls=("files.read_file: allow",),
    )
    try:
        verdict = await asyncio.wait_for(supervisor.review(call), 10)  # a hang guard
    finally:
        await provider.aclose()
    assert verdict.decision == "escalate"
    assert "no answer within 0.3 s" in verdict.reasoning
