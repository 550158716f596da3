"""The in-process model's queue: a chat's requests go ahead of reviews, and interrupt them."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from foundry.llm.base import ChatMessage, ChatRequest, TextDelta
from foundry.llm.embedded import EmbeddedProvider, EmbeddedRuntime
from foundry.llm.model_queue import ModelQueue, OnChunk
from foundry.llm.priority import (
    LimitExpired,
    ModelUse,
    Priority,
    QueueState,
    WaitClock,
    as_review,
    current_use,
    within_limit,
)

CHAT = ModelUse()
WAIT_S = 30  # a hang guard only: every test waits on events, never on time


def review(name: str) -> ModelUse:
    return ModelUse(priority=Priority.REVIEW, caller=f"review by {name}")


class FakeModel:
    """Runs a call by streaming `chunks` pieces; a call named in `held` waits, after its first
    chunk, until the test lets it go on."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self.first_chunk_sent: dict[str, threading.Event] = {}
        self.held: dict[str, threading.Event] = {}

    def hold(self, name: str) -> None:
        self.first_chunk_sent[name] = threading.Event()
        self.held[name] = threading.Event()

    def complete(self, body: dict[str, Any], on_chunk: OnChunk) -> str:
        name = body["name"]
        self.started.append(name)
        for index in range(body.get("chunks", 3)):
            if on_chunk({"name": name, "piece": index}):
                return "stopped"
            if index == 0 and name in self.held:
                self.first_chunk_sent[name].set()
                assert self.held[name].wait(WAIT_S)
        return "done"


@pytest.fixture
def model() -> FakeModel:
    return FakeModel()


@pytest.fixture
def queue(model: FakeModel) -> Iterator[ModelQueue]:
    opened = ModelQueue(model.complete, thread_name="test-model")
    yield opened
    for event in model.held.values():
        event.set()
    opened.close()


def collector() -> tuple[list[int], OnChunk]:
    pieces: list[int] = []

    def on_chunk(chunk: dict[str, Any]) -> bool:
        pieces.append(chunk["piece"])
        return False

    return pieces, on_chunk


def test_a_chat_goes_ahead_of_the_reviews_queued_before_it(
    model: FakeModel, queue: ModelQueue
) -> None:
    model.hold("first chat")
    first = queue.submit({"name": "first chat"}, collector()[1], CHAT)
    assert model.first_chunk_sent["first chat"].wait(WAIT_S)
    reviews = [queue.submit({"name": f"review {n}"}, collector()[1], review(n)) for n in "ab"]
    second = queue.submit({"name": "second chat"}, collector()[1], CHAT)
    model.held["first chat"].set()
    for job in (first, second, *reviews):
        assert job.result(WAIT_S) == "done"
    assert model.started == ["first chat", "second chat", "review a", "review b"]


def test_chats_are_served_in_the_order_they_came(model: FakeModel, queue: ModelQueue) -> None:
    model.hold("one")
    jobs = [queue.submit({"name": name}, collector()[1], CHAT) for name in ("one", "two", "three")]
    assert model.first_chunk_sent["one"].wait(WAIT_S)
    model.held["one"].set()
    for job in jobs:
        job.result(WAIT_S)
    assert model.started == ["one", "two", "three"]


def test_a_running_review_gives_way_to_a_chat_and_runs_again_whole(
    model: FakeModel, queue: ModelQueue
) -> None:
    model.hold("review")
    pieces, on_chunk = collector()
    running = queue.submit({"name": "review"}, on_chunk, review("architect"))
    assert model.first_chunk_sent["review"].wait(WAIT_S)
    chat = queue.submit({"name": "chat"}, collector()[1], CHAT)
    model.held["review"].set()
    assert chat.result(WAIT_S) == "done"
    assert running.result(WAIT_S) == "done"
    assert model.started == ["review", "chat", "review"]
    assert pieces == [0, 1, 2]  # the stopped run's first piece was never handed over


def test_a_review_hands_its_chunks_over_only_once_complete(
    model: FakeModel, queue: ModelQueue
) -> None:
    model.hold("review")
    pieces, on_chunk = collector()
    job = queue.submit({"name": "review"}, on_chunk, review("curator"))
    assert model.first_chunk_sent["review"].wait(WAIT_S)
    assert pieces == []
    model.held["review"].set()
    job.result(WAIT_S)
    assert pieces == [0, 1, 2]


def test_the_state_names_who_runs_and_who_waits_in_order(
    model: FakeModel, queue: ModelQueue
) -> None:
    seen: list[QueueState] = []
    queue.watch(seen.append)
    model.hold("review")
    first = queue.submit({"name": "review"}, collector()[1], review("architect"))
    assert model.first_chunk_sent["review"].wait(WAIT_S)
    queue.submit({"name": "later"}, collector()[1], review("curator"))
    state = queue.state()
    assert state.running == review("architect")
    assert state.waiting == (review("curator"),)
    model.held["review"].set()
    first.result(WAIT_S)
    assert any(s.running == review("architect") and s.waiting for s in seen)


def test_a_cancelled_call_never_runs_and_leaves_the_queue(
    model: FakeModel, queue: ModelQueue
) -> None:
    model.hold("busy")
    busy = queue.submit({"name": "busy"}, collector()[1], CHAT)
    assert model.first_chunk_sent["busy"].wait(WAIT_S)
    dropped = queue.submit({"name": "dropped"}, collector()[1], CHAT)
    assert dropped.cancel()
    assert queue.state().waiting == ()
    model.held["busy"].set()
    busy.result(WAIT_S)
    queue.submit({"name": "after"}, collector()[1], CHAT).result(WAIT_S)
    assert model.started == ["busy", "after"]


def test_a_review_whose_reader_left_is_not_run_again(model: FakeModel, queue: ModelQueue) -> None:
    model.hold("review")
    gone = threading.Event()
    job = queue.submit({"name": "review"}, collector()[1], review("architect"), gone.is_set)
    assert model.first_chunk_sent["review"].wait(WAIT_S)
    queue.submit({"name": "chat"}, collector()[1], CHAT)
    gone.set()
    model.held["review"].set()
    assert job.result(WAIT_S) is None
    queue.submit({"name": "last"}, collector()[1], CHAT).result(WAIT_S)
    assert model.started == ["review", "chat", "last"]


def test_calls_inside_as_review_are_reviews_and_others_a_chats() -> None:
    assert current_use() == CHAT
    with as_review("Conversation architect"):
        assert current_use() == review("Conversation architect")
    assert current_use() == CHAT


class RecordingRuntime(EmbeddedRuntime):
    """A runtime whose model says its call's first message back; the call named `hold` waits
    after its first chunk until the test lets it go on."""

    def __init__(self, hold: str) -> None:
        super().__init__(Path("recording.gguf"))
        self.started: list[str] = []
        self.first_chunk_sent = threading.Event()
        self.release = threading.Event()
        self._hold = hold

    def _complete(self, body: dict[str, Any], on_chunk: OnChunk) -> Any:
        text = body["messages"][0]["content"]
        self.started.append(text)
        on_chunk({"choices": [{"delta": {"content": text}, "finish_reason": None}]})
        if text == self._hold:
            self.first_chunk_sent.set()
            assert self.release.wait(WAIT_S)
        return None


def said(text: str) -> ChatRequest:
    return ChatRequest(model="smollm2", messages=(ChatMessage(role="user", content=text),))


async def reply(provider: EmbeddedProvider, text: str) -> str:
    chunks = [chunk async for chunk in provider.stream(said(text))]
    return "".join(chunk.text for chunk in chunks if isinstance(chunk, TextDelta))


async def reviewed(provider: EmbeddedProvider, text: str) -> str:
    with as_review("Conversation architect"):
        return await reply(provider, text)


async def queued(runtime: EmbeddedRuntime, count: int) -> None:
    """Until `count` requests wait for the model (each task runs until it has queued its own)."""
    for _ in range(1000):
        if len(runtime.queue_state().waiting) >= count:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"{count} requests never queued: {runtime.queue_state()}")


async def test_through_the_provider_a_chat_goes_ahead_of_a_review_queued_before_it() -> None:
    runtime = RecordingRuntime(hold="first chat")
    provider = EmbeddedProvider(runtime)
    try:
        first = asyncio.create_task(reply(provider, "first chat"))
        await asyncio.to_thread(runtime.first_chunk_sent.wait, WAIT_S)
        review = asyncio.create_task(reviewed(provider, "review"))
        await queued(runtime, 1)  # the review's request is queued before the second chat's
        second = asyncio.create_task(reply(provider, "second chat"))
        await queued(runtime, 2)
        assert [use.caller for use in runtime.queue_state().waiting] == [
            "chat",
            "review by Conversation architect",
        ]
        runtime.release.set()
        assert await asyncio.wait_for(asyncio.gather(first, review, second), WAIT_S) == [
            "first chat",
            "review",
            "second chat",
        ]
        assert runtime.started == ["first chat", "second chat", "review"]
    finally:
        runtime.close()


def test_a_call_counts_its_waits_for_its_turn_and_a_run_it_lost(
    model: FakeModel, queue: ModelQueue
) -> None:
    model.hold("review")
    review_clock, chat_clock = WaitClock(), WaitClock()
    running = queue.submit({"name": "review"}, collector()[1], review("a"), clock=review_clock)
    assert model.first_chunk_sent["review"].wait(WAIT_S)
    before_chat = review_clock.waited()
    chat = queue.submit({"name": "chat"}, collector()[1], CHAT, clock=chat_clock)
    model.held["review"].set()
    chat.result(WAIT_S)
    running.result(WAIT_S)
    assert chat_clock.waited() > 0  # it waited for the review to stop
    assert review_clock.waited() > before_chat  # its lost run and the chat's count as waiting
    assert review_clock.waited() == review_clock.waited()  # it ran to the end: no longer waiting


async def test_a_review_waiting_for_the_model_is_not_timed_out_by_the_wait() -> None:
    """Its call's limit (0.5 s) and the review's (1 s) count from when the model takes it up:
    here it waits 1.5 s behind a chat, then answers."""
    runtime = RecordingRuntime(hold="chat")
    provider = EmbeddedProvider(runtime)
    try:
        chat = asyncio.create_task(reply(provider, "chat"))
        await asyncio.to_thread(runtime.first_chunk_sent.wait, WAIT_S)
        request = said("review").model_copy(update={"timeout_s": 0.5})

        async def review_call() -> str:
            with as_review("architect"):
                chunks = [chunk async for chunk in provider.stream(request)]
            return "".join(chunk.text for chunk in chunks if isinstance(chunk, TextDelta))

        review_task = asyncio.create_task(within_limit(review_call(), 1.0))
        await queued(runtime, 1)
        await asyncio.sleep(1.5)  # past both limits, while it waits its turn
        runtime.release.set()
        assert await asyncio.wait_for(asyncio.gather(chat, review_task), WAIT_S) == [
            "chat",
            "review",
        ]
    finally:
        runtime.close()


async def test_work_past_its_limit_is_cancelled_and_said_to_be() -> None:
    cancelled = asyncio.Event()

    async def forever() -> None:
        try:
            await asyncio.sleep(WAIT_S)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    with pytest.raises(LimitExpired):
        await within_limit(forever(), 0.05)
    assert cancelled.is_set()
