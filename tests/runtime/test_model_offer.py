"""The model offer asks only servers a person configured and trusted, or Ollama's own place."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from foundry.agent.trust import TrustStore
from foundry.runtime.model_offer import find_model_offer

from ..llm.test_discovery import JsonServer
from .conftest import trust, write_agent

REPLY = {"turns": [{"text": "It is 09:12 in Paris (Europe/Paris, UTC+01:00)."}]}
LISTING = {"object": "list", "data": [{"id": "qwen2.5-7b-instruct", "object": "model"}]}


def agent_with_waiting_architect(root: Path) -> Path:
    """An agent whose architect needs a capable model and whose agent runs on the embedded one."""
    architect = root / "architect"
    architect.mkdir(parents=True)
    config = {"metadata": {"name": "Architect"}, "settings": {"maxOutputTokens": 96}}
    (architect / "tsagent.json").write_text(json.dumps(config, indent=2) + "\n")
    (architect / "prompt.md").write_text("You improve another agent's rules.")
    entry = {
        "type": "agent",
        "id": "architect",
        "name": "Conversation architect",
        "config": {
            "agentPath": "../architect",
            "needsCapableModel": True,
            "allowedActions": ["READ_ONLY", "MODIFY_CONTEXT"],
            "applyTo": ["response"],
        },
    }
    return write_agent(root / "assistant", REPLY, servers={}, supervisors=[entry])


def with_studio(agent: Path, url: str) -> None:
    config = json.loads((agent / "tsagent.json").read_text())
    config["providers"] = {"studio": {"BASE_URL": f"{url}/v1"}}
    (agent / "tsagent.json").write_text(json.dumps(config))


@pytest.fixture
def no_ollama(monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    with socket.socket() as probe:  # a loopback port nothing listens on
        probe.bind(("127.0.0.1", 0))
        monkeypatch.setenv("OLLAMA_HOST", f"http://127.0.0.1:{probe.getsockname()[1]}")


async def test_an_untrusted_providers_server_is_never_asked(
    tmp_path: Path, no_ollama: None
) -> None:
    agent = agent_with_waiting_architect(tmp_path)
    async with JsonServer({"/v1/models": LISTING}) as studio:
        with_studio(agent, studio.url)  # changed after it was trusted: not trusted any more
        assert await find_model_offer(agent, TrustStore.default()) is None
        assert studio.asked == []


async def test_a_trusted_providers_server_is_offered(tmp_path: Path, no_ollama: None) -> None:
    agent = agent_with_waiting_architect(tmp_path)
    async with JsonServer({"/v1/models": LISTING}) as studio:
        with_studio(agent, studio.url)
        trust(agent)
        offer = await find_model_offer(agent, TrustStore.default())
    assert offer is not None and offer.server.suggested == "qwen2.5-7b-instruct"
    assert offer.waiting == ("Conversation architect",)
    assert offer.question.startswith(f"studio at {studio.url}/v1 answers with qwen2.5-7b")


async def test_no_offer_when_no_supervisor_waits(tmp_path: Path, no_ollama: None) -> None:
    agent = agent_with_waiting_architect(tmp_path)
    architect = tmp_path / "architect" / "tsagent.json"
    config = json.loads(architect.read_text())
    config["settings"]["model"] = "ollama:llama3.2"
    architect.write_text(json.dumps(config))
    assert await find_model_offer(agent, TrustStore.default()) is None
