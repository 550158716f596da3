"""A model reply that stops coming after its first part: the turn ends at the idle limit with
one error, and the part that came is shown and kept once (it was printed four times, once per
retry, 502 s in all)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from foundry.agent.models import Agent
from foundry.llm.ollama import OllamaProvider
from foundry.llm.registry import ModelChoice
from foundry.session.chat import ChatSession
from foundry.session.events import ErrorOccurred, EventBody, MessageAdded, TokenDelta
from foundry.session.gate import PermissionGate
from tests.llm.fakes import STALLED_PART, FakeOllama


@pytest.fixture
def ollama_server() -> Iterator[FakeOllama]:
    server = FakeOllama()
    server.start()
    yield server
    server.stop()


@pytest.fixture
async def stalling_provider(ollama_server: FakeOllama) -> AsyncIterator[OllamaProvider]:
    provider = OllamaProvider(host=ollama_server.url, first_byte_timeout_s=0.3)
    yield provider
    await provider.aclose()


async def test_a_stalled_reply_ends_the_turn_once_with_its_part_kept(
    stalling_provider: OllamaProvider,
) -> None:
    events: list[EventBody] = []

    async def sink(body: EventBody) -> None:
        events.append(body)

    agent = Agent.model_validate({"metadata": {"name": "talker"}, "systemPrompt": "Talk."})
    session = ChatSession(
        "s1",
        agent,
        ModelChoice("ollama", "stalling"),
        stalling_provider,
        PermissionGate(agent.settings.tool_permission),
        sink,
        retry_delays_s=(0.01, 0.01, 0.01),  # retries there would be, if it were retried
    )

    turn = await session.send("Tell me a story.")

    shown = "".join(body.text for body in events if isinstance(body, TokenDelta))
    errors = [body for body in events if isinstance(body, ErrorOccurred)]
    replies = [
        body.message.content
        for body in events
        if isinstance(body, MessageAdded) and body.message.role == "assistant"
    ]
    assert turn.ended_by == "error"
    assert shown == STALLED_PART
    assert replies == [STALLED_PART]
    assert turn.reply == STALLED_PART
    assert len(errors) == 1 and not errors[0].retryable
    assert "stopped sending the reply: nothing came for 0.3 s" in errors[0].message
