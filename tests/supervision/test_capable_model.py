"""Agent supervisors that need a capable model are off on the embedded one, said once, and come
in when their agent is given a capable model."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from foundry.agent.document import load_agent
from foundry.agent.models import AgentSupervisorEntry
from foundry.llm.base import ProviderError
from foundry.session.chain import SupervisionChain
from foundry.session.events import SupervisorDeferred, SupervisorOff, SupervisorStarted
from foundry.session.supervisors import MessageSupervisor
from foundry.supervision.agent_supervisor import AgentSupervisor
from foundry.supervision.capable_model import give_capable_model, waiting_supervisors
from foundry.supervision.factory import DormantSupervisor, message_supervisors

from ..session.test_supervisor_reach import HUNG_S, chat


async def supervisors_of(agent_dir: Path) -> dict[str, MessageSupervisor]:
    document = load_agent(agent_dir)
    assert document.agent is not None
    started = await message_supervisors(document.agent, document.base_dir)
    return {supervisor.id: supervisor for supervisor in started}


async def closed(supervisors: dict[str, MessageSupervisor]) -> None:
    await asyncio.gather(*(supervisor.aclose() for supervisor in supervisors.values()))


async def test_the_samples_agent_supervisors_are_off_on_the_embedded_model(
    sample_agents: Path,
) -> None:
    supervisors = await supervisors_of(sample_agents / "assistant")
    await closed(supervisors)
    architect, curator = supervisors["architect"], supervisors["context-curator"]
    assert isinstance(architect, DormantSupervisor) and isinstance(curator, DormantSupervisor)
    assert architect.directions == frozenset() and curator.directions == frozenset()
    assert "needs a capable model" in architect.dormant_reason
    assert "../architect runs on embedded:smollm2" in architect.dormant_reason
    assert not isinstance(supervisors["guardian"], DormantSupervisor)  # it works on any model


def test_the_waiting_supervisors_are_named_with_their_agents(sample_agents: Path) -> None:
    waiting = waiting_supervisors(load_agent(sample_agents / "assistant"))
    assert [(w.entry_id, w.agent_path, w.model) for w in waiting] == [
        ("architect", "../architect", "embedded:smollm2"),
        ("context-curator", "../context-curator", "embedded:smollm2"),
    ]
    assert waiting[0].path == (sample_agents / "architect").resolve()


async def test_given_a_capable_model_they_run(sample_agents: Path) -> None:
    assistant = sample_agents / "assistant"
    before = (assistant / "tsagent.json").read_text()
    written = give_capable_model(load_agent(assistant), "ollama:llama3.2")
    assert sorted(p.name for p in written) == ["architect", "context-curator"]
    assert (assistant / "tsagent.json").read_text() == before  # the agent itself is unchanged
    architect = json.loads((sample_agents / "architect" / "tsagent.json").read_text())
    assert architect["settings"]["model"] == "ollama:llama3.2"
    assert architect["providers"] == {"ollama": {}}  # the default local port: nothing to trust
    assert list(architect) == ["metadata", "settings", "providers", "mcpServers", "supervisors"]
    assert waiting_supervisors(load_agent(assistant)) == []
    supervisors = await supervisors_of(assistant)
    await closed(supervisors)
    assert isinstance(supervisors["architect"], AgentSupervisor)
    assert isinstance(supervisors["context-curator"], AgentSupervisor)


def test_a_host_given_is_written_with_the_provider(sample_agents: Path) -> None:
    host = {"OLLAMA_HOST": "http://127.0.0.1:11500"}
    give_capable_model(load_agent(sample_agents / "assistant"), "ollama:qwen3:4b", host)
    curator = json.loads((sample_agents / "context-curator" / "tsagent.json").read_text())
    assert curator["providers"] == {"ollama": host}
    assert curator["settings"]["model"] == "ollama:qwen3:4b"


def test_the_embedded_model_is_not_offered_as_a_capable_one(sample_agents: Path) -> None:
    with pytest.raises(ProviderError, match="small embedded model"):
        give_capable_model(load_agent(sample_agents / "assistant"), "embedded:smollm2")


async def test_without_the_setting_an_agent_supervisor_runs_on_the_embedded_model(
    sample_agents: Path,
) -> None:
    path = sample_agents / "assistant" / "tsagent.json"
    data = json.loads(path.read_text())
    for entry in data["supervisors"]:
        entry.get("config", {}).pop("needsCapableModel", None)
    path.write_text(json.dumps(data, indent=2))
    supervisors = await supervisors_of(sample_agents / "assistant")
    await closed(supervisors)
    assert isinstance(supervisors["architect"], AgentSupervisor)


async def test_a_session_says_once_which_supervisors_are_off_and_why(tmp_path: Path) -> None:
    entry = AgentSupervisorEntry.model_validate(
        {"type": "agent", "id": "architect", "name": "Architect", "config": {"agentPath": "../a"}}
    )
    dormant = DormantSupervisor(entry, "Architect is off: it needs a capable model")
    session, events = chat(tmp_path, [dormant], "Dear board,", "Dear shareholders,")
    chain = session.chain
    assert isinstance(chain, SupervisionChain)
    await asyncio.wait_for(session.send("Write to the board."), HUNG_S)
    await asyncio.wait_for(session.send("Now to the shareholders."), HUNG_S)
    said = [e for e in events if isinstance(e, SupervisorOff)]
    assert [(e.supervisor, e.reason) for e in said] == [
        ("Architect", "Architect is off: it needs a capable model")
    ]
    assert not any(isinstance(e, SupervisorDeferred) for e in events)  # off is not deferred
    assert not any(isinstance(e, SupervisorStarted) for e in events)
    assert chain.reviewing_later == 0  # nothing runs after the replies
