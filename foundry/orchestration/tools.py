"""Tools a task gives its agents, in process: the workspace's files, and a team to delegate to.

They are offered and called like MCP tools (`server.tool` names, a JSON schema each) and every
call still passes the session's approval gate.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from foundry.agent.models import IncludeMode
from foundry.orchestration.confined import ConfinedFolder, WorkspaceError
from foundry.orchestration.validation import IGNORED_PARTS
from foundry.tools.catalog import ToolInfo
from foundry.tools.host import ToolResult

Handler = Callable[[dict[str, Any]], Awaitable[ToolResult]]
MAX_READ_CHARS = 20_000
# The kind of server each source of in-process tools is, for the rules written for a kind: the
# workspace's file tools take paths relative to the workspace, inside it, as the reference
# filesystem server rooted there does (and ConfinedFolder holds them to it).
IN_PROCESS_KINDS = {"workspace": "filesystem"}


@dataclass(frozen=True)
class LocalTool:
    info: ToolInfo
    handler: Handler
    unlimited: bool = False  # no time limit: a delegated worker takes as long as its turn


def local_tool(
    server: str,
    tool: str,
    description: str,
    properties: dict[str, Any],
    handler: Handler,
    permission_required: bool = False,
    unlimited: bool = False,
) -> LocalTool:
    info = ToolInfo(
        name=f"{server}.{tool}",
        server=server,
        tool=tool,
        description=description,
        parameters={"type": "object", "properties": properties, "required": list(properties)},
        include=IncludeMode.ALWAYS,
        permission_required=permission_required,
    )
    return LocalTool(info, handler, unlimited)


class LocalTools:
    """A tool source of in-process tools; several sources combine with `CombinedTools`."""

    def __init__(self, tools: Sequence[LocalTool]) -> None:
        self._tools = {tool.info.name: tool for tool in tools}

    def tools(self) -> list[ToolInfo]:
        return [tool.info for tool in self._tools.values()]

    async def call(
        self, name: str, arguments: dict[str, Any], timeout_s: float = 60.0
    ) -> ToolResult:
        tool = self._tools.get(name)
        if tool is None:
            return ToolResult(text=f"There is no tool named {name}.", is_error=True)
        limit = None if tool.unlimited else timeout_s
        try:
            return await asyncio.wait_for(tool.handler(arguments), limit)
        except TimeoutError:
            return ToolResult(
                text=f"{name} ran over {timeout_s:g} s and was stopped.", is_error=True
            )
        except Exception as error:  # a tool never raises into the session: the model reads it
            return ToolResult(text=f"{name} failed: {error}", is_error=True)

    async def aclose(self) -> None:
        return None


class CombinedTools:
    """The tools of several sources as one (the agent's MCP servers and a task's own tools)."""

    def __init__(self, *sources: Any) -> None:
        self._sources = sources

    def tools(self) -> list[Any]:
        return [tool for source in self._sources for tool in source.tools()]

    async def call(self, name: str, arguments: dict[str, Any], timeout_s: float = 60.0) -> Any:
        for source in self._sources:
            if any(tool.name == name for tool in source.tools()):
                return await source.call(name, arguments, timeout_s)
        return ToolResult(text=f"There is no tool named {name}.", is_error=True)

    async def aclose(self) -> None:
        for source in self._sources:
            await source.aclose()


# -- the workspace --------------------------------------------------------------------------------


def in_thread(handler: Callable[[dict[str, Any]], ToolResult]) -> Handler:
    """A blocking handler (file work) run on a worker thread, off the engine's loop; a path the
    workspace refuses is a tool result that says why."""

    def guarded(arguments: dict[str, Any]) -> ToolResult:
        try:
            return handler(arguments)
        except WorkspaceError as error:
            return ToolResult(text=str(error), is_error=True)

    async def run(arguments: dict[str, Any]) -> ToolResult:
        return await asyncio.to_thread(guarded, arguments)

    return run


def workspace_tools(root: Path) -> LocalTools:
    """List, read and write files inside `root`; writing asks for approval where the agent's
    permission setting says so. Paths are checked again as they are opened (ConfinedFolder):
    whatever was decided before, nothing outside `root` is read, written or listed."""
    folder = ConfinedFolder(root)
    path_property = {"path": {"type": "string", "description": "a path relative to the workspace"}}

    def list_files(arguments: dict[str, Any]) -> ToolResult:
        files = folder.files(IGNORED_PARTS)
        return ToolResult(text="\n".join(files) or "(the workspace is empty)", is_error=False)

    def read_file(arguments: dict[str, Any]) -> ToolResult:
        try:
            text = folder.read_text(str(arguments["path"]), MAX_READ_CHARS)
        except FileNotFoundError:
            return ToolResult(text=f"There is no file {arguments['path']}.", is_error=True)
        return ToolResult(text=text, is_error=False)

    def write_file(arguments: dict[str, Any]) -> ToolResult:
        content = str(arguments.get("content", ""))
        folder.write_text(str(arguments["path"]), content)
        return ToolResult(
            text=f"Wrote {len(content)} characters to {arguments['path']}.", is_error=False
        )

    return LocalTools(
        [
            local_tool(
                "workspace", "list_files", "List the workspace's files.", {}, in_thread(list_files)
            ),
            local_tool(
                "workspace",
                "read_file",
                "Read a file of the workspace.",
                path_property,
                in_thread(read_file),
            ),
            local_tool(
                "workspace",
                "write_file",
                "Create or replace a file of the workspace with the given content.",
                {**path_property, "content": {"type": "string"}},
                in_thread(write_file),
                permission_required=True,
            ),
        ]
    )


# -- a team ---------------------------------------------------------------------------------------

RunWorker = Callable[[str, str], Awaitable[str]]


class TeamTools(LocalTools):
    """`delegate(worker, instructions)` runs a worker to the end and returns its answer;
    `forward_message(worker)` makes the worker's last answer the final answer, word for word.
    Workers can be added and removed between runs."""

    def __init__(self, workers: dict[str, str], run_worker: RunWorker) -> None:
        self.workers = dict(workers)  # name -> description
        self._run_worker = run_worker
        self.answers: dict[str, str] = {}
        super().__init__([])
        self._rebuild()

    def add_worker(self, name: str, description: str = "") -> None:
        self.workers[name] = description
        self._rebuild()

    def remove_worker(self, name: str) -> None:
        self.workers.pop(name, None)
        self._rebuild()

    def _rebuild(self) -> None:
        names = {"type": "string", "enum": sorted(self.workers)}
        self._tools = {
            tool.info.name: tool
            for tool in (
                local_tool(
                    "team",
                    "delegate",
                    "Give a worker instructions; returns the worker's final answer.",
                    {"worker": names, "instructions": {"type": "string"}},
                    self._delegate,
                    unlimited=True,
                ),
                local_tool(
                    "team",
                    "forward_message",
                    "Return a worker's last answer, word for word, as your final answer.",
                    {"worker": names},
                    self._forward,
                ),
            )
        }

    async def _delegate(self, arguments: dict[str, Any]) -> ToolResult:
        worker = str(arguments["worker"])
        if worker not in self.workers:
            return ToolResult(
                text=f"There is no worker {worker!r}; there are {', '.join(self.workers)}.",
                is_error=True,
            )
        answer = await self._run_worker(worker, str(arguments.get("instructions", "")))
        self.answers[worker] = answer
        return ToolResult(text=answer, is_error=False)

    async def _forward(self, arguments: dict[str, Any]) -> ToolResult:
        worker = str(arguments["worker"])
        if worker not in self.answers:
            return ToolResult(
                text=f"{worker} has not answered yet; delegate to it first.", is_error=True
            )
        return ToolResult(text=self.answers[worker], is_error=False, final=True)
