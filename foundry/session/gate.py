"""The approval gate every tool call passes through before it runs."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict

from foundry.agent.models import ToolPermission
from foundry.llm.base import ToolCall


class GateDecision(BaseModel):
    """Whether a tool call may run, who decided, why; `arguments` replaces the call's own when a
    reviewer edited them before approving; `confidence` is the L1 supervisor's (0-1) when it
    decided."""

    model_config = ConfigDict(frozen=True)

    allowed: bool
    by: str
    reason: str = ""
    arguments: dict[str, Any] | None = None
    confidence: float | None = None


class ApprovalGate(Protocol):
    """Decides whether a tool call may run. The supervision hierarchy is one; asking the user is
    another."""

    async def review(self, call: ToolCall, permission_required: bool) -> GateDecision: ...


AskUser = Callable[[ToolCall], Awaitable[GateDecision]]


class PermissionGate:
    """The agent's `toolPermission` decides: `never` runs every call; `always` asks about every
    call; `tool` asks when the tool requires permission. With no one to ask, a call is denied."""

    def __init__(self, permission: ToolPermission, ask: AskUser | None = None) -> None:
        self._permission = permission
        self._ask = ask

    async def review(self, call: ToolCall, permission_required: bool) -> GateDecision:
        needs_approval = self._permission == ToolPermission.ALWAYS or (
            self._permission == ToolPermission.TOOL and permission_required
        )
        if not needs_approval:
            return GateDecision(
                allowed=True, by="policy:toolPermission", reason="no approval needed"
            )
        if self._ask is None:
            return GateDecision(
                allowed=False,
                by="policy:toolPermission",
                reason=f"{call.name} needs approval and no one was there to approve it",
            )
        return await self._ask(call)
