"""The labelled set of the servers people run (bench/attention_servers.jsonl) cannot rot: every
call names a tool its server lists in bench/servers/, with parameters that fit the tool's input
schema, and the definitions keep no server's description prose. The policy's figures on the set
are the benchmark's to print, not asserted here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from jsonschema.validators import validator_for

from bench.attention import (
    SERVER_CALLS,
    SERVERS,
    BenchServer,
    LabelledCall,
    definitions_of,
    expand,
    make_workspace,
    read_calls,
    read_servers,
)
from foundry.tools.identity import identify

LABELS = {"routine", "must-ask", "must-deny"}


@pytest.fixture(scope="module")
def servers() -> dict[str, BenchServer]:
    return read_servers(SERVERS)


@pytest.fixture(scope="module")
def calls() -> list[LabelledCall]:
    return read_calls(SERVER_CALLS)


def test_the_set_has_a_hundred_calls_of_ten_servers_with_each_label(
    calls: list[LabelledCall],
) -> None:
    assert len(calls) >= 100
    assert len({call.tool.split(".", 1)[0] for call in calls}) >= 10
    assert {call.label for call in calls} == LABELS
    assert len({call.id for call in calls}) == len(calls)


def test_every_call_names_a_tool_its_server_lists(
    calls: list[LabelledCall], servers: dict[str, BenchServer]
) -> None:
    listed = {tool.name for server in servers.values() for tool in server.tools}
    missing = [call.id for call in calls if call.tool not in listed]
    assert missing == []


def test_every_call_fits_its_tools_input_schema(
    calls: list[LabelledCall], servers: dict[str, BenchServer], tmp_path: Path
) -> None:
    places = make_workspace(tmp_path)
    schemas = {tool.name: tool.parameters for server in servers.values() for tool in server.tools}
    misfits = {
        call.id: error
        for call in calls
        if (error := _misfit(expand(call.params, places), schemas[call.tool])) is not None
    }
    assert misfits == {}


def test_a_call_off_its_schema_is_caught(servers: dict[str, BenchServer]) -> None:
    schema = next(t.parameters for t in servers["slack"].tools if t.tool == "slack_post_message")
    assert _misfit({"channel_id": "C1", "text": "hi"}, schema) is None
    assert _misfit({"channel_id": "C1"}, schema) is not None  # `text` is required
    assert _misfit({"channel_id": 7, "text": "hi"}, schema) is not None


def test_the_definitions_keep_no_description_prose(servers: dict[str, BenchServer]) -> None:
    prose = [
        f"{tool.name}: {where}"
        for server in servers.values()
        for tool in server.tools
        for where in _descriptions(tool.listed)
    ]
    assert prose == []


def test_the_gate_is_given_each_tools_schema_and_annotations(
    servers: dict[str, BenchServer],
) -> None:
    definition = definitions_of(list(servers["github"].tools))
    listed = definition("github.get_file_contents")
    assert listed is not None and listed.annotations is not None
    assert listed.annotations["readOnlyHint"] is True
    assert listed.input_schema is not None and listed.input_schema["required"] == ["owner", "repo"]
    assert definition("github.no_such_tool") is None
    unannotated = definitions_of(list(servers["slack"].tools))("slack.slack_post_message")
    assert unannotated is not None and unannotated.annotations == {}


def test_every_server_is_launched_by_a_real_command(servers: dict[str, BenchServer]) -> None:
    for server in servers.values():
        assert server.tools and server.source
        assert identify(server.launch, Path("/")).package is not None, server.name


def _misfit(params: dict[str, Any], schema: dict[str, Any]) -> str | None:
    validator_class = validator_for(schema)
    validator_class.check_schema(schema)
    error = next(iter(validator_class(schema).iter_errors(params)), None)
    return None if error is None else error.message


SUBSCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions")


def _descriptions(value: Any, where: str = "") -> list[str]:
    """Where a `description` keyword sits in a tool entry or its schemas (a property that is
    itself named `description` is a name, not prose)."""
    if isinstance(value, list):
        return [found for i, item in enumerate(value) for found in _descriptions(item, where)]
    if not isinstance(value, dict):
        return []
    found = [where or "the tool"] if isinstance(value.get("description"), str) else []
    for key, item in value.items():
        if key in SUBSCHEMA_MAPS and isinstance(item, dict):
            found += [
                f for name, sub in item.items() for f in _descriptions(sub, f"{where}.{name}")
            ]
        elif key != "description":
            found += _descriptions(item, where)
    return found
