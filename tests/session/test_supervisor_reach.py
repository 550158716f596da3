"""Only supervisors that can change a message hold it: observers and context supervisors review
after the reply, a request waits for a context supervisor only within its budget, and what
cannot change the message cannot block it after the fact."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from foundry.agent.document import load_agent
from foundry.agent.models import Agent, AgentSupervisorConfig
from foundry.llm.base import ChatMessage
from foundry.llm.registry import ModelChoice
from foundry.llm.scripted import ScriptedProvider
from foundry.session.chain import ReviewTimes, SupervisionChain
from foundry.session.chat import ChatSession
from foundry.session.events import (
    ContextSelected,
    EventBody,
    MessageAdded,
    SupervisorDecided,
    SupervisorDeferred,
    SupervisorStarted,
    TurnFinished,
)
from foundry.session.gate import PermissionGate
from foundry.session.supervisors import Direction, Reach, SupervisionResult
from foundry.supervision.factory import message_supervisors
from foundry.supervision.supervised_tools import budget_of, reach_of

BOTH = frozenset(("request", "response"))
HUNG_S = 60.0  # a turn that waits for a gated supervisor would never end: fail instead of hang


class Gated:
    """A supervisor that decides only when the test opens its gate; it may include a rule
    (through the session, as a supervised_* tool would) before deciding."""

    def __init__(
        self,
        reach: Reach,
        action: str = "allow",
        budget_s: float = 0.05,
        fallback: str = "allow",
        include: str | None = None,
        directions: frozenset[str] = BOTH,
    ) -> None:
        self.id = f"gated-{reach}"
        self.name = f"Gated {reach}"
        self.reach = reach
        self.budget_s = budget_s
        self.fallback_behavior = fallback
        self.directions = directions
        self.gate = asyncio.Event()
        self.reviewed: list[tuple[str, int]] = []
        self._action = action
        self._include = include

    async def review(self, session: Any, direction: Direction, message: ChatMessage) -> Any:
        await self.gate.wait()
        self.reviewed.append((direction, len(session.messages)))
        if self._include:
            await session.set_included("rule", self._include, True, by=f"supervisor:{self.id}")
        content = "rewritten" if self._action == "modify" else None
        return SupervisionResult(action=self._action, content=content, reasons=("looked",))

    async def aclose(self) -> None:
        return None


def scripted(tmp_path: Path, *replies: str) -> ScriptedProvider:
    turns = tmp_path / "turns.json"
    turns.write_text(json.dumps({"turns": [{"text": reply} for reply in replies]}))
    return ScriptedProvider(turns)


def chat(
    tmp_path: Path, supervisors: list[Any], *replies: str, times: ReviewTimes | None = None
) -> tuple[ChatSession, list[EventBody]]:
    events: list[EventBody] = []

    async def sink(body: EventBody) -> None:
        events.append(body)

    agent = Agent.model_validate(
        {
            "metadata": {"name": "writer"},
            "systemPrompt": "Write letters.",
            "rules": [{"name": "cite-sources", "text": "Cite sources.", "include": "manual"}],
        }
    )
    session = ChatSession(
        "s1",
        agent,
        ModelChoice("scripted", "turns.json"),
        scripted(tmp_path, *(replies or ("Dear board,",))),
        PermissionGate(agent.settings.tool_permission),
        sink,
        chain=SupervisionChain(supervisors, times=times),
    )
    return session, events


def position(events: list[EventBody], kind: type[EventBody], **fields: Any) -> int:
    return next(
        n
        for n, event in enumerate(events)
        if isinstance(event, kind) and all(getattr(event, k) == v for k, v in fields.items())
    )


def rules_selected(event: EventBody) -> set[str]:
    assert isinstance(event, ContextSelected)
    return {entry.name for entry in event.entries if entry.item == "rule"}


async def test_an_observer_never_holds_the_reply_and_decides_after_the_turn(
    tmp_path: Path,
) -> None:
    observer = Gated("observe")
    session, events = chat(tmp_path, [observer])
    result = await asyncio.wait_for(session.send("Write to the board."), HUNG_S)
    assert result.ended_by == "reply" and result.reply == "Dear board,"
    assert not any(isinstance(e, SupervisorDecided) for e in events)
    assert session.chain.reviewing_later == 2
    assert session.chain.later_reviewers == [observer.name]  # `foundry run` names who it waits for
    observer.gate.set()
    await session.chain.settle()
    assert session.chain.later_reviewers == []
    turn_end = position(events, TurnFinished)
    request = position(events, SupervisorDecided, direction="request")
    response = position(events, SupervisorDecided, direction="response")
    assert turn_end < request < response  # in message order, after the turn
    decided = [e for e in events if isinstance(e, SupervisorDecided)]
    assert all(d.background and d.duration_s is not None for d in decided)
    started = [e for e in events if isinstance(e, SupervisorStarted)]
    assert [(s.direction, s.holds) for s in started] == [("request", False), ("response", False)]


async def test_a_context_supervisor_never_holds_the_reply(tmp_path: Path) -> None:
    architect = Gated("context", directions=frozenset(("response",)), include="cite-sources")
    session, events = chat(tmp_path, [architect], "Dear board,", "Dear shareholders,")
    await asyncio.wait_for(session.send("Write to the board."), HUNG_S)
    assert position(events, TurnFinished) >= 0 and session.chain.reviewing_later == 1
    architect.gate.set()
    await session.chain.settle()
    await session.send("Now to the shareholders.")
    selections = [e for e in events if isinstance(e, ContextSelected)]
    assert [rules_selected(s) for s in selections] == [set(), {"cite-sources"}]  # next turn


async def test_a_slow_curator_leaves_the_lexical_selection_and_counts_from_the_next_turn(
    tmp_path: Path,
) -> None:
    curator = Gated("context", directions=frozenset(("request",)), include="cite-sources")
    session, events = chat(tmp_path, [curator], "Dear board,", "Dear shareholders,")
    await asyncio.wait_for(session.send("Write to the board."), HUNG_S)
    deferred = position(events, SupervisorDeferred)
    assert deferred < position(events, ContextSelected) < position(events, TurnFinished)
    body = events[deferred]
    assert isinstance(body, SupervisorDeferred)
    assert "still working after its 0.05 s budget" in body.reason
    assert "keeps the lexical selection" in body.reason and "from the next turn" in body.reason
    assert curator.reviewed == []  # stopped at its budget; it reviews again after the reply
    curator.gate.set()
    await session.chain.settle()
    assert curator.reviewed == [("request", 2)]
    await asyncio.wait_for(session.send("Now to the shareholders."), HUNG_S)
    selections = [e for e in events if isinstance(e, ContextSelected)]
    assert [rules_selected(s) for s in selections] == [set(), {"cite-sources"}]


async def test_a_curator_that_was_too_slow_is_not_waited_for_again(tmp_path: Path) -> None:
    times = ReviewTimes()
    curator = Gated("context", directions=frozenset(("request",)))
    times.note(curator, 3.0)  # its last review, in this engine, took 3 s
    session, events = chat(tmp_path, [curator], times=times)
    await asyncio.wait_for(session.send("Write to the board."), HUNG_S)
    [body] = [e for e in events if isinstance(e, SupervisorDeferred)]
    assert "its last review took 3.0 s, over its 0.05 s budget" in body.reason
    assert not any(
        isinstance(e, SupervisorStarted) for e in events[: position(events, TurnFinished)]
    )
    curator.gate.set()
    await session.chain.settle()
    assert times.fits(curator)  # fast this time, so the next request waits for it again


async def test_a_curator_with_no_budget_is_never_started_before_the_request(
    tmp_path: Path,
) -> None:
    curator = Gated("context", budget_s=0.0, directions=frozenset(("request",)))
    curator.gate.set()
    session, events = chat(tmp_path, [curator])
    await asyncio.wait_for(session.send("Write to the board."), HUNG_S)
    turn_end = position(events, TurnFinished)
    [body] = [e for e in events if isinstance(e, SupervisorDeferred)]
    assert "its budget before a request is 0 s" in body.reason
    assert not any(isinstance(e, SupervisorStarted) for e in events[:turn_end])
    await session.chain.settle()
    assert curator.reviewed == [("request", 2)]  # after the reply


def test_a_context_supervisor_on_the_embedded_model_is_not_waited_for_by_default() -> None:
    curator = {"agentPath": "x", "allowedActions": ["MODIFY_CONTEXT"]}
    config = AgentSupervisorConfig.model_validate(curator)
    assert (budget_of(config), budget_of(config, in_process=True)) == (0.5, 0.0)
    chosen = AgentSupervisorConfig.model_validate({**curator, "timeoutSeconds": 2})
    assert budget_of(chosen, in_process=True) == 2.0  # its own budget, as given
    checker = {"agentPath": "x", "allowedActions": ["MODIFY_MESSAGES"]}
    assert budget_of(AgentSupervisorConfig.model_validate(checker), in_process=True) == 30.0


async def test_a_curator_within_its_budget_curates_this_very_request(tmp_path: Path) -> None:
    curator = Gated("context", budget_s=30.0, include="cite-sources")
    curator.gate.set()
    session, events = chat(tmp_path, [curator])
    await session.send("Write to the board.")
    assert rules_selected(next(e for e in events if isinstance(e, ContextSelected))) == {
        "cite-sources"
    }
    assert not position(events, SupervisorDecided, direction="request") > position(
        events, ContextSelected
    )


@pytest.mark.parametrize(("fallback", "ended_by"), [("block", "blocked"), ("allow", "reply")])
async def test_a_supervisor_that_can_change_messages_holds_the_reply_within_its_budget(
    tmp_path: Path, fallback: str, ended_by: str
) -> None:
    holder = Gated("message", fallback=fallback, directions=frozenset(("response",)))
    session, events = chat(tmp_path, [holder])
    result = await asyncio.wait_for(session.send("Write to the board."), HUNG_S)
    assert result.ended_by == ended_by
    decided = position(events, SupervisorDecided)
    assert decided < position(events, MessageAdded, message=session.messages[-1])
    body = events[decided]
    assert isinstance(body, SupervisorDecided) and body.fallback and not body.background
    assert f"did not finish within 0.05 s; fallback: {fallback}" in body.reasons[0]


@pytest.mark.parametrize("action", ["block", "modify", "human_review"])
async def test_what_cannot_change_the_message_cannot_block_or_rewrite_it_afterwards(
    tmp_path: Path, action: str
) -> None:
    observer = Gated("observe", action=action, directions=frozenset(("response",)))
    observer.gate.set()
    session, events = chat(tmp_path, [observer])
    result = await session.send("Write to the board.")
    await session.chain.settle()
    assert result.ended_by == "reply" and session.messages[-1].content == "Dear board,"
    [decided] = [e for e in events if isinstance(e, SupervisorDecided)]
    assert decided.action == "allow" and decided.background
    assert "cannot change messages" in decided.reasons[-1]


async def test_closing_stops_the_reviews_after_the_reply_and_says_so(tmp_path: Path) -> None:
    observer = Gated("observe", directions=frozenset(("response",)))
    session, events = chat(tmp_path, [observer])
    await asyncio.wait_for(session.send("Write to the board."), HUNG_S)
    await session.chain.settle(timeout_s=0)
    [decided] = [e for e in events if isinstance(e, SupervisorDecided)]
    assert decided.fallback and "stopped before it finished" in decided.reasons[0]
    assert session.chain.reviewing_later == 0


@pytest.mark.parametrize(
    ("actions", "fallback", "reach"),
    [
        (["READ_ONLY"], "allow", "observe"),
        (["READ_ONLY", "MODIFY_CONTEXT"], "allow", "context"),
        (["READ_ONLY", "MODIFY_MESSAGES"], "allow", "message"),
        (["FULL_CONTROL"], "allow", "message"),
        (["READ_ONLY"], "block", "message"),  # its failure blocks the message: it holds it
    ],
)
def test_what_an_agent_supervisor_can_do_decides_whether_the_message_waits(
    actions: list[str], fallback: str, reach: Reach
) -> None:
    config = AgentSupervisorConfig.model_validate(
        {"agentPath": "x", "allowedActions": actions, "fallbackBehavior": fallback}
    )
    assert reach_of(config) == reach


async def test_of_the_sample_assistant_only_the_guardian_holds_its_messages(
    sample_agents: Path,
) -> None:
    document = load_agent(sample_agents / "assistant")
    assert document.agent is not None
    supervisors = await message_supervisors(document.agent, document.base_dir)
    try:
        reach = {s.id: (s.reach, s.budget_s) for s in supervisors}
        assert reach == {
            "guardian": ("message", 10.0),
            "architect": ("observe", 0.0),  # off: it needs a capable model, not the embedded one
            "context-curator": ("observe", 0.0),
            "stats": ("observe", 0.0),
        }
    finally:
        for supervisor in supervisors:
            await supervisor.aclose()


async def test_a_curator_that_did_not_finish_in_time_is_said_so_next_time(
    tmp_path: Path,
) -> None:
    times = ReviewTimes()
    curator = Gated("context", directions=frozenset(("request",)))
    first, _ = chat(tmp_path, [curator], times=times)
    await asyncio.wait_for(first.send("Write to the board."), HUNG_S)  # stopped at its budget
    await first.chain.settle(timeout_s=0)  # its review after the reply never finishes either
    second, events = chat(tmp_path, [curator], times=times)
    await asyncio.wait_for(second.send("Write to the board."), HUNG_S)
    [body] = [e for e in events if isinstance(e, SupervisorDeferred)]
    assert "its last review did not finish within its 0.05 s budget" in body.reason
    await second.chain.settle(timeout_s=0)
