"""tsagent's own loader (@tsagent/core, run by node) reads the agents Foundry writes, and an
agent tsagent saved afterwards still has its Foundry settings (policy, disabled items)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from foundry.agent import load_agent, read_agent
from foundry.agent.relocate import convert_agent
from foundry.agent.templates import create_agent, new_agent
from tests.tsagent_loader import TSAGENT, needs_tsagent

LOADER = TSAGENT / "load.mjs"
SAMPLES = Path(__file__).resolve().parents[2] / "agents"

pytestmark = needs_tsagent


def tsagent_load(path: Path, save: bool = False) -> dict[str, Any]:
    """What tsagent's loadAgent reads at `path` (after its save, with `save`)."""
    command = ["node", str(LOADER), str(path), *(["--save"] if save else [])]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, f"tsagent refuses {path}: {result.stderr}"
    return dict(json.loads(result.stdout))


def supervisor_types(path: Path) -> list[str]:
    agent = load_agent(path).agent
    assert agent is not None
    return [entry.type for entry in agent.supervisors]


@pytest.mark.parametrize("name", ["assistant", "architect", "context-curator"])
def test_tsagent_loads_each_sample_agent(sample_agents: Path, name: str) -> None:
    loaded = tsagent_load(sample_agents / name)
    assert loaded["metadata"]["name"] == load_agent(sample_agents / name).data["metadata"]["name"]


def test_a_sample_saved_by_foundry_loads_in_tsagent_with_its_policy_beside_it(
    sample_agents: Path,
) -> None:
    before = supervisor_types(sample_agents / "assistant")
    from foundry.agent import save_agent

    save_agent(load_agent(sample_agents / "assistant"))
    loaded = tsagent_load(sample_agents / "assistant")
    assert [entry["type"] for entry in loaded["supervisors"]] == [
        kind for kind in before if kind != "policy"
    ]
    assert supervisor_types(sample_agents / "assistant") == before  # tsagent migrated the folder


@pytest.mark.parametrize("name", ["worker", "worker.yaml"])
def test_a_created_agent_loads_in_tsagent_and_keeps_its_policy_after_tsagent_saves(
    tmp_path: Path, name: str
) -> None:
    path = tmp_path / name
    create_agent(path, new_agent("Worker", "does the work"))
    tsagent_load(path, save=True)
    assert supervisor_types(path) == ["policy"]
    document = read_agent(path)
    assert document.agent is not None
    assert document.agent.supervisors[0].config.rules  # the default policy, whole


@pytest.mark.parametrize("target", ["assistant.yaml", "assistant-folder"])
def test_a_converted_sample_loads_in_tsagent(sample_agents: Path, target: str) -> None:
    source = sample_agents / ("assistant" if target.endswith(".yaml") else "assistant.yaml")
    if not source.exists():
        convert_agent(load_agent(sample_agents / "assistant"), source)
    converted = convert_agent(load_agent(source), sample_agents / target)
    loaded = tsagent_load(converted.path)
    assert loaded["metadata"]["name"] == "Supervised Assistant"
    assert "policy" in supervisor_types(converted.path)


def test_disabled_items_and_supervisors_stay_disabled_after_tsagent_saves(tmp_path: Path) -> None:
    path = tmp_path / "agent.yaml"
    path.write_text(DISABLED_YAML)
    from foundry.agent import save_agent

    save_agent(load_agent(path))
    tsagent_load(path, save=True)
    assert "enabled" not in path.read_text()  # tsagent's save dropped them
    agent = load_agent(path).agent
    assert agent is not None
    assert [rule.enabled for rule in agent.rules] == [True, False]
    assert [entry.enabled for entry in agent.supervisors] == [False]
    assert agent.mcp_servers["files"].confinement is not None  # type: ignore[union-attr]


def test_round_trip_tsagent_foundry_tsagent_keeps_every_field(tmp_path: Path) -> None:
    path = tmp_path / "ledger.yaml"
    path.write_text(TSAGENT_SAVED)
    before = tsagent_load(path)
    from foundry.agent import save_agent

    agent = load_agent(path)
    save_agent(agent, tmp_path / "ledger")
    save_agent(load_agent(tmp_path / "ledger"), tmp_path / "back.yaml")
    assert tsagent_load(tmp_path / "back.yaml") == before
    migrated = tsagent_load(tmp_path / "ledger")  # tsagent's own migration of a folder sorts
    for key in ("metadata", "settings", "systemPrompt", "providers", "mcpServers", "supervisors"):
        assert migrated[key] == before[key]  # items by priority and drops their embeddings


DISABLED_YAML = """\
metadata:
  name: Switches
  created: 2025-04-07T17:32:29.081Z
  lastAccessed: 2025-04-07T17:32:29.081Z
settings:
  model: ollama:qwen2.5:7b
rules:
  - name: on
    description: on
    priorityLevel: 100
    text: Be brief.
    include: always
  - name: off
    description: off
    priorityLevel: 200
    text: Be long.
    include: always
    enabled: false
mcpServers:
  files:
    type: stdio
    command: npx
    args: [server]
    confinement:
      write: [out]
supervisors:
  - type: guardian
    id: guard
    name: Guard
    enabled: false
    config:
      blockKeywords: [password]
"""

TSAGENT_SAVED = """\
metadata:
  name: Ledger Agent
  version: 1.0.2
  description: Answers questions about the ledger
  created: 2025-04-07T17:32:29.081Z
  lastAccessed: 2025-04-07T17:32:29.081Z
settings:
  maxChatTurns: 20
  temperature: 0
  topP: 0.05
  theme: light
  model: ollama:qwen2.5:7b
  toolPermission: tool
systemPrompt: You answer from the ledger only.
rules:
  - name: zeta
    description: ""
    priorityLevel: 100
    text: Name the period of every figure.
    include: always
  - name: alpha
    description: Second by priority
    priorityLevel: 500
    text: |-
      Credit: money in
      Debit: money out
    include: agent
    embeddings: # Delete embeddings when editing item, they will be automatically regenerated
      - [ -0.00007266993634402752, 1.5e-8, 0.11594855040311813 ]
references:
  - name: terms
    description: Terms
    priorityLevel: 900
    text: Period is a calendar month
    include: manual
  - name: accounts
    description: Accounts
    priorityLevel: 100
    text: Cash, Bank
    include: manual
providers:
  ollama: {}
mcpServers:
  time:
    type: stdio
    command: uvx
    args:
      - mcp-server-time
    env: {}
supervisors:
  - type: guardian
    id: guard
    name: Guard
    config:
      blockKeywords:
        - password
"""
