"""The configuration snippet each MCP client needs to start the gateway."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

CLIENTS = ("claude-desktop", "cursor", "vscode", "claude-code")
SERVER_NAME = "foundry"


def foundry_command() -> str:
    """The absolute path of the `foundry` command that is running now."""
    if getattr(sys, "frozen", False):  # the packaged app: its one executable is the command
        return sys.executable
    invoked = Path(sys.argv[0])
    if invoked.name == "foundry" and invoked.exists():
        return str(invoked.resolve())
    return shutil.which("foundry") or str(Path(sys.executable).parent / "foundry")


def client_config(client: str, agent: Path, command: str | None = None) -> str:
    """The JSON to merge into `client`'s MCP configuration file."""
    entry: dict[str, Any] = {
        "command": command or foundry_command(),
        "args": ["gateway", str(agent.expanduser().resolve())],
    }
    if client == "vscode":  # .vscode/mcp.json
        document: dict[str, Any] = {"servers": {SERVER_NAME: {"type": "stdio", **entry}}}
    else:  # claude_desktop_config.json, ~/.cursor/mcp.json, .mcp.json (Claude Code)
        document = {"mcpServers": {SERVER_NAME: entry}}
    return json.dumps(document, indent=2)


CONFIG_FILES = {
    "claude-desktop": "claude_desktop_config.json (Settings > Developer > Edit Config)",
    "cursor": "~/.cursor/mcp.json, or .cursor/mcp.json in a project",
    "vscode": ".vscode/mcp.json in the workspace",
    "claude-code": ".mcp.json at the project root, or `claude mcp add-json foundry ENTRY`",
}
