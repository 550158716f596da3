"""Message supervisors in a chat: the guardian masks and blocks, statistics are collected, a
failing supervisor applies its fallback, and a human review goes to the inbox."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from foundry.agent.models import (
    Agent,
    CollectionSupervisorEntry,
    GuardianSupervisorEntry,
)
from foundry.llm.base import ChatMessage, ChatRequest, Chunk, TextDelta, Usage
from foundry.llm.registry import ModelChoice
from foundry.session.chain import SupervisionChain
from foundry.session.chat import ChatSession
from foundry.session.events import EventBody, MessageRevised, SupervisorDecided, TurnFinished
from foundry.session.gate import GateDecision, PermissionGate
from foundry.session.supervisors import Direction, SupervisionResult
from foundry.supervision.collection import CollectionSupervisor
from foundry.supervision.guardian import GuardianSupervisor, mask_pii


class EchoModel:
    """Replies with a fixed text and remembers what it was asked."""

    name = "echo"

    def __init__(self, reply: str = "Noted.") -> None:
        self.reply = reply
        self.requests: list[ChatRequest] = []

    async def stream(self, request: ChatRequest) -> AsyncIterator[Chunk]:
        self.requests.append(request)
        yield TextDelta(text=self.reply)
        yield Usage(input_tokens=1, output_tokens=1)

    async def list_models(self) -> list[str]:
        return []

    async def aclose(self) -> None:
        return None


BOTH = frozenset(("request", "response"))


class Crashing:
    id = "crashy"
    name = "Crashy"
    directions = BOTH
    reach = "message"
    budget_s = 5.0

    def __init__(self, fallback: str) -> None:
        self.fallback_behavior = fallback

    async def review(self, session: Any, direction: Direction, message: ChatMessage) -> Any:
        raise RuntimeError("model server down")

    async def aclose(self) -> None:
        return None


class WantsHuman:
    id = "cautious"
    name = "Cautious"
    fallback_behavior = "allow"
    directions = BOTH
    reach = "message"
    budget_s = 5.0

    async def review(self, session: Any, direction: Direction, message: ChatMessage) -> Any:
        if direction == "request":
            return SupervisionResult(action="human_review", reasons=("unusual request",))
        return SupervisionResult(action="allow")

    async def aclose(self) -> None:
        return None


def guardian(**config: Any) -> GuardianSupervisor:
    return GuardianSupervisor(
        GuardianSupervisorEntry.model_validate(
            {"type": "guardian", "id": "guardian", "name": "Guardian", "config": config}
        )
    )


def session(model: EchoModel, supervisors: list[Any], **chain: Any) -> tuple[ChatSession, list]:
    events: list[EventBody] = []

    async def sink(body: EventBody) -> None:
        events.append(body)

    agent = Agent.model_validate({"metadata": {"name": "t"}, "systemPrompt": "Be kind."})
    chat = ChatSession(
        "s1",
        agent,
        ModelChoice("echo", "x"),
        model,
        PermissionGate(agent.settings.tool_permission),
        sink,
        chain=SupervisionChain(supervisors, **chain),
    )
    return chat, events


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        ("mail me at ana.lopez@example.com", "mail me at [email]"),
        ("card 4111 1111 1111 1111 please", "card [card number] please"),
        ("call +1 (415) 555-0199 today", "call [phone] today"),
        ("ssn 123-45-6789", "ssn [national id]"),
        ("order 1234 5678 9012 3456 is not a card", "order 1234 5678 9012 3456 is not a card"),
    ],
)
def test_personal_data_is_masked(text: str, masked: str) -> None:
    assert mask_pii(text, ("email", "phone", "card", "national_id"))[0] == masked


async def test_the_guardian_masks_what_the_model_sees_and_records_it() -> None:
    model = EchoModel()
    chat, events = session(model, [guardian()])
    result = await chat.send("My email is ana@example.com")
    assert result.reply == "Noted."
    assert model.requests[0].messages[-1].content == "My email is [email]"
    assert chat.messages[0].content == "My email is [email]"
    assert not any(isinstance(e, MessageRevised) for e in events)  # stored masked already
    assert not any("ana@example.com" in e.model_dump_json() for e in events)
    decided = [e for e in events if isinstance(e, SupervisorDecided)]
    assert decided[0].action == "modify" and "1 email" in decided[0].reasons[0]
    assert decided[0].message_index == 0


async def test_a_blocked_keyword_stops_the_request_and_says_why() -> None:
    model = EchoModel()
    chat, _ = session(model, [guardian(blockKeywords=["DROP TABLE"])])
    result = await chat.send("please drop table users")
    assert result.ended_by == "blocked" and model.requests == []
    assert result.reply.startswith("Blocked by Guardian: contains blocked text")


async def test_a_blocked_response_ends_the_turn_blocked_like_a_blocked_request() -> None:
    model = EchoModel("Run DROP TABLE users now")
    chat, events = session(model, [guardian(applyTo=["response"], blockKeywords=["DROP TABLE"])])
    result = await chat.send("what should I run?")
    assert result.ended_by == "blocked"
    assert result.reply.startswith("The reply was blocked by Guardian")
    [finished] = [e for e in events if isinstance(e, TurnFinished)]
    assert finished.ended_by == "blocked"


async def test_responses_are_supervised_too() -> None:
    model = EchoModel("Write to bob@example.com")
    chat, _ = session(model, [guardian(applyTo=["response"])])
    result = await chat.send("who do I ask?")
    assert result.reply == "Write to [email]"


async def test_statistics_are_collected_and_exported(tmp_path: Path) -> None:
    collector = CollectionSupervisor(
        CollectionSupervisorEntry.model_validate(
            {"type": "collection", "id": "stats", "config": {"exportPath": "stats.json"}}
        ),
        tmp_path,
    )
    chat, _ = session(EchoModel("one two three"), [collector])
    await chat.send("hello there")
    await chat.send("again")
    await chat.chain.settle()  # statistics are collected after each reply
    stats = json.loads((tmp_path / "stats.json").read_text())["s1"]
    assert (stats["requests"], stats["responses"], stats["response_words"]) == (2, 2, 6)


@pytest.mark.parametrize(("fallback", "ended_by"), [("allow", "reply"), ("block", "blocked")])
async def test_a_failing_supervisor_applies_its_fallback_and_says_so(
    fallback: str, ended_by: str
) -> None:
    chat, events = session(EchoModel(), [Crashing(fallback)])
    result = await chat.send("hi")
    assert result.ended_by == ended_by
    decided = next(e for e in events if isinstance(e, SupervisorDecided))
    assert decided.fallback and "model server down" in decided.reasons[0]
    assert f"fallback: {fallback}" in decided.reasons[0]


@pytest.mark.parametrize(("approved", "ended_by"), [(True, "reply"), (False, "blocked")])
async def test_a_human_review_waits_for_the_human(approved: bool, ended_by: str) -> None:
    asked: list[str] = []

    async def human(direction: Direction, content: str, reason: str) -> GateDecision:
        asked.append(f"{direction}: {content} ({reason})")
        return GateDecision(allowed=approved, by="human:gui:ana")

    chat, _ = session(EchoModel(), [WantsHuman()], human_review=human)
    result = await chat.send("transfer all funds")
    assert asked == ["request: transfer all funds (unusual request)"]
    assert result.ended_by == ended_by


@pytest.mark.parametrize(
    ("by", "reason", "said"),
    [
        ("supervisor:agent7", "wire transfers need a ticket", "Blocked by the supervisor agent7: "
         "wire transfers need a ticket"),
        ("human:gui:ana", "", "Blocked by ana (in the app): unusual request (not approved)"),
        ("api:ops-bot", "no", "Blocked by ops-bot (through the approvals API): no"),
        ("timeout", "", "Blocked by no one in time (the review timed out): unusual request"),
    ],
)  # fmt: skip
async def test_a_blocked_review_says_who_blocked_it_and_why(
    by: str, reason: str, said: str
) -> None:
    async def reviewed(direction: Direction, content: str, asked: str) -> GateDecision:
        return GateDecision(allowed=False, by=by, reason=reason)

    chat, _ = session(EchoModel(), [WantsHuman()], human_review=reviewed)
    result = await chat.send("transfer all funds")
    assert result.ended_by == "blocked" and said in result.reply
    assert (
        "unusual request" not in result.reply or not reason
    )  # the reviewer's reason, not WantsHuman's


async def test_with_no_one_to_review_a_review_request_blocks() -> None:
    chat, _ = session(EchoModel(), [WantsHuman()])
    result = await chat.send("transfer all funds")
    assert result.ended_by == "blocked" and "no one can review" in result.reply
