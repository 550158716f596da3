"""ToolServers: the MCP servers an editor runs, and the calls a person tries on them, gated."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from foundry.agent.document import AgentDocument
from foundry.agent.models import McpServerConfig
from foundry.llm.base import ToolCall
from foundry.runtime.engine import Engine
from foundry.session.events import ToolCallDecided, ToolCallFinished
from foundry.session.gate import ApprovalGate, GateDecision
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


class ToolServers:
    """The servers of one editor: one ToolHost each, so that each starts with the settings it
    has in the editor, confined by the kernel as a chat's servers are, and only when asked to
    (a person pressed Start). A call tried on one goes through the agent's approval gate as a
    chat's call does (the policy, grants, the L1 supervisor, a person in the inbox): starting
    a server is not consent to every call. Every decision is traced, and every call recorded
    in one stored session per editor ("Try-it: Edit NAME"), so the audit holds it.

    Every method runs on the engine's loop; statuses reach `on_status` on that thread."""

    def __init__(self, engine: Engine, on_status: StatusListener | None = None) -> None:
        self.engine = engine
        self._on_status = on_status
        self._hosts: dict[str, ToolHost] = {}
        self._session_id: str | None = None
        self._gates: dict[str, tuple[str, ApprovalGate]] = {}  # server: (built from, gate)
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
        self._gates.pop(name, None)
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
        gate = await self._gate(session_id, document, server, host)
        self._tries += 1
        shaped = forwarded(arguments, offered.parameters)  # as a chat's: undeclared, not sent
        call = ToolCall(id=f"try-{self._tries}", name=name, arguments=shaped.arguments)
        decision = await gate.review(call, _permission_required(document, server, tool))
        if decision.arguments is not None:  # the person edited them before approving
            call = call.model_copy(update={"arguments": decision.arguments})
        decided = ToolCallDecided(
            call=call,
            allowed=decision.allowed,
            by=decision.by,
            reason=decision.reason,
            confidence=decision.confidence,
        )
        await self.engine.record(session_id, decided)
        result, seconds = await self._run(session_id, host, call, decision, shaped.note(name))
        return TriedCall(decision=decision, result=result, seconds=seconds, session_id=session_id)

    async def _run(
        self,
        session_id: str,
        host: ToolHost,
        call: ToolCall,
        decision: GateDecision,
        note: str | None = None,
    ) -> tuple[ToolResult, float]:
        """Run an allowed call and record how it ended (a denied one ends as its denial), with
        the `note` of what was not passed on."""
        started = time.perf_counter()
        try:
            if decision.allowed:
                result = await host.call(call.name, call.arguments)
            else:
                denied = f"The call to {call.name} was denied by {decision.by}: {decision.reason}"
                result = ToolResult(text=denied, is_error=True)
        except asyncio.CancelledError:
            result = ToolResult(text=CANCELLED, is_error=True)
            await self._finished(session_id, call, result, time.perf_counter() - started)
            raise
        seconds = time.perf_counter() - started if decision.allowed else 0.0
        if note is not None:
            result = result.model_copy(update={"text": with_note(result.text, note)})
        await self._finished(session_id, call, result, seconds)
        return result, seconds

    async def _finished(
        self, session_id: str, call: ToolCall, result: ToolResult, seconds: float
    ) -> None:
        finished = ToolCallFinished(
            call_id=call.id,
            name=call.name,
            text=result.text,
            is_error=result.is_error,
            duration_s=seconds,
        )
        await self.engine.record(session_id, finished)

    async def _session(self, document: AgentDocument) -> str:
        if self._session_id is None:
            assert document.agent is not None
            title = TRY_TITLE.format(agent=document.agent.metadata.name)
            self._session_id = await self.engine.open_try_session(document, title)
        return self._session_id

    async def _gate(
        self, session_id: str, document: AgentDocument, server: str, host: ToolHost
    ) -> ApprovalGate:
        """The agent's gate for calls of `server`, built again when what it judges by changed
        in the editor (its supervisors, permissions or servers) or the server restarted."""
        assert document.agent is not None
        judged_by = document.agent.model_dump_json(
            include={"supervisors", "settings", "mcp_servers"}
        )
        kept = self._gates.get(server)
        if kept is not None and kept[0] == judged_by:
            return kept[1]
        gate = await self.engine.tool_gate(session_id, document, host)
        self._gates[server] = (judged_by, gate)
        return gate

    async def aclose(self) -> None:
        """Stop every server (the editor is closing)."""
        for name in list(self._hosts):
            await self.stop(name)


def _permission_required(document: AgentDocument, server: str, tool: str) -> bool:
    """The tool's approval setting as the editor has it now (asks, when the server is gone)."""
    config = document.agent.mcp_servers.get(server) if document.agent is not None else None
    return resolve_tool_settings(config, tool).permission_required if config else True
