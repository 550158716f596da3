"""The message supervisors of an agent, built from its `supervisors` list when a session starts."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from foundry.agent.models import (
    Agent,
    AgentSupervisorEntry,
    ArchitectSupervisorEntry,
    CollectionSupervisorEntry,
    GuardianSupervisorEntry,
)
from foundry.llm.base import ChatMessage
from foundry.session.supervisors import Direction, MessageSupervisor, Reach, SupervisionResult
from foundry.supervision.architect import ArchitectSupervisor
from foundry.supervision.capable_model import is_small, off_on_small_model
from foundry.supervision.collection import CollectionSupervisor
from foundry.supervision.guardian import GuardianSupervisor
from foundry.supervision.supervised_tools import budget_of, reach_of

if TYPE_CHECKING:
    from foundry.session.chat import ChatSession


class SupervisorHeld(Exception):
    """A supervisor agent whose model provider the person has not trusted yet."""

    def __init__(self, agent_path: str) -> None:
        super().__init__(
            f"held: the supervisor agent {agent_path}'s model provider is not trusted yet "
            "(Trust and start, or `foundry trust`; it starts with the next chat)"
        )


class UnavailableSupervisor:
    """Stands in for a supervisor that could not start: every review fails, so the chain applies
    its fallback and reports why, rather than silently leaving it out."""

    def __init__(self, entry: AgentSupervisorEntry, error: Exception) -> None:
        self.id = entry.id
        self.name = entry.name or entry.id
        self.fallback_behavior: Literal["allow", "block"] = entry.config.fallback_behavior
        self.directions: frozenset[Direction] = frozenset(entry.config.apply_to)
        self.reach: Reach = reach_of(entry.config)
        self.budget_s = budget_of(entry.config)
        self._error = error

    async def review(
        self, session: ChatSession, direction: Direction, message: ChatMessage
    ) -> SupervisionResult:
        raise RuntimeError(f"it could not start: {self._error}")

    async def aclose(self) -> None:
        return None


class DormantSupervisor:
    """A supervisor left off because its agent's model is too small (`needsCapableModel`): it
    reviews nothing; the chain says once, on a session's first request, why and what turns it on."""

    def __init__(self, entry: AgentSupervisorEntry, reason: str) -> None:
        self.id = entry.id
        self.name = entry.name or entry.id
        self.fallback_behavior: Literal["allow", "block"] = entry.config.fallback_behavior
        self.directions: frozenset[Direction] = frozenset()
        self.reach: Reach = "observe"
        self.budget_s = 0.0
        self.dormant_reason = reason

    async def review(
        self, session: ChatSession, direction: Direction, message: ChatMessage
    ) -> SupervisionResult:
        return SupervisionResult(action="allow", reasons=(self.dormant_reason,))

    async def aclose(self) -> None:
        return None


async def message_supervisors(
    agent: Agent, base_dir: Path, held: Collection[str] = ()
) -> list[MessageSupervisor]:
    """A fresh supervisor per enabled entry, in order; policy entries govern tool calls instead.
    An agent supervisor whose `agentPath` is `held` (a provider of its not trusted yet) is not
    started: it stands unavailable, its fallback applied and said on every message."""
    supervisors: list[MessageSupervisor] = []
    for entry in agent.supervisors:
        if not entry.enabled:
            continue
        if isinstance(entry, GuardianSupervisorEntry):
            supervisors.append(GuardianSupervisor(entry))
        elif isinstance(entry, CollectionSupervisorEntry):
            supervisors.append(CollectionSupervisor(entry, base_dir))
        elif isinstance(entry, ArchitectSupervisorEntry):
            supervisors.append(ArchitectSupervisor(entry))
        elif isinstance(entry, AgentSupervisorEntry) and entry.config.agent_path in held:
            supervisors.append(
                UnavailableSupervisor(entry, SupervisorHeld(entry.config.agent_path))
            )
        elif isinstance(entry, AgentSupervisorEntry):
            supervisors.append(await _agent_supervisor(entry, base_dir))
    return supervisors


async def _agent_supervisor(entry: AgentSupervisorEntry, base_dir: Path) -> MessageSupervisor:
    from foundry.supervision.agent_supervisor import AgentSupervisor

    supervisor = AgentSupervisor(entry, base_dir)
    try:
        await supervisor.start()
    except Exception as error:  # reported through the chain's fallback on every message
        return UnavailableSupervisor(entry, error)
    model = supervisor.model
    if entry.config.needs_capable_model and model is not None and is_small(model):
        await supervisor.aclose()
        reason = off_on_small_model(supervisor.name, entry.config.agent_path, str(model))
        return DormantSupervisor(entry, reason)
    return supervisor
