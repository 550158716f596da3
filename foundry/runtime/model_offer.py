"""The one-step offer of a capable model for an agent's supervisors that wait for one.

When an agent has supervisors that are off on the embedded model (`needsCapableModel`) and a
model server is found (Ollama running with a model, or an OpenAI-compatible server the agent
names and the user trusts), the offer says so; accepting it writes that model to the waiting
supervisor agents (`give_capable_model`), which run from the agent's next chat.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from foundry.agent.document import read_agent
from foundry.agent.trust import TrustStore
from foundry.llm.discovery import FoundServer, ServerToAsk, find_model_servers, servers_to_ask
from foundry.supervision.capable_model import (
    WaitingSupervisor,
    give_capable_model,
    waiting_supervisors,
)


class ModelOffer(BaseModel):
    """A model server found for an agent whose supervisors wait for a capable model."""

    model_config = ConfigDict(frozen=True)

    agent_path: Path
    server: FoundServer
    waiting: tuple[str, ...]  # the waiting supervisors' names, in the agent's order

    @property
    def question(self) -> str:
        """The offer in words: "Ollama is running with llama3.2: use it for ...?"."""
        verb = "is running" if self.server.provider == "ollama" else "answers"
        off = "it is" if len(self.waiting) == 1 else "they are"
        return (
            f"{self.server.label} {verb} with {self.server.suggested}. Use it for this agent's "
            f"{_names(self.waiting)}? On the small embedded model {off} off."
        )


def _names(names: tuple[str, ...]) -> str:
    if len(names) == 1:
        return f"supervisor {names[0]}"
    return f"supervisors {', '.join(names[:-1])} and {names[-1]}"


async def find_model_offer(agent_path: Path, trust: TrustStore) -> ModelOffer | None:
    """The offer for the agent, or None: no supervisor waits, or no server answered. Files are
    read off the loop; the servers asked are Ollama's place and the agent's trusted providers."""
    found = await asyncio.to_thread(_waiting_and_servers, agent_path, trust)
    if found is None:
        return None
    waiting, asked, base_dir = found
    servers = await find_model_servers(asked, base_dir)
    if not servers:
        return None
    names = tuple(dict.fromkeys(w.name for w in waiting))
    return ModelOffer(agent_path=agent_path, server=servers[0], waiting=names)


def _waiting_and_servers(
    agent_path: Path, trust: TrustStore
) -> tuple[list[WaitingSupervisor], list[ServerToAsk], Path] | None:
    document = read_agent(agent_path)
    if document.agent is None:
        return None
    waiting = waiting_supervisors(document)
    if not waiting:
        return None
    untrusted = set(trust.check(document).untrusted_providers)
    providers = {k: v for k, v in document.agent.providers.items() if k not in untrusted}
    return waiting, servers_to_ask(providers), document.base_dir


async def accept_model_offer(offer: ModelOffer, model: str | None = None) -> list[Path]:
    """Write the offered model (or `model`, another of the server's) to the waiting supervisor
    agents, off the loop; the agents written. Raises AgentError or ProviderError, said as is."""
    chosen = model or offer.server.suggested
    assert chosen is not None  # a server is offered only with a model that can chat
    reference = offer.server.reference(chosen)

    def write() -> list[Path]:
        return give_capable_model(read_agent(offer.agent_path), reference, offer.server.settings)

    return await asyncio.to_thread(write)
