"""LiveServers: the editor's own runs of an agent's MCP servers, hosted on the engine's loop."""

from __future__ import annotations

import concurrent.futures
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal

from foundry.agent.models import McpServerConfig
from foundry.tools import ServerStatus, ToolHost
from foundry.tools.catalog import qualified_name
from foundry.tools.host import ToolResult
from foundry.ui.bridge import EngineBridge

NO_ENGINE = "Servers run on the engine: open the editor from the main window (Ctrl+E)."


@dataclass(frozen=True)
class TimedResult:
    """A tool's result and how long the call took, measured on the engine's loop."""

    result: ToolResult
    seconds: float


class LiveServers(QObject):
    """One ToolHost per server, so each starts with the settings it has in the editor.

    Every method that touches a host runs on the engine's loop (through the bridge); status
    changes arrive on that thread and reach the GUI as a queued signal.
    """

    status_changed = Signal(object)

    def __init__(self, bridge: EngineBridge | None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.bridge = bridge
        self._hosts: dict[str, ToolHost] = {}  # only touched on the engine's loop

    @property
    def available(self) -> bool:
        return self.bridge is not None

    async def start(self, name: str, config: McpServerConfig, base_dir: Path) -> ServerStatus:
        """(Re)start `name` with `config`; returns once it runs or has failed."""
        return await self._on_engine(self._start(name, config, base_dir))

    async def stop(self, name: str) -> None:
        await self._on_engine(self._stop(name))

    async def call(self, server: str, tool: str, arguments: dict[str, Any]) -> TimedResult:
        return await self._on_engine(self._call(server, tool, arguments))

    async def log_tail(self, name: str) -> str:
        return await self._on_engine(self._log_tail(name))

    async def stop_all(self) -> None:
        await self._on_engine(self._stop_all())

    def shutdown(self) -> concurrent.futures.Future[None] | None:
        """Stop every server on the engine's loop without waiting (the editor is closing)."""
        return self.bridge.engine.submit(self._stop_all()) if self.bridge is not None else None

    async def _on_engine(self, coroutine: Any) -> Any:
        if self.bridge is None:
            coroutine.close()
            raise RuntimeError(NO_ENGINE)
        return await self.bridge.call(coroutine)

    # -- on the engine's loop -------------------------------------------------------------------

    async def _start(self, name: str, config: McpServerConfig, base_dir: Path) -> ServerStatus:
        await self._stop(name)
        host = ToolHost({name: config}, base_dir, on_status=self.status_changed.emit)
        self._hosts[name] = host
        await host.start()
        return host.statuses()[0]

    async def _stop(self, name: str) -> None:
        host = self._hosts.get(name)  # kept after it stops: its error output stays readable
        if host is not None:
            await host.aclose()

    async def _call(self, server: str, tool: str, arguments: dict[str, Any]) -> TimedResult:
        host = self._hosts.get(server)
        if host is None:
            result = ToolResult(text=f"MCP server {server!r} is not running.", is_error=True)
            return TimedResult(result, 0.0)
        started = time.perf_counter()
        result = await host.call(qualified_name(server, tool), arguments)
        return TimedResult(result, time.perf_counter() - started)

    async def _log_tail(self, name: str) -> str:
        host = self._hosts.get(name)
        return host.log_tail(name) if host is not None else ""

    async def _stop_all(self) -> None:
        for name in list(self._hosts):
            await self._stop(name)
