"""A model-less session's call records what decided it as a chat's does, confidence included
(the dashboards count every supervisor decision, the gateway's too)."""

from __future__ import annotations

from typing import Any

from foundry.llm.base import ToolCall
from foundry.runtime.tool_session import ToolSession
from foundry.session.events import EventBody, ToolCallDecided, ToolCallFinished
from foundry.session.gate import GateDecision
from foundry.tools.catalog import IncludeMode, ToolInfo
from foundry.tools.host import ToolResult

ECHO = ToolInfo(
    name="up.echo",
    server="up",
    tool="echo",
    description="Says it back.",
    parameters={"type": "object", "properties": {"text": {"type": "string"}}},
    include=IncludeMode.ALWAYS,
    permission_required=False,
)


class EchoHost:
    """One server's one tool, answering with what it was given (what ToolSession asks of a
    ToolHost for a call)."""

    def tools(self) -> list[ToolInfo]:
        return [ECHO]

    def tool(self, name: str) -> ToolInfo | None:
        return ECHO if name == ECHO.name else None

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        return ToolResult(text=str(arguments.get("text", "")), is_error=False)

    def statuses(self) -> list[Any]:
        return []


class SupervisorGate:
    """Decides every call as an L1 supervisor fairly sure of it would."""

    async def review(self, call: ToolCall, permission_required: bool) -> GateDecision:
        return GateDecision(allowed=True, by="agent:supervisor", reason="routine", confidence=0.8)


async def test_a_call_s_decision_is_recorded_with_the_supervisor_s_confidence() -> None:
    recorded: list[EventBody] = []

    async def record(body: EventBody) -> None:
        recorded.append(body)

    session = ToolSession("s1", EchoHost(), SupervisorGate(), record)  # type: ignore[arg-type]
    result = await session.call("up.echo", {"text": "hello"})
    await session.settle()

    assert result.text == "hello"
    decided = [body for body in recorded if isinstance(body, ToolCallDecided)]
    assert [(d.allowed, d.by, d.confidence) for d in decided] == [(True, "agent:supervisor", 0.8)]
    assert [type(body) for body in recorded] == [ToolCallDecided, ToolCallFinished]
