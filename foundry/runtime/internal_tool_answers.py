"""What tsagent's internal `tools` server answers: the session's tools and their include modes.

A tool is named as tsagent names it, by its server (`serverName`, the agent's `mcpServers` key)
and its own name (`toolName`); Foundry's session knows it as `server.tool`. The answers are
tsagent's compact JSON; see internal_answers.py for what differs and why.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from foundry.agent.models import IncludeMode
from foundry.runtime.internal_answers import (
    INCLUDE_MODES,
    Handler,
    Place,
    ToolError,
    need_session,
    ranked,
    search_arguments,
)
from foundry.tools.catalog import ToolInfo, resolve_tool_settings


def _text(arguments: dict[str, Any], key: str) -> str:
    value = arguments.get(key)
    return value if isinstance(value, str) else ""


def _servers(place: Place) -> dict[str, list[ToolInfo]]:
    """The running servers' tools, server by server, in the order they are offered."""
    servers: dict[str, list[ToolInfo]] = {}
    for tool in place.tools():
        servers.setdefault(tool.server, []).append(tool)
    return servers


def _server(place: Place, name: str) -> list[ToolInfo]:
    tools = _servers(place).get(name)
    if tools is None:
        raise ToolError(f"Server '{name}' not found")
    return tools


def _in_context(place: Place, tool: ToolInfo) -> bool:
    return place.in_context("tool", tool.name, tool.include)


def _server_default(place: Place, server: str) -> str:
    config = place.agent().mcp_servers.get(server)
    if config is None or config.server_tool_defaults is None:
        return IncludeMode.ALWAYS.value  # Foundry's default, as resolve_tool_settings has it
    return config.server_tool_defaults.include.value


async def list_tools(place: Place, arguments: dict[str, Any]) -> Any:
    tools = [
        {"serverName": tool.server, "toolName": tool.tool, "description": tool.description}
        for tool in place.tools()
    ]
    return {"tools": tools}


async def get_tool(place: Place, arguments: dict[str, Any]) -> Any:
    server, name = _text(arguments, "serverName"), _text(arguments, "toolName")
    try:
        tools = _server(place, server)
        tool = next((tool for tool in tools if tool.tool == name), None)
        if tool is None:
            raise ToolError(f"Tool '{name}' not found in server '{server}'")
    except ToolError as error:
        raise ToolError(f"Error getting tool: {error}") from None
    return {
        "serverName": server,
        "toolName": tool.tool,
        "description": tool.description,
        "inputSchema": tool.parameters,
    }


async def list_context_tools(place: Place, arguments: dict[str, Any]) -> Any:
    need_session(place)
    included = [
        {"serverName": tool.server, "toolName": tool.tool}
        for tool in place.tools()
        if _in_context(place, tool)
    ]
    return {"tools": included}


def _named_tool(place: Place, server: str, name: str) -> ToolInfo | None:
    tools = _servers(place).get(server, [])
    return next((tool for tool in tools if tool.tool == name), None)


async def include_tool(place: Place, arguments: dict[str, Any]) -> Any:
    need_session(place)
    server, name = _text(arguments, "serverName"), _text(arguments, "toolName")
    tool = _named_tool(place, server, name)
    if tool is None:
        return {"success": False, "message": f"Tool '{server}:{name}' was not found"}
    if _in_context(place, tool):
        return {"success": False, "message": f"Tool '{server}:{name}' was already in context"}
    await place.set_included("tool", tool.name, True)
    return {"success": True, "message": f"Tool '{server}:{name}' included in context"}


async def exclude_tool(place: Place, arguments: dict[str, Any]) -> Any:
    need_session(place)
    server, name = _text(arguments, "serverName"), _text(arguments, "toolName")
    tool = _named_tool(place, server, name)
    if tool is None or not _in_context(place, tool):
        return {"success": False, "message": f"Tool '{server}:{name}' was not in context"}
    await place.set_included("tool", tool.name, False)
    return {"success": True, "message": f"Tool '{server}:{name}' excluded from context"}


def _mode(arguments: dict[str, Any]) -> str:
    mode = arguments.get("mode")
    if mode not in INCLUDE_MODES:
        raise ToolError(f"Invalid include mode: {mode}. Must be 'always', 'manual', or 'agent'")
    return str(mode)


def _configured(place: Place, server: str, what: str) -> None:
    if server not in place.agent().mcp_servers:
        raise ToolError(f"Error setting {what} include mode: Server '{server}' not found")


async def set_tool_include_mode(place: Place, arguments: dict[str, Any]) -> Any:
    mode = _mode(arguments)
    server, name = _text(arguments, "serverName"), _text(arguments, "toolName")
    _configured(place, server, "tool")
    await place.set_include_mode(server, name, mode)
    return {"success": True, "message": f"Tool '{server}:{name}' include mode set to '{mode}'"}


async def set_server_include_mode(place: Place, arguments: dict[str, Any]) -> Any:
    mode = _mode(arguments)
    server = _text(arguments, "name")
    _configured(place, server, "server")
    await place.set_include_mode(server, None, mode)
    return {"success": True, "message": f"Server '{server}' include mode set to '{mode}'"}


def _server_view(place: Place, name: str, tools: Sequence[ToolInfo]) -> dict[str, Any]:
    return {
        "name": name,
        "type": "mcp",
        "toolCount": len(tools),
        "serverDefault": _server_default(place, name),
    }


async def list_tool_servers(place: Place, arguments: dict[str, Any]) -> Any:
    servers = _servers(place)
    return {"servers": [_server_view(place, name, tools) for name, tools in servers.items()]}


async def get_tool_server(place: Place, arguments: dict[str, Any]) -> Any:
    name = _text(arguments, "name")
    try:
        tools = _server(place, name)
    except ToolError as error:
        raise ToolError(f"Error getting tool server: {error}") from None
    listed = [{"name": tool.tool, "description": tool.description} for tool in tools]
    return {**_server_view(place, name, tools), "tools": listed}


async def include_tool_server(place: Place, arguments: dict[str, Any]) -> Any:
    need_session(place)
    name = _text(arguments, "name")
    added = 0
    for tool in _server(place, name):
        if not _in_context(place, tool):
            await place.set_included("tool", tool.name, True)
            added += 1
    message = f"Server '{name}' included with {added} tools added to context"
    return {"success": True, "message": message}


async def exclude_tool_server(place: Place, arguments: dict[str, Any]) -> Any:
    need_session(place)
    name = _text(arguments, "name")
    removed = 0
    for tool in _servers(place).get(name, []):
        if _in_context(place, tool):
            await place.set_included("tool", tool.name, False)
            removed += 1
    message = f"Server '{name}' excluded with {removed} tools removed from context"
    return {"success": True, "message": message}


async def search_tools(place: Place, arguments: dict[str, Any]) -> Any:
    query, options = search_arguments(arguments)
    tools = list(place.tools())
    texts = [f"{tool.tool} {tool.description}" for tool in tools]
    agent = place.agent()
    results = []
    for tool, score in ranked(tools, texts, query, options):
        config = agent.mcp_servers.get(tool.server)
        mode = tool.include if config is None else resolve_tool_settings(config, tool.tool).include
        results.append(
            {
                "serverName": tool.server,
                "toolName": tool.tool,
                "description": tool.description,
                "inputSchema": tool.parameters,
                "includeMode": mode.value,
                "similarityScore": score,
            }
        )
    return results


TOOL_HANDLERS: dict[str, Handler] = {
    "listTools": list_tools,
    "getTool": get_tool,
    "listContextTools": list_context_tools,
    "includeTool": include_tool,
    "excludeTool": exclude_tool,
    "setToolIncludeMode": set_tool_include_mode,
    "listToolServers": list_tool_servers,
    "getToolServer": get_tool_server,
    "setServerIncludeMode": set_server_include_mode,
    "includeToolServer": include_tool_server,
    "excludeToolServer": exclude_tool_server,
    "searchTools": search_tools,
}
