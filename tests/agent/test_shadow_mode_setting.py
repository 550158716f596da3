"""The policy's shadowMode: off unless written, kept in Foundry's sidecar beside a tsagent agent."""

from __future__ import annotations

import json
from pathlib import Path

from foundry.agent.document import load_agent, save_agent
from foundry.agent.models import PolicyConfig
from foundry.agent.templates import create_agent, new_agent
from foundry.supervision.hierarchy import policy_entry_config


def test_shadow_mode_is_off_unless_the_policy_says_so() -> None:
    assert PolicyConfig().shadow_mode is False
    assert PolicyConfig.model_validate({"shadowMode": "true"}).shadow_mode is True


def test_shadow_mode_round_trips_through_the_sidecar_not_tsagents_file(tmp_path: Path) -> None:
    document = create_agent(tmp_path / "worker", new_agent("worker"))
    assert document.agent is not None
    policy = policy_entry_config(document.agent.supervisors)
    assert policy is not None
    policy.shadow_mode = True
    save_agent(document)

    sidecar = json.loads((tmp_path / "worker" / "foundry.json").read_text())
    [entry] = [item for item in sidecar["supervisors"] if item["type"] == "policy"]
    assert entry["config"]["shadowMode"] is True
    assert "shadowMode" not in (tmp_path / "worker" / "tsagent.json").read_text()
    reloaded = load_agent(tmp_path / "worker").agent
    assert reloaded is not None
    reloaded_policy = policy_entry_config(reloaded.supervisors)
    assert reloaded_policy is not None and reloaded_policy.shadow_mode is True
