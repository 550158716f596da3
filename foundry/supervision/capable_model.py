"""Agent supervisors that wait for a capable model, and giving them one.

An `agent` supervisor entry with `needsCapableModel: true` is off while the model of the agent it
names is a small one: the embedded model, which runs every feature but judges poorly (SmolLM2's
reviews read "one sentence"), and whose reviews would take the one CPU-bound model from the
user's chat. Once its agent's `settings.model` names Ollama, an OpenAI-compatible server or any
other provider, it runs. `give_capable_model` writes such a model to those agents, the one-step
offer of the app.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from foundry.agent.document import AgentDocument, read_agent, save_agent
from foundry.agent.models import AgentSupervisorEntry
from foundry.llm.base import ProviderError
from foundry.llm.registry import ModelChoice

SMALL_PROVIDERS = frozenset({"embedded"})


def is_small(choice: ModelChoice) -> bool:
    """Whether the model is too small to supervise: the in-process embedded one."""
    return choice.provider in SMALL_PROVIDERS


@dataclass(frozen=True)
class WaitingSupervisor:
    """An agent supervisor that is off until its agent has a capable model."""

    entry_id: str
    name: str
    agent_path: str  # as the entry names it, relative to the supervised agent
    path: Path  # the supervisor agent's folder or file
    model: str  # the small model it would run on

    @property
    def reason(self) -> str:
        return off_on_small_model(self.name, self.agent_path, self.model)


def off_on_small_model(name: str, agent_path: str, model: str) -> str:
    """What a session says of a supervisor left off on a small model, and what turns it on."""
    return (
        f"{name} is off: it needs a capable model, and its agent {agent_path} runs on {model}, "
        "the small embedded model. It runs once that agent's model is an Ollama or "
        "OpenAI-compatible one: the app offers one it finds, or `foundry models use AGENT`"
    )


def waiting_supervisors(document: AgentDocument) -> list[WaitingSupervisor]:
    """The agent's enabled supervisors that are off for want of a capable model, in order; a
    supervisor agent that cannot be read is left to validation, which names it."""
    agent = document.agent
    if agent is None:
        return []
    waiting = []
    for entry in agent.supervisors:
        if isinstance(entry, AgentSupervisorEntry) and entry.enabled:
            found = _waiting(entry, document.base_dir)
            if found is not None:
                waiting.append(found)
    return waiting


def _waiting(entry: AgentSupervisorEntry, base_dir: Path) -> WaitingSupervisor | None:
    if not entry.config.needs_capable_model:
        return None
    path = (base_dir / entry.config.agent_path).resolve()
    supervisor = read_agent(path).agent
    if supervisor is None:
        return None
    try:
        choice = ModelChoice.parse(supervisor.settings.model_reference)
    except ProviderError:
        return None  # validation reports the reference
    if not is_small(choice):
        return None
    name = entry.name or entry.id
    return WaitingSupervisor(entry.id, name, entry.config.agent_path, path, str(choice))


def give_capable_model(
    document: AgentDocument, model: str, provider_settings: dict[str, Any] | None = None
) -> list[Path]:
    """Write `model` (`ollama:llama3.2`) as the model of every supervisor agent waiting for a
    capable one, with its provider's settings (none for Ollama on its default local port, so
    nothing new needs trusting); their next session runs them. Returns the agents written."""
    choice = ModelChoice.parse(model)
    if is_small(choice):
        raise ProviderError(f"{model} is the small embedded model, not a capable one")
    written: list[Path] = []
    for waiting in dict.fromkeys(w.path for w in waiting_supervisors(document)):
        written.append(_write_model(waiting, choice, provider_settings or {}))
    return written


def _write_model(path: Path, choice: ModelChoice, settings: dict[str, Any]) -> Path:
    document = read_agent(path)
    agent = document.agent
    if agent is None:
        raise ProviderError(f"the supervisor agent at {path} cannot be read, so it was not changed")
    agent = agent.model_copy(deep=True)
    agent.settings.model = str(choice)
    if choice.provider not in agent.providers or settings:
        agent.providers = {**agent.providers, choice.provider: dict(settings)}
    return save_agent(replace(document, agent=agent)).path
