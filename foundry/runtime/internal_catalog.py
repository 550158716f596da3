"""The tools of tsagent's internal servers (`type: internal`), as tsagent 1.3.6 lists them.

Names, descriptions and input schemas are tsagent's own, so that an agent written for tsagent
(its prompts, its per-tool settings under `mcpServers.NAME.tools`) finds the tools it expects.
The annotations are Foundry's: tsagent sends none, and the default policy tells reads from
writes by them and by the server's kind (`internal-rules`, ...: tools/identity.py).
"""

from __future__ import annotations

from typing import Any, Literal

from mcp import types as mcp_types

InternalKind = Literal["rules", "references", "tools", "supervision"]
INTERNAL_KINDS: tuple[InternalKind, ...] = ("rules", "references", "tools", "supervision")
SERVER_NAMES: dict[InternalKind, str] = {
    "rules": "Rules",
    "references": "References",
    "tools": "internal-tools",
    "supervision": "Supervision",
}

# what a call does, for its annotations: reads; changes to the session's context only (undone
# by the opposite call); changes to the agent's files (a person sees and can undo them)
Effect = Literal["read", "context", "agent", "removal"]
EFFECTS: dict[Effect, dict[str, bool]] = {
    "read": {"readOnlyHint": True, "openWorldHint": False},
    "context": {
        "readOnlyHint": False,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": False,
    },
    "agent": {"readOnlyHint": False, "destructiveHint": True, "openWorldHint": False},
    "removal": {"readOnlyHint": False, "destructiveHint": True, "openWorldHint": False},
}
INCLUDE_MODES = ["always", "manual", "agent"]
_NOTHING: dict[str, Any] = {"type": "object", "properties": {}, "required": []}


def _tool(name: str, description: str, schema: dict[str, Any], effect: Effect) -> mcp_types.Tool:
    annotations = mcp_types.ToolAnnotations(**EFFECTS[effect])
    return mcp_types.Tool(
        name=name, description=description, input_schema=schema, annotations=annotations
    )


def _string(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


def _by_name(description: str) -> dict[str, Any]:
    return {"type": "object", "properties": {"name": _string(description)}, "required": ["name"]}


def search_schema(matched: str) -> dict[str, Any]:
    """The arguments of tsagent's `search*` tools."""
    return {
        "type": "object",
        "properties": {
            "query": _string(f"Search query text to match against {matched}"),
            "topK": {
                "type": "number",
                "description": "Maximum embedding matches to consider before grouping "
                "(default: 20)",
                "minimum": 1,
            },
            "topN": {
                "type": "number",
                "description": "Target number of results to return after grouping (default: 5)",
                "minimum": 1,
            },
            "includeScore": {
                "type": "number",
                "description": "Always include items with this cosine similarity score or "
                "higher (default: 0.7)",
                "minimum": 0,
                "maximum": 1,
            },
        },
        "required": ["query"],
        "additionalProperties": False,
    }


def item_tools(noun: str, does: str) -> tuple[mcp_types.Tool, ...]:
    """The tools of the `rules` or `references` server: `noun` is "rule" or "reference", `does`
    what tsagent says its description tells ("does", "contains")."""
    title = noun.capitalize()
    plural = f"{title}s"
    include = {
        "type": "string",
        "description": f"How the {noun} should be included in sessions",
        "enum": INCLUDE_MODES,
    }
    priority = f"Priority level of the {noun} (000-999, higher numbers = higher priority)"
    create = {
        "type": "object",
        "properties": {
            "name": _string(
                f"Unique name for the {noun} (allowed characters: a-z, A-Z, 0-9, _, -)"
            ),
            "description": _string(f"Description of what the {noun} {does}"),
            "priorityLevel": {"type": "number", "description": priority, "default": 500},
            "include": {**include, "default": "manual"},
            "text": _string(f"The actual {noun} text"),
        },
        "required": ["name", "text"],
    }
    update = {
        "type": "object",
        "properties": {
            "name": _string(f"Name of the {noun} to update"),
            "description": _string(f"New description of what the {noun} {does}"),
            "priorityLevel": {"type": "number", "description": f"New p{priority[1:]}"},
            "text": _string(f"New {noun} text"),
            "include": include,
        },
        "required": ["name"],
    }
    return (
        _tool(f"create{title}", f"Create a new {noun}", create, "agent"),
        _tool(f"get{title}", f"Get a {noun} by name", _by_name(f"Name of the {noun} to retrieve"),
              "read"),
        _tool(f"update{title}", f"Update an existing {noun}", update, "agent"),
        _tool(f"delete{title}", f"Delete a {noun} by name",
              _by_name(f"Name of the {noun} to delete"), "removal"),
        _tool(f"include{title}", f"Include (add) a {noun} in the current chat session context",
              _by_name(f"Name of the {noun} to include / add"), "context"),
        _tool(f"exclude{title}",
              f"Exclude (remove) a {noun} from the current chat session context",
              _by_name(f"Name of the {noun} to exclude / remove"), "context"),
        _tool(f"list{plural}", f"Get all {noun}s", _NOTHING, "read"),
        _tool(f"listContext{plural}", f"List {noun}s currently in the chat session context",
              _NOTHING, "read"),
        _tool(f"search{plural}",
              f"Search {noun}s using semantic similarity and return matching items",
              search_schema(f"{noun} contents"), "read"),
    )  # fmt: skip


def _server_tool(**properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(properties)}


_SERVER = _string("Name of the server containing the tool")
_MODE = {"type": "string", "enum": INCLUDE_MODES, "description": "Include mode"}


def tool_tools() -> tuple[mcp_types.Tool, ...]:
    """The tools of the `tools` server: the session's tools and their include modes."""
    return (
        _tool("listTools", "Get all available tools", _NOTHING, "read"),
        _tool("getTool", "Get a specific tool by server name and tool name",
              _server_tool(serverName=_SERVER, toolName=_string("Name of the tool to retrieve")),
              "read"),
        _tool("listContextTools", "List tools currently in context", _NOTHING, "read"),
        _tool("includeTool", "Include a tool in the current session context",
              _server_tool(serverName=_SERVER, toolName=_string("Name of the tool to include")),
              "context"),
        _tool("excludeTool", "Exclude a tool from the current session context",
              _server_tool(serverName=_SERVER, toolName=_string("Name of the tool to exclude")),
              "context"),
        _tool("setToolIncludeMode", "Set the include mode for a tool",
              _server_tool(serverName=_SERVER, toolName=_string("Name of the tool"), mode=_MODE),
              "agent"),
        _tool("listToolServers", "List all available tool servers", _NOTHING, "read"),
        _tool("getToolServer", "Get information about a specific tool server",
              _server_tool(name=_string("Name of the server")), "read"),
        _tool("setServerIncludeMode", "Set the include mode for a tool server",
              _server_tool(name=_string("Name of the server"), mode=_MODE), "agent"),
        _tool("includeToolServer", "Include all tools from a server in the current session "
              "context", _server_tool(name=_string("Name of the server to include")), "context"),
        _tool("excludeToolServer", "Exclude all tools from a server from the current session "
              "context", _server_tool(name=_string("Name of the server to exclude")), "context"),
        _tool("searchTools", "Search tools using semantic similarity and return matching items",
              search_schema("tool names and descriptions"), "read"),
    )  # fmt: skip


SUPERVISION_TOOLS: tuple[tuple[str, str, Effect], ...] = (
    ("supervised_get_current_messages", "Get current messages in supervised session", "read"),
    ("supervised_get_current_rules", "Get currently active rules in supervised session", "read"),
    ("supervised_get_current_references",
     "Get currently active references in supervised session", "read"),
    ("supervised_get_available_tools", "Get available tools in supervised session", "read"),
    ("supervised_get_session_stats", "Get session statistics and metadata", "read"),
    ("supervised_listRules", "List all available rules in the supervised agent", "read"),
    ("supervised_listReferences", "List all available references in the supervised agent",
     "read"),
    ("supervised_listTools", "List all available tools in the supervised agent", "read"),
    ("supervised_block_message", "Block the current message from being processed", "context"),
    ("supervised_allow_message", "Allow the current message to proceed unchanged", "context"),
    ("supervised_request_human_review", "Request human review for the current message",
     "context"),
)  # fmt: skip
_REASON = _string("Reason for the decision")


def supervision_tools() -> tuple[mcp_types.Tool, ...]:
    """Tsagent's supervision tools that read the supervised session or decide about its
    message (those that edit its rules, references and tools are the other servers' tools,
    `supervised_` before their names): they act on the session an agent supervises."""
    tools = []
    for name, description, effect in SUPERVISION_TOOLS:
        decides = name in ("supervised_block_message", "supervised_allow_message",
                           "supervised_request_human_review")  # fmt: skip
        schema = _server_tool(reason=_REASON) if decides else _NOTHING
        tools.append(_tool(name, description, schema, effect))
    return tuple(tools)


def tools_of(kind: InternalKind) -> tuple[mcp_types.Tool, ...]:
    """What the internal server of `kind` lists."""
    if kind == "rules":
        return item_tools("rule", "does")
    if kind == "references":
        return item_tools("reference", "contains")
    if kind == "tools":
        return tool_tools()
    return supervision_tools()
