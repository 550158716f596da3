"""tsagent's `architect` supervisor: accepted in agent files, built into the chain, and in a chat
it notes the conversation's patterns and the rules it suggests without ever blocking."""

from __future__ import annotations

import json
from pathlib import Path

from foundry.agent import Agent, validate_agent
from foundry.agent.document import to_document
from foundry.agent.models import ArchitectSupervisorEntry
from foundry.llm.base import ChatMessage, ToolCall
from foundry.session.events import SupervisorDecided
from foundry.supervision.architect import ArchitectSupervisor
from foundry.supervision.factory import message_supervisors

from .test_message_chain import EchoModel, session

ARCHITECT = {"type": "architect", "id": "architect", "name": "Architect", "config": {"depth": 2}}


def architect() -> ArchitectSupervisor:
    return ArchitectSupervisor(ArchitectSupervisorEntry.model_validate(ARCHITECT))


def test_an_architect_entry_is_valid_and_keeps_its_config(tmp_path: Path) -> None:
    config = {"metadata": {"name": "watched"}, "supervisors": [ARCHITECT]}
    (tmp_path / "watched").mkdir()
    (tmp_path / "watched" / "tsagent.json").write_text(json.dumps(config))
    assert validate_agent(tmp_path / "watched") == []
    agent = Agent.model_validate(config)
    assert to_document(agent)["supervisors"] == [ARCHITECT]


async def test_the_chain_builds_an_architect_for_the_entry(tmp_path: Path) -> None:
    agent = Agent.model_validate({"metadata": {"name": "a"}, "supervisors": [ARCHITECT]})
    [supervisor] = await message_supervisors(agent, tmp_path)
    assert isinstance(supervisor, ArchitectSupervisor)
    assert (supervisor.id, supervisor.name, supervisor.fallback_behavior) == (
        "architect",
        "Architect",
        "allow",
    )


async def test_it_allows_every_message_and_records_what_it_noticed() -> None:
    model = EchoModel("Sure.")
    watcher = architect()
    chat, events = session(model, [watcher])
    await chat.send("What is the capital of France?")
    result = await chat.send("How far is it from Lyon?")
    await chat.chain.settle()  # it only observes: its decisions come after each reply
    assert result.reply == "Sure."
    assert model.requests[-1].messages[-1].content == "How far is it from Lyon?"  # untouched
    decided = [e for e in events if isinstance(e, SupervisorDecided)]
    assert {e.action for e in decided} == {"allow"} and len(decided) == 4
    assert all(e.background for e in decided)
    first_request, _, second_request, _ = decided
    assert first_request.reasons == (
        "patterns so far: question 1",
        "suggested rule: Answer questions directly and say how sure the answer is",
        "suggested reference: the facts users keep asking about",
    )
    assert second_request.reasons == ("patterns so far: question 2",)  # suggested once
    analysis = watcher.analyses[chat.id]
    assert analysis.patterns == {"question": 2}
    assert analysis.suggested_references == ["the facts users keep asking about"]


async def test_tool_use_in_a_reply_is_a_pattern_too() -> None:
    watcher = architect()
    chat, _ = session(EchoModel(), [watcher])
    reply = ChatMessage(role="assistant", tool_calls=(ToolCall(id="1", name="time.now"),))
    result = await watcher.review(chat, "response", reply)
    assert result.action == "allow"
    assert result.reasons[1] == (
        "suggested rule: Prefer a tool's result to a guess when a tool can answer"
    )
    request = ChatMessage(role="user", content="Please drop table users")
    assert (await watcher.review(chat, "request", request)).action == "allow"
    assert watcher.analyses[chat.id].patterns == {"tool use": 1, "task request": 1}
