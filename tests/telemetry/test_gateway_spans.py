"""A gateway's calls (a ToolSession, the MCP gateway's session) as execute_tool spans of their
own, each with the decision that let it run or refused it."""

from __future__ import annotations

import asyncio
from pathlib import Path

from opentelemetry.trace import SpanKind, StatusCode

from foundry.runtime.engine import Engine
from foundry.telemetry.export import spans_of
from tests.gateway.test_gateway_stdio import POLICY, gateway_agent

from .conftest import attributes, children


async def _gateway_calls(engine: Engine, agent: Path) -> str:
    """Two calls through the gateway's session: one allowed, one refused; its session id."""

    async def calls() -> str:
        session = await engine.open_tool_session(agent, "a client via the gateway")
        try:
            await session.call("time.get_current_time", {"timezone": "UTC"})
            await session.call(
                "time.convert_time",
                {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"},
            )
            await session.settle()
        finally:
            await session.aclose()
        return session.session_id

    return await asyncio.wait_for(asyncio.wrap_future(engine.submit(calls())), 60)


async def test_each_gateway_call_is_a_server_span_with_its_decision(
    engine: Engine, tmp_path: Path
) -> None:
    session_id = await _gateway_calls(engine, gateway_agent(tmp_path / "gate", [POLICY]))
    spans = spans_of(engine.store, session_id)

    tools = {s.name: s for s in spans if s.name.startswith("execute_tool ")}
    assert set(tools) == {"execute_tool time.get_current_time", "execute_tool time.convert_time"}
    assert all(tool.parent is None and tool.kind is SpanKind.SERVER for tool in tools.values())
    assert len({tool.context.trace_id for tool in tools.values() if tool.context}) == 2
    for tool in tools.values():
        assert attributes(tool)["foundry.gateway"] is True
        assert attributes(tool)["gen_ai.conversation.id"] == session_id
        assert attributes(tool)["gen_ai.agent.name"] == "gate"

    [allowed] = children(spans, tools["execute_tool time.get_current_time"])
    assert attributes(allowed)["gen_ai.security.verdict.type"] == "allow"
    assert attributes(allowed)["gen_ai.security.policy.rule.id"] == "time-is-fine"
    refused_call = tools["execute_tool time.convert_time"]
    [refused] = children(spans, refused_call)
    assert attributes(refused)["gen_ai.security.action.type"] == "block"
    assert attributes(refused)["gen_ai.security.policy.rule.id"] == "no-conversions"
    assert refused_call.status.status_code is StatusCode.ERROR
    assert len(spans) == 4  # no turn, no model call: the calls and their decisions only
