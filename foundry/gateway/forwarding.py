"""A gateway session: one client's tool calls decided by the agent's gate, run, and recorded."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from foundry.llm.base import ToolCall
from foundry.session.events import EventBody, ToolCallDecided, ToolCallFinished
from foundry.session.gate import ApprovalGate
from foundry.tools.catalog import ToolInfo
from foundry.tools.host import ToolHost, ToolResult

Record = Callable[[EventBody], Awaitable[object]]
OFFERED = ("always", "agent")  # `manual` tools wait for a person to include them in a chat


@dataclass
class ToolSession:
    """The agent's running MCP servers behind its approval gate, as one stored session."""

    session_id: str
    host: ToolHost
    gate: ApprovalGate
    record: Record
    _calls: int = 0

    def tools(self) -> list[ToolInfo]:
        """The tools a client is offered: the running servers' tools the agent includes."""
        return [tool for tool in self.host.tools() if str(tool.include.value) in OFFERED]

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        """Decide the call as a chat's would be decided, run it if allowed, record both; a
        denial comes back as an error result whose text is the reason."""
        self._calls += 1
        call = ToolCall(id=f"gateway-{self._calls}", name=name, arguments=arguments)
        tool = next((t for t in self.tools() if t.name == name), None)
        decision = await self.gate.review(call, tool.permission_required if tool else True)
        if decision.arguments is not None:  # a person edited them before approving
            call = call.model_copy(update={"arguments": decision.arguments})
        await self.record(
            ToolCallDecided(
                call=call, allowed=decision.allowed, by=decision.by, reason=decision.reason
            )
        )
        started = time.perf_counter()
        if decision.allowed:
            result = await self.host.call(call.name, call.arguments)
        else:
            reason = decision.reason or "denied"
            result = ToolResult(text=f"Denied by {decision.by}: {reason}", is_error=True)
        await self.record(
            ToolCallFinished(
                call_id=call.id,
                name=call.name,
                text=result.text,
                is_error=result.is_error,
                duration_s=time.perf_counter() - started,
            )
        )
        return result

    async def aclose(self) -> None:
        await self.host.aclose()
