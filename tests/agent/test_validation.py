"""Every problem names the file, the field and what is wrong, and all are reported at once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from foundry.agent import validate_agent

from .conftest import YAML_AGENT


def edit_config(root: Path, change) -> None:  # type: ignore[no-untyped-def]
    config = json.loads((root / "tsagent.json").read_text())
    change(config)
    (root / "tsagent.json").write_text(json.dumps(config, indent=2))


def messages(path: Path) -> list[str]:
    return [str(problem) for problem in validate_agent(path)]


def test_sample_agents_are_valid(sample_agents: Path) -> None:
    for agent in sample_agents.iterdir():
        assert validate_agent(agent) == [], agent


def test_missing_supervisor_agent_path(sample_agents: Path) -> None:
    assistant = sample_agents / "assistant"
    edit_config(assistant, lambda c: c["supervisors"][2]["config"].update(agentPath="../nowhere"))
    [problem] = validate_agent(assistant)
    assert problem.file == assistant / "tsagent.json"
    assert problem.field == "supervisors[2].config.agentPath"
    assert problem.message.startswith("no agent at '../nowhere'")


def test_supervisor_chain_that_loops_back_to_the_agent(sample_agents: Path) -> None:
    loop = {"type": "agent", "id": "back", "name": "Back", "config": {"agentPath": "../assistant"}}
    edit_config(sample_agents / "architect", lambda c: c["supervisors"].append(loop))
    problems = messages(sample_agents / "assistant")
    assert any(
        "foundry.json: supervisors[0].config.supervisorAgentPath: supervisor chain loops back: "
        "assistant → architect → assistant" in text
        for text in problems
    ), problems


def test_agent_that_supervises_itself(sample_agents: Path) -> None:
    me = {"type": "agent", "id": "me", "name": "Me", "config": {"agentPath": "."}}
    edit_config(sample_agents / "architect", lambda c: c["supervisors"].append(me))
    [problem] = validate_agent(sample_agents / "architect")
    assert problem.message == "supervisor chain loops back: architect → architect"


def test_duplicate_rule_names(sample_agents: Path) -> None:
    rules = sample_agents / "assistant" / "rules"
    text = (rules / "formal-tone.mdt").read_text().replace('"formal-tone"', '"be-concise"')
    (rules / "formal-tone.mdt").write_text(text)
    [problem] = validate_agent(sample_agents / "assistant")
    assert problem.file == rules / "formal-tone.mdt"
    assert problem.field == "name"
    assert problem.message == "duplicate rule name 'be-concise' (already used by be-concise.mdt)"


def test_unknown_include_mode_and_priority_out_of_range_in_one_report(sample_agents: Path) -> None:
    rule = sample_agents / "assistant" / "rules" / "be-concise.mdt"
    text = rule.read_text().replace('"always"', '"sometimes"').replace("100", "1200")
    rule.write_text(text)
    assert messages(sample_agents / "assistant") == [
        f"{rule}:5: priorityLevel: must be between 0 and 999 (got 1200)",
        f"{rule}:7: include: unknown include mode 'sometimes'; use always, manual or agent",
    ]


def test_all_problems_of_a_file_are_reported_together(sample_agents: Path) -> None:
    def break_everything(config: dict) -> None:  # type: ignore[type-arg]
        config["settings"]["temperature"] = "hot"
        config["settings"]["toolPermission"] = "sometimes"
        config["settings"]["model"] = "no-provider"
        config["supervisors"][0]["type"] = "bogus"
        del config["metadata"]["name"]

    edit_config(sample_agents / "assistant", break_everything)
    fields = {
        problem.field: problem.message for problem in validate_agent(sample_agents / "assistant")
    }
    assert fields == {
        "metadata.name": "is required but missing",
        "settings.temperature": "must be a number (got 'hot')",
        "settings.model": "'no-provider' must be written as provider:model (for example "
        "ollama:qwen2.5)",
        "settings.toolPermission": "'sometimes' is not allowed; use tool, always or never",
        "supervisors[0]": "unknown type 'bogus'; use one of agent, guardian, policy, collection, "
        "architect",
    }


def test_json_syntax_error_gives_the_line(sample_agents: Path) -> None:
    config = sample_agents / "architect" / "tsagent.json"
    lines = config.read_text().splitlines()
    lines[3] = lines[3].rstrip(",")  # drop a comma inside metadata
    config.write_text("\n".join(lines))
    [problem] = validate_agent(sample_agents / "architect")
    assert problem.file == config and problem.line == 5
    assert problem.message.startswith("invalid JSON: Expecting ',' delimiter")
    assert str(problem).startswith(f"{config}:5:")


def test_broken_mdt_header_gives_its_line(sample_agents: Path) -> None:
    rule = sample_agents / "architect" / "rules" / "small-steps.mdt"
    rule.write_text('---\n{\n  "name": "small-steps",\n  "include": always\n}---\ntext')
    [problem] = validate_agent(sample_agents / "architect")
    assert (problem.file, problem.line) == (rule, 4)


def test_yaml_syntax_error_gives_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("metadata:\n  name: x\nsettings: [unclosed\nrules: []\n")
    [problem] = validate_agent(path)
    assert problem.file == path and problem.line == 4
    assert problem.message.startswith("invalid YAML:")


def test_yaml_field_problems_carry_their_line(yaml_agent: Path) -> None:
    yaml_agent.write_text(YAML_AGENT.replace("priorityLevel: 10", "priorityLevel: -5"))
    [problem] = validate_agent(yaml_agent)
    assert problem.field == "rules[0].priorityLevel"
    assert problem.line == 16
    assert problem.message == "must be between 0 and 999 (got -5)"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("has space", "'has space' may only contain letters, digits, '_' and '-'"),
        ("", "'' may only contain letters, digits, '_' and '-'"),
    ],
)
def test_rule_names_are_restricted(yaml_agent: Path, name: str, message: str) -> None:
    yaml_agent.write_text(YAML_AGENT.replace("name: brevity", f"name: '{name}'"))
    [problem] = validate_agent(yaml_agent)
    assert (problem.field, problem.message) == ("rules[0].name", message)


def test_unknown_mcp_server_type(yaml_agent: Path) -> None:
    yaml_agent.write_text(YAML_AGENT.replace("type: streamable-http", "type: websocket"))
    [problem] = validate_agent(yaml_agent)
    assert problem.field == "mcpServers.web"
    assert "unknown MCP server type" in problem.message and "'websocket'" in problem.message


def test_unknown_supervisor_permission(yaml_agent: Path) -> None:
    yaml_agent.write_text(YAML_AGENT.replace("[read_only]", "[read_only, everything]"))
    [problem] = validate_agent(yaml_agent)
    assert problem.field == "supervisors[0].config.allowedActions[1]"
    assert problem.message.startswith("unknown permission 'everything'")


def test_missing_agent_folder(tmp_path: Path) -> None:
    [problem] = validate_agent(tmp_path / "nothing")
    assert "does not exist" in problem.message
