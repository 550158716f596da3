"""What ToolHost keeps of a server's answers beyond their text, against the probe server:
JSON-RPC errors as sent, progress, log messages and questions heard by the caller, resources and
prompts listed, read and got."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import mcp.types as mcp_types
import pytest
from pydantic import TypeAdapter

from foundry.agent.models import McpServerConfig
from foundry.tools.host import CallListener, ToolHost, listening
from tests.gateway.probe_server import FAILURE_CODE, PIXEL

PROBE = str(Path(__file__).with_name("probe_server.py"))


@pytest.fixture
async def host(tmp_path: Path) -> AsyncIterator[ToolHost]:
    configs = TypeAdapter(dict[str, McpServerConfig]).validate_python(
        {"probe": {"type": "stdio", "command": "python", "args": [PROBE]}}
    )
    async with ToolHost(configs, tmp_path) as running:
        assert running.statuses()[0].state == "running", running.statuses()[0].error
        yield running


async def test_a_json_rpc_error_is_kept_as_the_server_sent_it(host: ToolHost) -> None:
    result = await host.call("probe.fail", {})
    assert result.is_error and result.error is not None
    assert result.error.code == FAILURE_CODE
    assert result.error.message == "the probe failed on purpose"
    assert result.error.data == {"probe": "data"}
    assert "the probe failed on purpose" in result.text


async def test_an_error_result_is_not_taken_for_a_json_rpc_error(host: ToolHost) -> None:
    result = await host.call("probe.nothing_such", {})
    assert result.is_error and result.error is None


async def test_the_caller_hears_progress_logs_and_questions_during_its_call(host: ToolHost) -> None:
    heard: list[Any] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        heard.append(("progress", done, total, message))

    async def log(params: mcp_types.LoggingMessageNotificationParams) -> None:
        heard.append(("log", params.level, params.data))

    async def elicit(params: mcp_types.ElicitRequestParams) -> mcp_types.ElicitResult:
        heard.append(("asked", params.message))
        return mcp_types.ElicitResult(action="accept", content={"colour": "teal"})

    with listening(CallListener(progress=progress, log=log, elicit=elicit)):
        slow = await host.call("probe.slow", {})
        asked = await host.call("probe.ask", {})
    assert slow.text == "done slowly"
    assert [entry for entry in heard if entry[0] == "progress"] == [
        ("progress", float(step), 3.0, f"step {step}") for step in (1, 2, 3)
    ]
    assert [entry for entry in heard if entry[0] == "log"] == [
        ("log", "info", {"step": step}) for step in (1, 2, 3)
    ]
    assert ("asked", "Which colour?") in heard
    assert asked.text == "elicitation accept: {'colour': 'teal'}"


async def test_a_question_with_no_one_to_ask_is_declined(host: ToolHost) -> None:
    unheard = await host.call("probe.ask", {})
    assert unheard.text == "elicitation decline: None"
    with listening(CallListener()):  # a caller that cannot ask the user
        cannot = await host.call("probe.ask", {})
    assert cannot.text == "elicitation decline: None"


async def test_sampling_is_not_offered_to_servers(host: ToolHost) -> None:
    result = await host.call("probe.sample", {})
    assert result.text.startswith("sampling refused")


async def test_resources_templates_and_prompts_are_listed_as_sent(host: ToolHost) -> None:
    resources = await host.offered("resources")
    assert [(item.server, item.item["uri"]) for item in resources] == [
        ("probe", "probe://notes/readme"),
        ("probe", "probe://logo.png"),
    ]
    assert resources[0].item["_meta"] == {"probe/resource": True}
    assert resources[0].item["annotations"] == {"audience": ["user"]}
    [template] = await host.offered("resourceTemplates")
    assert template.item["uriTemplate"] == "probe://notes/{name}"
    [prompt] = await host.offered("prompts")
    assert prompt.item["arguments"][0]["name"] == "who"


async def test_a_resource_is_read_as_embedded_resources(host: ToolHost) -> None:
    note = await host.read_resource("probe", "probe://notes/shopping")
    assert note.text == "the note shopping"
    assert note.content == (
        {
            "type": "resource",
            "resource": {
                "uri": "probe://notes/shopping",
                "mimeType": "text/plain",
                "text": "the note shopping",
            },
        },
    )
    logo = await host.read_resource("probe", "probe://logo.png")
    assert base64.b64decode(logo.content[0]["resource"]["blob"]) == base64.b64decode(PIXEL)
    missing = await host.read_resource("probe", "probe://nowhere")
    assert missing.error is not None and missing.error.code == -32002
    elsewhere = await host.read_resource("other", "probe://notes/a")
    assert elsewhere.is_error and "no MCP server 'other'" in elsewhere.text


async def test_a_prompt_is_got_with_its_messages(host: ToolHost) -> None:
    got = await host.get_prompt("probe", "greet", {"who": "Ann"})
    assert got.structured is not None
    assert got.structured["description"] == "a greeting for Ann"
    roles = [message["role"] for message in got.structured["messages"]]
    assert roles == ["user", "assistant"]
    assert got.text.startswith("Greet Ann.")
