"""Rules that read what a trusted server declared of its tool (`hints`: MCP's annotations).

A hint counts only for a tool a server listed (a person trusted that server), with MCP's
defaults where it said nothing; never for a tool of Foundry's own or one nobody listed; and it
never carries a call past a path rule or into a rule bound to a kind of server it is not.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from foundry.agent.models import PolicyConfig, PolicyRule
from foundry.llm.base import ToolCall
from foundry.store import Store
from foundry.supervision.hierarchy import SupervisedGate
from foundry.supervision.paths import ServerSite
from foundry.supervision.policy import PolicyEngine, ToolDefinition, offered_definition
from foundry.tools.catalog import IncludeMode, ToolInfo

READ_ONLY_LOCAL = {"readOnlyHint": True, "openWorldHint": False}


def hints_policy(project: Path, sites: dict[str, Any] | None = None) -> PolicyEngine:
    rules = [
        PolicyRule.model_validate(
            {
                "name": "read-only-local-tools",
                "hints": READ_ONLY_LOCAL,
                "when": {"all": [{"param": "*", "op": "within", "value": "."}]},
                "action": "allow",
            }
        ),
        PolicyRule(name="ask-otherwise", action="human"),
    ]
    return PolicyEngine(
        PolicyConfig(rules=rules, loop_detection=False), project, server_folders=sites
    )


def listed(annotations: dict[str, Any] | None) -> ToolDefinition:
    entry: dict[str, Any] = {"name": "t", "inputSchema": {"type": "object"}}
    if annotations is not None:
        entry["annotations"] = annotations
    return ToolDefinition.listed(entry)


def decided(engine: PolicyEngine, definition: ToolDefinition | None, **params: Any) -> str:
    return engine.decide("agent", "notes.lookup", params, definition=definition).action


def test_a_tool_its_server_declares_read_only_and_closed_world_runs(tmp_path: Path) -> None:
    assert decided(hints_policy(tmp_path), listed(READ_ONLY_LOCAL), topic="x") == "allow"


@pytest.mark.parametrize(
    "annotations",
    [
        None,  # nothing declared: MCP's defaults, not read-only
        {},
        {"readOnlyHint": True},  # open-world by default
        {"readOnlyHint": "true", "openWorldHint": False},  # not a boolean: the default
        {"readOnlyHint": 1, "openWorldHint": False},
        {"readOnlyHint": False, "openWorldHint": False},
    ],
)
def test_hints_the_server_did_not_declare_take_the_specifications_defaults(
    tmp_path: Path, annotations: dict[str, Any] | None
) -> None:
    assert decided(hints_policy(tmp_path), listed(annotations), topic="x") == "human"


def test_a_tool_of_foundrys_own_or_one_nobody_listed_meets_no_hints_rule(tmp_path: Path) -> None:
    engine = hints_policy(tmp_path)
    own = ToolDefinition(input_schema={"type": "object"})
    assert decided(engine, own, topic="x") == "human"
    assert decided(engine, None, topic="x") == "human"


def test_a_lying_read_only_hint_does_not_carry_a_path_outside_the_workspace(
    tmp_path: Path,
) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    sites = {"notes": ServerSite((project,), "memory")}
    engine = hints_policy(project, sites)
    assert decided(engine, listed(READ_ONLY_LOCAL), path="a.md") == "allow"
    for outside in ("/etc/shadow", "../secret.txt", "file:///etc/passwd"):
        assert decided(engine, listed(READ_ONLY_LOCAL), path=outside) == "human"
    # a path hidden in a text parameter of a server Foundry does not know is found too
    unknown = hints_policy(project, {"notes": ServerSite((project,), None)})
    assert decided(unknown, listed(READ_ONLY_LOCAL), text="/etc/shadow") == "human"


def test_a_remote_servers_declaration_is_not_enough(tmp_path: Path) -> None:
    """A remote server is not held by the kernel: what it declares of itself cannot be checked,
    and where it takes a path from is unknown."""
    engine = hints_policy(tmp_path, {"notes": ServerSite(None, None)})
    assert decided(engine, listed(READ_ONLY_LOCAL), topic="x") == "human"


def test_a_forged_hint_on_an_unknown_servers_tool_meets_no_rule_of_a_kind(
    tmp_path: Path,
) -> None:
    rules = [
        PolicyRule.model_validate(
            {
                "name": "reading-github",
                "tool": "*.get_issue",
                "kind": "github",
                "hints": {"readOnlyHint": True},
                "action": "allow",
            }
        ),
        PolicyRule(name="ask-otherwise", action="human"),
    ]
    sites = {"gh": ServerSite(None, "github"), "evil": ServerSite(None, None)}
    engine = PolicyEngine(
        PolicyConfig(rules=rules, loop_detection=False), tmp_path, server_folders=sites
    )
    claims = listed({"readOnlyHint": True})
    assert engine.decide("a", "gh.get_issue", {"issue_number": 1}, definition=claims).rule == (
        "reading-github"
    )
    forged = engine.decide("a", "evil.get_issue", {"issue_number": 1}, definition=claims)
    assert forged.rule == "ask-otherwise"
    # and the kind's own tool without the hint (a changed definition) is not read-only either
    changed = engine.decide("a", "gh.get_issue", {"issue_number": 1}, definition=listed({}))
    assert changed.rule == "ask-otherwise"


def test_a_hint_no_annotation_has_is_refused_when_the_policy_is_read() -> None:
    with pytest.raises(ValidationError, match="readonly is not an annotation"):
        PolicyRule.model_validate({"name": "x", "hints": {"readonly": True}, "action": "allow"})


def test_the_reason_says_what_the_server_declared(tmp_path: Path) -> None:
    decision = hints_policy(tmp_path).decide(
        "agent", "notes.lookup", {"topic": "x"}, definition=listed(READ_ONLY_LOCAL)
    )
    assert "its server declares readOnlyHint=true, openWorldHint=false" in decision.reason


def tool_info(listed_entry: dict[str, Any]) -> ToolInfo:
    return ToolInfo(
        name="notes.lookup",
        server="notes",
        tool="lookup",
        description="",
        parameters={"type": "object", "properties": {"topic": {"type": "string"}}},
        include=IncludeMode.ALWAYS,
        permission_required=True,
        listed=listed_entry,
    )


def test_the_offered_definition_keeps_a_servers_annotations_and_none_for_foundrys_own() -> None:
    served = tool_info({"name": "lookup", "annotations": READ_ONLY_LOCAL})
    definition = offered_definition([served], "notes.lookup")
    assert definition is not None and definition.declares(READ_ONLY_LOCAL)
    assert definition.input_schema == served.parameters
    own = offered_definition([tool_info({})], "notes.lookup")
    assert own is not None and own.annotations is None
    assert offered_definition([served], "notes.other") is None


async def test_the_gate_judges_a_call_with_the_tools_definition(tmp_path: Path) -> None:
    served = tool_info({"name": "lookup", "annotations": READ_ONLY_LOCAL})
    rules = hints_policy(tmp_path)
    with Store.open(f"sqlite:///{tmp_path / 'gate.sqlite3'}") as store:

        async def notify(body: Any) -> None:
            return None

        def gate(tools: list[ToolInfo]) -> SupervisedGate:
            return SupervisedGate(
                store,
                PolicyConfig(),
                "agent",
                "s1",
                tmp_path,
                notify,
                policy_engine=rules.fresh(),
                tool_definitions=lambda name: offered_definition(tools, name),
            )

        call = ToolCall(id="c1", name="notes.lookup", arguments={"topic": "x"})
        assert (await gate([served]).route(call)).outcome == "allow"
        assert (await gate([tool_info({})]).route(call)).outcome != "allow"
