"""Opening an agent that does not validate: what is set aside, and what still refuses."""

from __future__ import annotations

from typing import Any

from foundry.agent.salvage import salvage


def agent_data(**fields: Any) -> dict[str, Any]:
    return {"metadata": {"name": "Broken"}, **fields}


def test_a_bad_supervisor_entry_sets_the_list_aside_as_read() -> None:
    entries = [{"type": "guardian", "id": "g"}, {"type": "bogus", "id": "x"}]
    salvaged = salvage(agent_data(supervisors=entries))
    assert salvaged.agent is not None and salvaged.agent.supervisors == []
    assert salvaged.set_aside == {"supervisors": entries}


def test_bad_settings_and_metadata_values_are_set_aside_one_by_one() -> None:
    data = agent_data(settings={"temperature": "hot", "topP": 0.3, "maxChatTurns": -1})
    data["metadata"]["version"] = 7
    salvaged = salvage(data)
    assert salvaged.agent is not None
    assert salvaged.agent.settings.top_p == 0.3
    assert salvaged.set_aside == {
        "settings.temperature": "hot",
        "settings.maxChatTurns": -1,
        "metadata.version": 7,
    }
    assert data["settings"]["temperature"] == "hot"  # what was read is not changed


def test_what_cannot_be_set_aside_leaves_no_agent() -> None:
    assert salvage(agent_data(mcpServers={"x": {"command": 5}})).agent is None
    assert salvage({"metadata": {}}).agent is None  # no name: nothing to edit
    assert salvage(agent_data()).set_aside == {}
