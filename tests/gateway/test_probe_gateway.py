"""The gateway passes MCP through whole: what the Python SDK's client sees of the probe server
(tests/gateway/probe_server.py) directly, it sees through `foundry gateway`, but for the names
(`probe__tool`) and what supervision changes, which the result then says."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp.types as mcp_types
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.stdio import get_default_environment
from mcp.shared.exceptions import MCPError

from foundry.store import Store
from tests.gateway.probe_server import FAILURE_CODE, LEAKED_TOKEN
from tests.runtime.conftest import trust, write_agent

PROBE = str(Path(__file__).with_name("probe_server.py"))
ALLOW_ALL = {
    "type": "policy",
    "id": "allow-all",
    "name": "Everything runs",
    "config": {
        "rules": [{"name": "ok", "tool": "*", "action": "allow"}],
        "loopDetection": False,
    },
}


def probe_agent(root: Path, *supervisors: dict[str, Any]) -> Path:
    """An agent whose one server is the probe, trusted, every tool offered and allowed."""
    server = {
        "type": "stdio",
        "command": "python",
        "args": [PROBE],
        "serverToolDefaults": {"include": "always", "permissionRequired": False},
    }
    return write_agent(
        root, {"turns": []}, servers={"probe": server}, supervisors=[*supervisors, ALLOW_ALL]
    )


class Heard:
    """What a client heard besides answers: log messages, questions, notifications."""

    def __init__(self, answer: mcp_types.ElicitResult | None = None) -> None:
        self.answer = answer
        self.logs: list[mcp_types.LoggingMessageNotificationParams] = []
        self.questions: list[str] = []
        self.notifications: list[str] = []

    async def log(self, params: mcp_types.LoggingMessageNotificationParams) -> None:
        self.logs.append(params)

    async def elicit(self, context: Any, params: mcp_types.ElicitRequestParams) -> Any:
        self.questions.append(params.message)
        assert self.answer is not None
        return self.answer

    async def told(self, method: str, within_s: float = 30.0) -> None:
        """Until the client was sent a notification of `method` (failing after `within_s`)."""
        with anyio.fail_after(within_s):
            while method not in self.notifications:
                await anyio.sleep(0.02)

    async def message(self, message: Any) -> None:
        if isinstance(
            message, mcp_types.ServerNotification | mcp_types.ToolListChangedNotification
        ):
            self.notifications.append(str(getattr(message, "method", type(message).__name__)))


@asynccontextmanager
async def connected(
    params: StdioServerParameters, heard: Heard | None = None
) -> AsyncIterator[ClientSession]:
    heard = heard or Heard()
    async with (
        stdio_client(params) as (read, write),
        ClientSession(
            read,
            write,
            logging_callback=heard.log,
            elicitation_callback=heard.elicit if heard.answer is not None else None,
            message_handler=heard.message,
        ) as session,
    ):
        await session.initialize()
        yield session


def direct() -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=[PROBE])


def through_gateway(agent: Path, home: Path) -> StdioServerParameters:
    env = {**get_default_environment(), "FOUNDRY_HOME": str(home)}
    args = ["-m", "foundry.cli", "gateway", str(agent)]
    return StdioServerParameters(command=sys.executable, args=args, env=env)


def wire(model: Any) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


@pytest.fixture
def agent(tmp_path: Path) -> Path:
    return probe_agent(tmp_path / "agent")


async def test_tools_are_listed_whole_under_the_gateways_names(
    agent: Path, foundry_home: Path
) -> None:
    async with connected(direct()) as server:
        expected = [
            {**wire(tool), "name": f"probe__{tool.name}"}
            for tool in (await server.list_tools()).tools
        ]
    async with connected(through_gateway(agent, foundry_home)) as gateway:
        seen = [wire(tool) for tool in (await gateway.list_tools()).tools]
    assert seen == expected
    report = next(tool for tool in seen if tool["name"] == "probe__report")
    assert {"title", "annotations", "outputSchema", "_meta", "icons", "execution"} <= set(report)


async def test_a_result_reaches_the_client_with_every_block_and_its_structured_content(
    agent: Path, foundry_home: Path
) -> None:
    async with connected(direct()) as server:
        await server.list_tools()
        expected = wire(await server.call_tool("report", {"topic": "tides"}))
    async with connected(through_gateway(agent, foundry_home)) as gateway:
        await gateway.list_tools()  # the SDK checks structured content against outputSchema
        seen = wire(await gateway.call_tool("probe__report", {"topic": "tides"}))
    assert seen == expected
    types = [block["type"] for block in seen["content"]]
    assert types == ["text", "image", "audio", "resource_link", "resource", "resource"]
    assert seen["structuredContent"] == {"count": 2, "words": ["report", "tides"]}
    assert seen["_meta"] == {"probe/served-by": "probe"}


async def test_a_servers_json_rpc_error_stays_that_error(agent: Path, foundry_home: Path) -> None:
    async with connected(through_gateway(agent, foundry_home)) as gateway:
        with pytest.raises(MCPError) as raised:
            await gateway.call_tool("probe__fail", {})
    assert raised.value.code == FAILURE_CODE
    assert raised.value.message == "the probe failed on purpose"
    assert raised.value.data == {"probe": "data"}


@pytest.mark.parametrize("name", ["probe__nothing", "probe__report\u200b", "PROBE__REPORT", ""])
async def test_a_tool_the_gateway_does_not_offer_is_a_json_rpc_error(
    agent: Path, foundry_home: Path, name: str
) -> None:
    async with connected(through_gateway(agent, foundry_home)) as gateway:
        with pytest.raises(MCPError) as raised:
            await gateway.call_tool(name, {})
        assert raised.value.code == mcp_types.INVALID_PARAMS
        assert "offers no tool named" in raised.value.message
        still = await gateway.call_tool("probe__report", {"topic": "after"})  # nothing broke
        assert not still.is_error


async def test_a_denied_call_is_an_error_result_that_says_why(
    tmp_path: Path, foundry_home: Path
) -> None:
    deny = {
        **ALLOW_ALL,
        "id": "no-reports",
        "config": {"rules": [{"name": "no-reports", "tool": "probe.report", "action": "deny"}]},
    }
    agent = probe_agent(tmp_path / "agent", deny)
    async with connected(through_gateway(agent, foundry_home)) as gateway:
        denied = await gateway.call_tool("probe__report", {"topic": "x"})
    assert denied.is_error and denied.structured_content is None
    assert [block.type for block in denied.content] == ["text"]
    assert "no-reports" in denied.content[0].text  # type: ignore[union-attr]


async def slow_call(params: StdioServerParameters, name: str) -> tuple[Any, ...]:
    """What a client hears of the probe's `slow`: its result, progress and log messages."""
    heard = Heard()
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total, message))

    async with connected(params, heard) as client:
        result = await client.call_tool(name, {}, progress_callback=on_progress)
    return wire(result), progress, [wire(log) for log in heard.logs]


async def test_progress_and_log_messages_reach_the_caller_as_sent(
    agent: Path, foundry_home: Path
) -> None:
    expected = await slow_call(direct(), "slow")
    seen = await slow_call(through_gateway(agent, foundry_home), "probe__slow")
    assert seen == expected
    assert len(expected[1]) == 3 and len(expected[2]) == 3


async def test_a_question_reaches_a_client_that_can_ask_and_is_declined_for_one_that_cannot(
    agent: Path, foundry_home: Path
) -> None:
    answer = mcp_types.ElicitResult(action="accept", content={"colour": "ochre"})
    asker = Heard(answer)
    async with connected(through_gateway(agent, foundry_home), asker) as gateway:
        asked = await gateway.call_tool("probe__ask", {})
    assert asker.questions == ["Which colour?"]
    assert asked.content[0].text == "elicitation accept: {'colour': 'ochre'}"  # type: ignore[union-attr]
    async with connected(through_gateway(agent, foundry_home)) as gateway:
        unasked = await gateway.call_tool("probe__ask", {})
    assert unasked.content[0].text == "elicitation decline: None"  # type: ignore[union-attr]


async def test_sampling_is_refused_to_the_server(agent: Path, foundry_home: Path) -> None:
    async with connected(through_gateway(agent, foundry_home)) as gateway:
        sampled = await gateway.call_tool("probe__sample", {})
    assert sampled.content[0].text.startswith("sampling refused")  # type: ignore[union-attr]


async def test_a_changed_definition_under_the_same_names_is_held_and_told(
    agent: Path, foundry_home: Path
) -> None:
    """The rug pull: no name changes, the description does. The change is told (a
    ToolConcernRaised in the session) and, until a person approves it, the client is offered
    what was trusted (supervision/tool_definitions.py; its tests approve it)."""
    store = Store.open()
    try:
        async with connected(through_gateway(agent, foundry_home)) as gateway:
            before = {tool.name: tool.description for tool in (await gateway.list_tools()).tools}
            await gateway.call_tool("probe__change", {})
            told = await _told(store, "definition-changed", "probe.fail")
            after = {tool.name: tool.description for tool in (await gateway.list_tools()).tools}
    finally:
        store.close()
    assert "id_rsa" in told["detail"]["description"] and "id_rsa" in told["detail"]["diff"]
    assert after == before
    assert "id_rsa" not in (after["probe__fail"] or "")


async def _told(store: Store, concern: str, tool: str) -> dict[str, Any]:
    """The first ToolConcernRaised of `concern` about `tool` in any session, once stored."""
    for _ in range(500):
        for session in await anyio.to_thread.run_sync(store.sessions.list):
            for event in await anyio.to_thread.run_sync(store.events.list, session.id):
                payload = event.payload
                said = (payload.get("concern"), payload.get("tool"))
                if event.kind == "tool_concern" and said == (concern, tool):
                    return payload
        await anyio.sleep(0.02)
    raise AssertionError(f"no {concern} about {tool} was told")


async def test_resources_templates_and_prompts_are_listed_as_sent_under_prefixed_names(
    agent: Path, foundry_home: Path
) -> None:
    async def listings(client: ClientSession) -> list[list[dict[str, Any]]]:
        return [
            [wire(item) for item in (await client.list_resources()).resources],
            [wire(item) for item in (await client.list_resource_templates()).resource_templates],
            [wire(item) for item in (await client.list_prompts()).prompts],
        ]

    async with connected(direct()) as server:
        expected = [
            [{**item, "name": f"probe__{item['name']}"} for item in listing]
            for listing in await listings(server)
        ]
    async with connected(through_gateway(agent, foundry_home)) as gateway:
        seen = await listings(gateway)
    assert seen == expected
    assert [item["uri"] for item in seen[0]] == ["probe://notes/readme", "probe://logo.png"]


async def test_a_resource_read_and_a_prompt_got_through_the_gateway_are_what_the_server_gives(
    agent: Path, foundry_home: Path
) -> None:
    uris = ["probe://notes/readme", "probe://logo.png", "probe://notes/from-the-template"]
    async with connected(direct()) as server:
        expected = [wire(await server.read_resource(uri)) for uri in uris]
        expected_prompt = wire(await server.get_prompt("greet", {"who": "Ann"}))
    async with connected(through_gateway(agent, foundry_home)) as gateway:
        seen = [wire(await gateway.read_resource(uri)) for uri in uris]
        seen_prompt = wire(await gateway.get_prompt("probe__greet", {"who": "Ann"}))
        with pytest.raises(MCPError) as missing:
            await gateway.read_resource("probe://nowhere")
        with pytest.raises(MCPError) as no_prompt:
            await gateway.get_prompt("greet", {"who": "Ann"})  # the server's own name
    assert seen == expected and seen_prompt == expected_prompt
    assert missing.value.code == -32002  # the server's own answer, passed on
    assert no_prompt.value.code == mcp_types.INVALID_PARAMS
    store = Store.open()
    try:
        [session] = store.sessions.list()
        events = store.events.list(session.id)
        decided = [e.payload["call"]["name"] for e in events if e.kind == "tool_call_decided"]
    finally:
        store.close()
    assert decided == [*["probe.read_resource"] * 3, "probe.get_prompt", "probe.read_resource"]


async def test_a_read_and_a_prompt_are_judged_by_the_gate_as_calls(
    tmp_path: Path, foundry_home: Path
) -> None:
    rules = [
        {"name": "no-logo", "tool": "probe.read_resource", "action": "deny",
         "when": {"all": [{"param": "uri", "op": "contains", "value": "logo"}]}},
        {"name": "no-prompts", "tool": "probe.get_prompt", "action": "deny"},
        {"name": "the-rest", "tool": "*", "action": "allow"},
    ]  # fmt: skip
    deny = {**ALLOW_ALL, "id": "no-reads", "config": {"rules": rules}}
    agent = probe_agent(tmp_path / "agent", deny)
    async with connected(through_gateway(agent, foundry_home)) as gateway:
        note = await gateway.read_resource("probe://notes/readme")
        with pytest.raises(MCPError) as logo:
            await gateway.read_resource("probe://logo.png")
        with pytest.raises(MCPError) as prompt:
            await gateway.get_prompt("probe__greet", {"who": "Ann"})
    assert note.contents[0].text == "the note readme"  # type: ignore[union-attr]
    assert "Denied by" in logo.value.message and "no-logo" in logo.value.message
    assert "Denied by" in prompt.value.message and "no-prompts" in prompt.value.message


# --- what tries to get past the passthrough -------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["probe__read_resource", "probe.read_resource", "probe.get_prompt"]
)
async def test_a_read_cannot_be_called_as_a_tool(
    agent: Path, foundry_home: Path, name: str
) -> None:
    """The names reads are judged by are not tools: a client cannot read through tools/call."""
    async with connected(through_gateway(agent, foundry_home)) as gateway:
        with pytest.raises(MCPError) as raised:
            await gateway.call_tool(name, {"uri": "probe://notes/readme", "name": "greet"})
    assert raised.value.code == mcp_types.INVALID_PARAMS
    assert "offers no tool named" in raised.value.message


async def test_a_token_in_a_servers_error_is_masked_and_its_data_dropped(
    agent: Path, foundry_home: Path
) -> None:
    async with connected(through_gateway(agent, foundry_home)) as gateway:
        with pytest.raises(MCPError) as raised:
            await gateway.call_tool("probe__leak", {})
    assert raised.value.code == FAILURE_CODE
    assert LEAKED_TOKEN not in raised.value.message and "bad credentials" in raised.value.message
    assert raised.value.data is None


async def test_a_token_in_a_servers_error_data_is_masked(agent: Path, foundry_home: Path) -> None:
    async with connected(through_gateway(agent, foundry_home)) as gateway:
        with pytest.raises(MCPError) as raised:
            await gateway.call_tool("probe__leak_data", {})
    assert (raised.value.code, raised.value.message) == (FAILURE_CODE, "bad credentials")
    assert raised.value.data == {"token": "[secret]", "n": 1}


async def test_a_uri_two_servers_could_serve_is_read_from_neither(
    tmp_path: Path, foundry_home: Path
) -> None:
    """A second server listing the same URIs (a shadow) makes the read an error naming both,
    not the first one's content or the other's."""
    agent = probe_agent(tmp_path / "agent")
    config = json.loads((agent / "tsagent.json").read_text())
    config["mcpServers"]["twin"] = config["mcpServers"]["probe"]
    (agent / "tsagent.json").write_text(json.dumps(config))
    trust(agent)
    async with connected(through_gateway(agent, foundry_home)) as gateway:
        names = [resource.name for resource in (await gateway.list_resources()).resources]
        with pytest.raises(MCPError) as raised:
            await gateway.read_resource("probe://notes/readme")
    assert names == ["probe__readme", "probe__logo", "twin__readme", "twin__logo"]
    assert raised.value.code == -32002
    assert "probe, twin" in raised.value.message


async def test_listing_asks_no_one_and_decides_nothing(agent: Path, foundry_home: Path) -> None:
    """Routine: listings are not calls; only a read or a get is decided."""
    async with connected(through_gateway(agent, foundry_home)) as gateway:
        await gateway.list_tools()
        await gateway.list_resources()
        await gateway.list_resource_templates()
        await gateway.list_prompts()
    store = Store.open()
    try:
        [session] = store.sessions.list()
        assert store.events.list(session.id, kinds=("tool_call_decided",)) == []
        assert store.approvals.list() == []
    finally:
        store.close()
