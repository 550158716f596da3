"""A session without a model (the MCP gateway's): each call decided by the agent's gate, run."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from foundry.llm.base import ToolCall
from foundry.session.events import EventBody, ToolCallDecided, ToolCallFinished
from foundry.session.gate import ApprovalGate, GateDecision
from foundry.supervision.guardian import GuardianSupervisor
from foundry.supervision.tool_definitions import offered_on
from foundry.supervision.tracing import KeepTrace, later_trace
from foundry.tools.arguments import ArgumentCheck
from foundry.tools.catalog import ToolInfo
from foundry.tools.declared import forwarded, with_note
from foundry.tools.host import ServerStatus, ToolHost, ToolResult

if TYPE_CHECKING:
    from foundry.runtime.results import SessionResults

Record = Callable[[EventBody], Awaitable[object]]
GATEWAY = "policy:gateway"  # refuses a call before any decision: no such tool, unfit arguments
OFFERED = ("always", "agent")  # `manual` tools wait for a person to include them in a chat


@dataclass
class ToolSession:
    """The agent's running MCP servers behind its approval gate, as one stored session."""

    session_id: str
    host: ToolHost
    gate: ApprovalGate
    record: Record
    owns_host: bool = True
    guardian: GuardianSupervisor | None = None  # screens the parameters (results: `results`)
    # screens the results (masked, flagged) and holds what sends data out once the session has
    # read untrusted content (its gate has its concerns)
    results: SessionResults | None = None
    agent_id: str = ""
    keep_trace: KeepTrace | None = (
        None  # traces the refusals made before the gate (it traces its own)
    )
    _calls: int = 0
    _arguments: ArgumentCheck = field(default_factory=ArgumentCheck)
    _restarting: dict[str, asyncio.Task[None]] = field(default_factory=dict)
    _recording: set[asyncio.Future[object]] = field(default_factory=set)

    def tools(self) -> list[ToolInfo]:
        """The tools a client is offered: the running servers' tools the agent includes (one
        whose definition changed since it was pinned as pinned, until a person approves)."""
        return [tool for tool in offered_on(self.host, self.host.tools()) if _offered(tool)]

    def tool(self, name: str) -> ToolInfo | None:
        """The tool called `name` among `tools`."""
        tool = self.host.tool(name)
        return offered_on(self.host, [tool])[0] if tool is not None and _offered(tool) else None

    async def call(
        self, name: str, arguments: dict[str, Any], read: ToolInfo | None = None
    ) -> ToolResult:
        """Decide the call as a chat's would be decided, run it only if allowed, and record the
        decision and the result; a denial comes back as an error result whose text is the
        reason. Parameters the tool's schema does not declare are dropped first (neither judged
        nor passed on), and the result says which. The decision is made before anything runs;
        its recording (events, trace) is queued, stored with the session's next group of events
        off the call's path, in order (`settle` waits for it). `read` is a resource read or
        prompt get (ToolHost.read_tool), decided and recorded as a call of that tool."""
        self._calls += 1
        tool = self.tool(name) if read is None else read
        # what the tool's schema does not declare is not passed on, so not judged either
        shaped = forwarded(arguments, tool.parameters if tool is not None else None)
        call = ToolCall(id=f"gateway-{self._calls}", name=name, arguments=shaped.arguments)
        refusal = await self._refusal(tool, call)
        if refusal is not None:
            self._trace_refusal(call, refusal)
            decision = refusal
        else:
            assert tool is not None  # a call of no offered tool is refused
            decision = await self.gate.review(call, tool.permission_required)
        if decision.arguments is not None:  # a person edited them before approving
            call = call.model_copy(update={"arguments": decision.arguments})
        self._record(
            ToolCallDecided(
                call=call,
                allowed=decision.allowed,
                by=decision.by,
                reason=decision.reason,
                confidence=decision.confidence,
            )
        )
        started = time.perf_counter()
        if decision.allowed:
            ran = self._run(call) if read is None else self.host.read(read, call.arguments)
            result = await self._screened(call, await ran)
        elif decision.by == GATEWAY:
            result = ToolResult(text=decision.reason, is_error=True)
        else:
            reason = decision.reason or "denied"
            result = ToolResult(text=f"Denied by {decision.by}: {reason}", is_error=True)
        note = shaped.note(name)
        if note is not None:
            result = result.model_copy(update={"text": with_note(result.text, note)})
        self._record(
            ToolCallFinished(
                call_id=call.id,
                name=call.name,
                text=result.text,
                is_error=result.is_error,
                duration_s=time.perf_counter() - started,
            )
        )
        return result

    async def settle(self) -> None:
        """Wait until everything recorded so far is stored (a failure is logged where the
        store refused it)."""
        await asyncio.gather(*self._recording, return_exceptions=True)

    def _record(self, body: EventBody) -> None:
        if self.results is not None:
            self.results.apply(body)  # the rule of two follows the session's calls at once
        recording = asyncio.ensure_future(self.record(body))
        self._recording.add(recording)
        recording.add_done_callback(self._recorded)

    def _recorded(self, recording: asyncio.Future[object]) -> None:
        self._recording.discard(recording)
        if not recording.cancelled():
            recording.exception()  # retrieved: the journal has logged it

    async def _refusal(self, tool: ToolInfo | None, call: ToolCall) -> GateDecision | None:
        """A call refused before the gate: a tool not on offer (nothing to decide, no one is
        asked), arguments its schema refuses, or parameters the guardian blocks."""
        if tool is None:
            return _refused(self._not_offered(call.name))
        problem = self._arguments.problem(tool, call.arguments)
        return _refused(problem) if problem is not None else await self._guarded(call)

    def _trace_refusal(self, call: ToolCall, refusal: GateDecision) -> None:
        """In the decision trail, as the gate's decisions are: the audit export covers it."""
        if self.keep_trace is None:
            return
        by_policy = refusal.by.startswith("policy:")
        self.keep_trace(
            later_trace(
                session_id=self.session_id,
                agent_id=self.agent_id,
                tool=call.name,
                params=call.arguments,
                decision="deny",
                level="policy" if by_policy else "supervisor",
                resolved_by=refusal.by,
                reasoning=refusal.reason,
            )
        )

    async def _guarded(self, call: ToolCall) -> GateDecision | None:
        return await blocked_parameters(self.guardian, call)

    async def _screened(self, call: ToolCall, result: ToolResult) -> ToolResult:
        """A result as the client may see it (SessionResults.shown); flagged in the session's
        events if it reads like an injection."""
        if self.results is None:
            return result
        shown, flagged = await self.results.shown(call.id, call.name, result)
        if flagged is not None:
            self._record(flagged)
        return shown

    def _not_offered(self, name: str) -> str:
        """Why a tool that is not on offer cannot be called: a name the agent does not offer
        (unknown, misspelt, or a `manual` tool), or a tool whose server is down (restarted)."""
        server = self._server_of(name)
        if server is None or server.state == "running":
            return f"The gateway offers no tool named {name!r}: list the tools for their names."
        return f"Tool {name!r} is unavailable: MCP server {server.name!r} is {server.state}." + (
            self._restarting_note(server)
        )

    def _server_of(self, name: str) -> ServerStatus | None:
        servers = [s for s in self.host.statuses() if name.startswith(f"{s.name}.")]
        return max(servers, key=lambda server: len(server.name), default=None)

    async def _run(self, call: ToolCall) -> ToolResult:
        """Run an allowed call; a server found down is restarted, its calls failing meanwhile."""
        result = await self.host.call(call.name, call.arguments)
        server = self._server_of(call.name)
        if not result.is_error or server is None or server.state in ("running", "starting"):
            return result
        return result.model_copy(update={"text": result.text + self._restarting_note(server)})

    def _restarting_note(self, server: ServerStatus) -> str:
        """Restart a server that is down (once at a time); what to tell the client meanwhile."""
        if server.state not in ("running", "starting") and server.name not in self._restarting:
            self._restarting[server.name] = asyncio.create_task(self._restart(server.name))
        return f" The gateway is restarting MCP server {server.name!r}: try again in a moment."

    async def _restart(self, server: str) -> None:
        try:
            await self.host.restart(server)
        finally:
            del self._restarting[server]

    async def aclose(self) -> None:
        await self.settle()
        for restarting in list(self._restarting.values()):
            restarting.cancel()
        if self.owns_host:
            await self.host.aclose()


async def blocked_parameters(
    guardian: GuardianSupervisor | None, call: ToolCall
) -> GateDecision | None:
    """The guardian's refusal of parameters holding blocked text, before anyone is asked.
    (Parameters are not masked: a tool needs them as they are.)"""
    if guardian is None or "request" not in guardian.directions:
        return None
    arguments = json.dumps(call.arguments, ensure_ascii=False)
    found = (await guardian.screened(arguments, masking=False)).blocked
    if not found:
        return None
    listed = ", ".join(repr(word) for word in found)
    reason = f"the parameters contain blocked text {listed}"
    return GateDecision(allowed=False, by=f"supervisor:{guardian.id}", reason=reason)


def _refused(reason: str) -> GateDecision:
    return GateDecision(allowed=False, by=GATEWAY, reason=reason)


def _offered(tool: ToolInfo) -> bool:
    return str(tool.include.value) in OFFERED
