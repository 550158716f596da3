"""The tools an agent's MCP servers offer, with each tool's include mode and approval setting."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from foundry.agent.models import IncludeMode, LenientBool, McpServerBase

T = TypeVar("T")

_LENIENT_BOOL: TypeAdapter[bool] = TypeAdapter(LenientBool)


class ToolSettings(BaseModel):
    """How one tool is offered to the model and whether its calls ask for approval."""

    model_config = ConfigDict(frozen=True)

    include: IncludeMode = IncludeMode.ALWAYS
    permission_required: bool = True


class ToolInfo(BaseModel):
    """One tool of a running MCP server, named `server.tool` for the model."""

    model_config = ConfigDict(frozen=True)

    name: str
    server: str
    tool: str
    description: str
    parameters: dict[str, Any]
    include: IncludeMode
    permission_required: bool
    # the tool's entry of the server's `tools/list` as it was sent (MCP's wire names:
    # `inputSchema`, `annotations.readOnlyHint`, `_meta`), empty for a tool of Foundry's own
    listed: dict[str, Any] = Field(default_factory=dict)

    @property
    def title(self) -> str | None:
        title = self.listed.get("title")
        return title if isinstance(title, str) else None

    @property
    def annotations(self) -> dict[str, Any]:
        """The server's hints about the tool (`readOnlyHint`, `destructiveHint`,
        `idempotentHint`, `openWorldHint`, `title`), as it sent them: claims, not facts."""
        annotations = self.listed.get("annotations")
        return annotations if isinstance(annotations, dict) else {}

    @property
    def output_schema(self) -> dict[str, Any] | None:
        schema = self.listed.get("outputSchema")
        return schema if isinstance(schema, dict) else None

    def definition(self) -> dict[str, Any]:
        """What a person trusts of the tool and Foundry pins (tool_pins.py): its name, title,
        description, input and output schemas and annotations, in `tools/list`'s shape."""
        pinned = ("title", "outputSchema", "annotations")
        shown: dict[str, Any] = {"name": self.tool, "description": self.description}
        shown["inputSchema"] = self.parameters
        shown.update({key: self.listed[key] for key in pinned if key in self.listed})
        return shown


def qualified_name(server: str, tool: str) -> str:
    """The name the model calls a server's tool by."""
    return f"{server}.{tool}"


def resolve_tool_settings(server: McpServerBase, tool: str) -> ToolSettings:
    """The tool's settings, most specific first.

    Order: the tool's entry in `tools`, the legacy tsagent per-tool entry, the values written in
    `serverToolDefaults`, the legacy tsagent `serverDefault`, then the built-in defaults.
    """
    include = _most_specific(server, tool, "include", "toolInclude", _as_include_mode)
    permission = _most_specific(
        server, tool, "permission_required", "toolPermissionRequired", _as_bool
    )
    defaults = ToolSettings()
    return ToolSettings(
        include=defaults.include if include is None else include,
        permission_required=defaults.permission_required if permission is None else permission,
    )


def _most_specific(
    server: McpServerBase,
    tool: str,
    field: str,
    legacy_key: str,
    parse: Callable[[Any], T | None],
) -> T | None:
    legacy = _legacy_section(server, legacy_key)
    legacy_tools = legacy.get("tools")
    override = server.tools.get(tool)
    defaults = server.server_tool_defaults
    written_default = defaults is not None and field in defaults.model_fields_set
    candidates = (
        parse(getattr(override, field, None)),
        parse(legacy_tools.get(tool)) if isinstance(legacy_tools, dict) else None,
        parse(getattr(defaults, field)) if written_default else None,
        parse(legacy.get("serverDefault")),
        parse(getattr(defaults, field, None)),
    )
    return next((value for value in candidates if value is not None), None)


def _legacy_section(server: McpServerBase, key: str) -> dict[str, Any]:
    section = (server.model_extra or {}).get(key)
    return section if isinstance(section, dict) else {}


def _as_bool(value: Any) -> bool | None:
    if value is None:
        return None
    try:
        return _LENIENT_BOOL.validate_python(value)
    except ValidationError:
        return None


def _as_include_mode(value: Any) -> IncludeMode | None:
    try:
        return IncludeMode(value)
    except ValueError:
        return None
