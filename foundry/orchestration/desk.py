"""Talking to a task's agents: one chat session per agent, each message timed and recorded."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel

from foundry.orchestration.events import AgentAsked, AgentConsulted, Role
from foundry.orchestration.taskfile import TaskFile
from foundry.orchestration.tools import CombinedTools, workspace_tools
from foundry.session.events import Event, EventBody

Emit = Callable[..., Awaitable[None]]  # emit(body, once=False): record a task event


class SessionHost(Protocol):
    """What a task needs of the engine (which provides exactly this)."""

    bus: Any

    async def open_session(
        self,
        agent_path: Path,
        model: str | None = None,
        settings_overrides: dict[str, Any] | None = None,
        ask: Any = None,
        title: str = "",
        extra_tools: Any = None,
        project_root: Path | None = None,
    ) -> str: ...

    async def reopen_session(
        self,
        session_id: str,
        ask: Any = None,
        history: list[Event] | None = None,
        extra_tools: Any = None,
        project_root: Path | None = None,
    ) -> Any: ...

    def is_open(self, session_id: str) -> bool: ...

    async def send(
        self, session_id: str, text: str, response_schema: dict[str, Any] | None = None
    ) -> Any: ...

    async def record(self, session_id: str, body: EventBody) -> Event: ...

    async def close_session(self, session_id: str) -> None: ...


class Reply(BaseModel):
    """An agent's answer to one message of the task."""

    text: str = ""
    ok: bool = True
    error: str = ""
    session_id: str = ""


class AgentDesk:
    """Sends the task's messages: each agent (by role and name) keeps one session, opened with
    the workspace's tools and the workspace as its project, and reopened after a restart."""

    def __init__(self, host: SessionHost, task: TaskFile, emit: Emit, ask: Any = None) -> None:
        self.host = host
        self.task = task
        self.emit = emit
        self.ask = ask  # who approves tool calls that need a person (None: the approval inbox)
        self.sessions: dict[str, str] = {}  # role:agent -> chat session id
        self.live_sends = 0
        self.supervisor_calls = 0
        self._locks: dict[str, asyncio.Lock] = {}

    def agent_path(self, name: str) -> Path:
        spec = self.task.spec
        if name in ("supervisor", "helper"):
            relative = spec.supervisor if name == "supervisor" else spec.helper
            assert relative is not None
            return self.task.agent_path(relative)
        return self.task.agent_path(spec.operators[name])

    async def consult(
        self,
        role: Role,
        name: str,
        text: str,
        schema: dict[str, Any] | None = None,
        timeout_s: float | None = None,
        extra_tools: Any = None,
        agent_path: Path | None = None,
        key: str = "",
    ) -> Reply:
        """Send one message to one of the task's agents and wait (at most `timeout_s`). Each
        `key` (by default role:name) is one session; its messages go one at a time."""
        key = key or f"{role}:{name}"
        async with self._locks.setdefault(key, asyncio.Lock()):
            return await self._consult(
                role, name, text, schema, timeout_s, extra_tools, agent_path, key
            )

    async def _consult(
        self,
        role: Role,
        name: str,
        text: str,
        schema: dict[str, Any] | None,
        timeout_s: float | None,
        extra_tools: Any,
        agent_path: Path | None,
        key: str,
    ) -> Reply:
        path = agent_path or self.agent_path(name)
        workspace = workspace_tools(self.task.workspace)
        tools = workspace if extra_tools is None else CombinedTools(workspace, extra_tools)
        session_id = await self._session(key, path, tools)
        if role == "supervisor":
            self.supervisor_calls += 1
        self.live_sends += 1
        started = time.monotonic()
        label = path.name if name in ("supervisor", "helper") else name
        await self.emit(AgentAsked(role=role, agent=label, session_id=session_id))
        sending = asyncio.ensure_future(self.host.send(session_id, text, schema))
        try:
            done, _ = await asyncio.wait([sending], timeout=timeout_s)
        finally:
            if not sending.done():  # timed out, or the task was stopped: end the agent's turn
                sending.cancel()
        turn = (await asyncio.gather(sending, return_exceptions=True))[0]
        if isinstance(turn, BaseException):
            raise turn
        ended_by = turn.ended_by if done else "timeout"
        await self.emit(
            AgentConsulted(
                role=role,
                agent=label,
                session_id=session_id,
                prompt_chars=len(text),
                response_chars=len(turn.reply),
                model_calls=turn.model_calls,
                input_tokens=turn.input_tokens,
                output_tokens=turn.output_tokens,
                seconds=round(time.monotonic() - started, 3),
                ended_by=ended_by,
            )
        )
        if ended_by == "reply":
            return Reply(text=turn.reply, session_id=session_id)
        error = f"no answer within {timeout_s:g} s" if not done else turn.error
        error = error or f"the turn ended by {ended_by}"
        return Reply(text=turn.reply, ok=False, error=error, session_id=session_id)

    async def _session(self, key: str, path: Path, tools: Any) -> str:
        workspace = self.task.workspace
        known = self.sessions.get(key)
        if known and self.host.is_open(known):
            return known
        if known:
            await self.host.reopen_session(
                known, ask=self.ask, extra_tools=tools, project_root=workspace
            )
            return known
        title = f"{self.task.spec.name} · {key.replace(':', ' ')}"
        session_id = await self.host.open_session(
            path, ask=self.ask, title=title, extra_tools=tools, project_root=workspace
        )
        self.sessions[key] = session_id
        return session_id
