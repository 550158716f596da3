"""A supervisor given up is reported with the limit that applied: its own (a model call's, say)
or the chain's, never the chain's when its own stopped it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from foundry.llm.base import ChatMessage
from foundry.session.events import SupervisorDecided, SupervisorDeferred
from foundry.session.supervisors import Direction, Reach, SupervisionResult

from .test_supervisor_reach import HUNG_S, chat

BOTH = frozenset(("request", "response"))


class OwnLimit:
    """A supervisor whose own time limit (as an agent supervisor's model call has) runs out
    long before the chain's."""

    def __init__(self, reach: Reach, budget_s: float) -> None:
        self.id = f"own-limit-{reach}"
        self.name = f"Own limit {reach}"
        self.reach = reach
        self.budget_s = budget_s
        self.fallback_behavior = "allow"
        self.directions = BOTH
        self.stuck = asyncio.Event()

    async def review(self, session: Any, direction: Direction, message: ChatMessage) -> Any:
        async with asyncio.timeout(0.01):
            await self.stuck.wait()
        return SupervisionResult(action="allow")

    async def aclose(self) -> None:
        return None


def decided(events: list[Any], supervisor: OwnLimit) -> list[SupervisorDecided]:
    return [
        e for e in events if isinstance(e, SupervisorDecided) and e.supervisor == supervisor.name
    ]


@pytest.mark.parametrize("reach", ["message", "observe"])
async def test_a_timeout_of_its_own_is_not_reported_as_the_chains_limit(
    tmp_path: Path, reach: Reach
) -> None:
    supervisor = OwnLimit(reach, budget_s=30.0)
    session, events = chat(tmp_path, [supervisor])
    await asyncio.wait_for(session.send("Write to the board."), HUNG_S)
    await asyncio.wait_for(session.chain.settle(), HUNG_S)
    decisions = decided(events, supervisor)
    assert decisions and all(d.fallback for d in decisions)
    for decision in decisions:
        reason = decision.reasons[0]
        assert "timed out after 0.0 s (a time limit of its own); fallback: allow" in reason
        assert "did not finish within" not in reason


async def test_a_curator_that_times_out_by_itself_falls_back_instead_of_being_deferred(
    tmp_path: Path,
) -> None:
    curator = OwnLimit("context", budget_s=30.0)
    session, events = chat(tmp_path, [curator])
    await asyncio.wait_for(session.send("Write to the board."), HUNG_S)
    assert not any(isinstance(e, SupervisorDeferred) for e in events)
    request = next(d for d in decided(events, curator) if d.direction == "request")
    assert request.fallback and "a time limit of its own" in request.reasons[0]


class SaysItsLimit(OwnLimit):
    """As an agent supervisor does: its own timeout says which limit ran out."""

    async def review(self, session: Any, direction: Direction, message: ChatMessage) -> Any:
        raise TimeoutError("its model call did not finish within 60 s")


async def test_a_timeout_that_names_its_limit_is_reported_with_it(tmp_path: Path) -> None:
    supervisor = SaysItsLimit("observe", budget_s=0.0)
    session, events = chat(tmp_path, [supervisor])
    await asyncio.wait_for(session.send("Write to the board."), HUNG_S)
    await asyncio.wait_for(session.chain.settle(), HUNG_S)
    reasons = {d.reasons[0] for d in decided(events, supervisor)}
    assert reasons == {
        "Own limit observe timed out: its model call did not finish within 60 s; fallback: allow"
    }
