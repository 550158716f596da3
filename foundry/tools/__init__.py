"""MCP tools for agents: the servers that provide them and the settings that govern them."""

from foundry.tools.catalog import ToolInfo, ToolSettings, resolve_tool_settings
from foundry.tools.host import (
    ServerNotHostedError,
    ServerState,
    ServerStatus,
    ToolHost,
    ToolResult,
)

__all__ = [
    "ServerNotHostedError",
    "ServerState",
    "ServerStatus",
    "ToolHost",
    "ToolInfo",
    "ToolResult",
    "ToolSettings",
    "resolve_tool_settings",
]
