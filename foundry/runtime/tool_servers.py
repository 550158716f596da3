"""ToolServers: the MCP servers an editor runs, and the calls a person tries on them, gated."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from foundry.agent.document import AgentDocument
from foundry.agent.models import McpServerConfig
from foundry.llm.base import ToolCall
from foundry.runtime.engine import Engine
from foundry.runtime.results import SessionResults, agent_guardian, session_results
from foundry.runtime.tool_session import blocked_parameters
from foundry.session.events import EventBody, ToolCallDecided, ToolCallFinished
from foundry.session.gate import ApprovalGate, GateDecision
from foundry.supervision.guardian import GuardianSupervisor
from foundry.supervision.results import guarding_results
from foundry.tools import ServerStatus, ToolHost, ToolResult, resolve_tool_settings
from foundry.tools.catalog import qualified_name
from foundry.tools.declared import forwarded, with_note
from foundry.tools.host import StatusListener

TRY_TITLE = "Try-it: Edit {agent}"  # the stored session of an editor's tried calls
CANCELLED = "Cancelled in the editor: the answer was ignored."


class TriedCall(BaseModel):
    """A call tried by hand: how the gate decided it (None: there was nothing to decide, its
    server is not running), what it gave back, and how long the server took (0 if not run)."""

    model_config = ConfigDict(frozen=True)

    decision: GateDecision | None
    result: ToolResult
    seconds: float = 0.0
    session_id: str | None = None  # the session it is recorded in

    @property
    def denied(self) -> bool:
        return self.decision is not None and not self.decision.allowed


@dataclass(frozen=True)
class _Supervision:
    """What a server's tried calls are judged by, built from the agent as the editor has it."""

    judged_by: str  # the parts of the agent it was built from
    gate: ApprovalGate
    guardian: GuardianSupervisor | None
    results: SessionResults


class ToolServers:
    """The servers of one editor: one ToolHost each, so that each starts with the settings it
    has in the editor, confined by the kernel as a chat's servers are, and only when asked to
    (a person pressed Start). A call tried on one is supervised as a gateway client's call is:
    the agent's guardian refuses blocked parameters, its approval gate decides (the policy,
    grants, the L1 supervisor, a person in the inbox; starting a server is not consent to every
    call), and the result is screened (secrets masked, an injection flagged, the session's rule
    of two following it). Every decision is traced, and every call recorded in one stored
    session per editor ("Try-it: Edit NAME"), so the audit holds it, masked.

    Every method runs on the engine's loop; statuses reach `on_status` on that thread."""

    def __init__(self, engine: Engine, on_status: StatusListener | None = None) -> None:
        self.engine = engine
        self._on_status = on_status
        self._hosts: dict[str, ToolHost] = {}
        self._session_id: str | None = None
        self._supervision: dict[str, _Supervision] = {}  # by server
        self._tries = 0

    @property
    def session_id(self) -> str | None:
        """The stored session of the calls tried so far (None before the first)."""
        return self._session_id

    async def start(self, name: str, config: McpServerConfig, base_dir: Path) -> ServerStatus:
        """(Re)start `name` with `config`; returns once it runs or has failed."""
        await self.stop(name)
        host = ToolHost({name: config}, base_dir, on_status=self._on_status)
        self._hosts[name] = host
        self._supervision.pop(name, None)
        await host.start()
        return host.statuses()[0]

    async def stop(self, name: str) -> None:
        host = self._hosts.get(name)  # kept after it stops: its error output stays readable
        if host is not None:
            await host.aclose()

    async def log_tail(self, name: str) -> str:
        host = self._hosts.get(name)
        return host.log_tail(name) if host is not None else ""

    async def try_call(
        self, document: AgentDocument, server: str, tool: str, arguments: dict[str, Any]
    ) -> TriedCall:
        """Decide the call as a chat of `document`'s agent would (the agent as the editor has
        it, unsaved edits too), run it only if allowed, and record both. A call that needs a
        person waits here for the approval in the inbox; cancelling stops the wait."""
        host = self._hosts.get(server)
        name = qualified_name(server, tool)
        offered = host.tool(name) if host is not None else None
        if host is None or offered is None:
            result = ToolResult(text=f"MCP server {server!r} is not running.", is_error=True)
            return TriedCall(decision=None, result=result)
        session_id = await self._session(document)
        supervision = await self._supervision_of(session_id, document, server, host)
        self._tries += 1
        shaped = forwarded(arguments, offered.parameters)  # as a chat's: undeclared, not sent
        call = ToolCall(id=f"try-{self._tries}", name=name, arguments=shaped.arguments)
        decision = await blocked_parameters(supervision.guardian, call) or (
            await supervision.gate.review(call, _permission_required(document, server, tool))
        )
        if decision.arguments is not None:  # the person edited them before approving
            call = call.model_copy(update={"arguments": decision.arguments})
        decided = ToolCallDecided(
            call=call,
            allowed=decision.allowed,
            by=decision.by,
            reason=decision.reason,
            confidence=decision.confidence,
        )
        await self._record(session_id, supervision, decided)
        result, seconds = await self._run(
            session_id, host, call, decision, supervision, shaped.note(name)
        )
        return TriedCall(decision=decision, result=result, seconds=seconds, session_id=session_id)

    async def _run(
        self,
        session_id: str,
        host: ToolHost,
        call: ToolCall,
        decision: GateDecision,
        supervision: _Supervision,
        note: str | None = None,
    ) -> tuple[ToolResult, float]:
        """Run an allowed call, screen its result and record how it ended (a denied one ends as
        its denial), with the `note` of what was not passed on."""
        started = time.perf_counter()
        try:
            if decision.allowed:
                ran = await host.call(call.name, call.arguments)
                result = await self._screened(session_id, supervision, call, ran)
            else:
                denied = f"The call to {call.name} was denied by {decision.by}: {decision.reason}"
                result = ToolResult(text=denied, is_error=True)
        except asyncio.CancelledError:
            result = ToolResult(text=CANCELLED, is_error=True)
            elapsed = time.perf_counter() - started
            await self._record(session_id, supervision, _finished(call, result, elapsed))
            raise
        seconds = time.perf_counter() - started if decision.allowed else 0.0
        if note is not None:
            result = result.model_copy(update={"text": with_note(result.text, note)})
        await self._record(session_id, supervision, _finished(call, result, seconds))
        return result, seconds

    async def _screened(
        self, session_id: str, supervision: _Supervision, call: ToolCall, result: ToolResult
    ) -> ToolResult:
        """The result as the person may see it and the store may keep it (masked; withheld
        if the guardian blocks it); a result that reads like an injection is flagged."""
        shown, flagged = await supervision.results.shown(call.id, call.name, result)
        if flagged is not None:
            await self._record(session_id, supervision, flagged)
        return shown

    async def _record(self, session_id: str, supervision: _Supervision, body: EventBody) -> None:
        supervision.results.apply(body)  # the rule of two follows the session's calls at once
        await self.engine.record(session_id, body)

    async def _session(self, document: AgentDocument) -> str:
        if self._session_id is None:
            assert document.agent is not None
            title = TRY_TITLE.format(agent=document.agent.metadata.name)
            self._session_id = await self.engine.open_try_session(document, title)
        return self._session_id

    async def _supervision_of(
        self, session_id: str, document: AgentDocument, server: str, host: ToolHost
    ) -> _Supervision:
        """The agent's guardian, result screen and gate for calls of `server`, built again when
        what they judge by changed in the editor (its supervisors, permissions or servers) or
        the server restarted."""
        assert document.agent is not None
        judged_by = document.agent.model_dump_json(
            include={"supervisors", "settings", "mcp_servers"}
        )
        kept = self._supervision.get(server)
        if kept is not None and kept.judged_by == judged_by:
            return kept
        guardian = agent_guardian(document)
        results = await asyncio.to_thread(
            session_results, document, host, guarding_results(guardian, "response")
        )
        gate = await self.engine.tool_gate(session_id, document, host, results)
        made = _Supervision(judged_by, gate, guardian, results)
        self._supervision[server] = made
        return made

    async def aclose(self) -> None:
        """Stop every server (the editor is closing)."""
        for name in list(self._hosts):
            await self.stop(name)


def _finished(call: ToolCall, result: ToolResult, seconds: float) -> ToolCallFinished:
    return ToolCallFinished(
        call_id=call.id,
        name=call.name,
        text=result.text,
        is_error=result.is_error,
        duration_s=seconds,
    )


def _permission_required(document: AgentDocument, server: str, tool: str) -> bool:
    """The tool's approval setting as the editor has it now (asks, when the server is gone)."""
    config = document.agent.mcp_servers.get(server) if document.agent is not None else None
    return resolve_tool_settings(config, tool).permission_required if config else True
