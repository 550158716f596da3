"""What a server says during one client's call reaches that client only: over HTTP, a second
client connected at the same time hears none of the first one's log messages or questions."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx2
import mcp.types as mcp_types
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.gateway.test_gateway_http import TOKEN, in_process_gateway
from tests.gateway.test_probe_gateway import Heard, probe_agent


@asynccontextmanager
async def http_listener(url: str, heard: Heard) -> AsyncIterator[ClientSession]:
    """An HTTP client that can ask its user and keeps what it hears."""
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        streamable_http_client(url, http_client=http) as (read, write, *_),
        ClientSession(
            read,
            write,
            logging_callback=heard.log,
            elicitation_callback=heard.elicit,
            message_handler=heard.message,
        ) as session,
    ):
        await session.initialize()
        yield session


async def test_another_client_hears_nothing_of_a_clients_call(
    tmp_path: Path, foundry_home: Path
) -> None:
    agent = probe_agent(tmp_path / "agent")
    caller = Heard(mcp_types.ElicitResult(action="accept", content={"colour": "jade"}))
    bystander = Heard(mcp_types.ElicitResult(action="accept", content={"colour": "stolen"}))
    async with (
        in_process_gateway(agent, idle_timeout_s=600) as (_, url),
        http_listener(url, caller) as calling,
        http_listener(url, bystander) as watching,
    ):
        await watching.list_tools()
        slow = await calling.call_tool("probe__slow", {})
        asked = await calling.call_tool("probe__ask", {})
        await watching.list_tools()  # anything meant for it would have come by now
    assert slow.content[0].text == "done slowly"  # type: ignore[union-attr]
    assert asked.content[0].text == "elicitation accept: {'colour': 'jade'}"  # type: ignore[union-attr]
    assert [log.data for log in caller.logs] == [{"step": 1}, {"step": 2}, {"step": 3}]
    assert caller.questions == ["Which colour?"]
    assert bystander.logs == [] and bystander.questions == []
