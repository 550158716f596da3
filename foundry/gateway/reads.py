"""The resources and prompts of the agent's servers as the gateway offers them, read-only: listed
with the server's name before each name (as tools are), a resource read or a prompt got only as a
call the gate decides (`SERVER.read_resource` with its `uri`, `SERVER.get_prompt` with `name` and
`arguments`). Subscriptions to resources are not offered."""

from __future__ import annotations

from typing import Any

import mcp.types as mcp_types
from mcp.shared.exceptions import MCPError
from mcp.shared.uri_template import InvalidUriTemplate, UriTemplate

from foundry.gateway.passthrough import error_as_sent, exposed
from foundry.tools.host import ServerItem, ToolHost, ToolResult

RESOURCE_NOT_FOUND = -32002  # the spec's code for a resource no server has
Prompts = dict[str, tuple[str, str]]  # the exposed name of each prompt: (server, its name)


def _named(items: list[ServerItem]) -> list[dict[str, Any]]:
    names = exposed((entry.server, str(entry.item.get("name", ""))) for entry in items)
    return [{**entry.item, "name": name} for entry, name in zip(items, names, strict=True)]


async def resources(host: ToolHost) -> mcp_types.ListResourcesResult:
    listed = _named(await host.offered("resources"))
    return mcp_types.ListResourcesResult.model_validate({"resources": listed})


async def resource_templates(host: ToolHost) -> mcp_types.ListResourceTemplatesResult:
    listed = _named(await host.offered("resourceTemplates"))
    return mcp_types.ListResourceTemplatesResult.model_validate({"resourceTemplates": listed})


async def prompts(host: ToolHost) -> tuple[mcp_types.ListPromptsResult, Prompts]:
    """The prompts on offer, and which server's prompt each exposed name is."""
    items = await host.offered("prompts")
    listed = _named(items)
    names = {
        shown["name"]: (entry.server, str(entry.item.get("name", "")))
        for shown, entry in zip(listed, items, strict=True)
    }
    return mcp_types.ListPromptsResult.model_validate({"prompts": listed}), names


async def resource_server(host: ToolHost, uri: str) -> str:
    """The server a resource is read from: the one that lists it, else the one whose template
    it fits, else the only server with resources. Two that could serve it, or none, is an error
    (the gateway never guesses whose content a client gets)."""
    listed = await host.offered("resources")
    candidates = {entry.server for entry in listed if entry.item.get("uri") == uri}
    if not candidates:
        templates = await host.offered("resourceTemplates")
        candidates = {entry.server for entry in templates if _fits(entry.item, uri)}
    if not candidates:
        candidates = {entry.server for entry in listed}
    if len(candidates) == 1:
        return candidates.pop()
    servers = ", ".join(sorted(candidates)) or "none of the agent's servers"
    message = f"Resource {uri!r} is not one the gateway can read: it could be from {servers}"
    raise MCPError(RESOURCE_NOT_FOUND, message, {"uri": uri})


def _fits(template: dict[str, Any], uri: str) -> bool:
    try:
        return UriTemplate.parse(str(template.get("uriTemplate", ""))).match(uri) is not None
    except InvalidUriTemplate:
        return False


def read_result(result: ToolResult) -> mcp_types.ReadResourceResult:
    """A read's result as resources/read answers it; a denial or failure is a JSON-RPC error
    whose message says why."""
    _raise_unless_read(result)
    contents = [block["resource"] for block in result.content if block.get("type") == "resource"]
    if not contents:
        raise MCPError(mcp_types.INTERNAL_ERROR, result.text)
    return mcp_types.ReadResourceResult.model_validate({"contents": contents, "_meta": result.meta})


def prompt_result(result: ToolResult) -> mcp_types.GetPromptResult:
    """A prompt's result as prompts/get answers it (its messages as supervision left them)."""
    _raise_unless_read(result)
    if result.structured is None or "messages" not in result.structured:
        raise MCPError(mcp_types.INTERNAL_ERROR, result.text)
    return mcp_types.GetPromptResult.model_validate({**result.structured, "_meta": result.meta})


def _raise_unless_read(result: ToolResult) -> None:
    if result.error is not None:
        raise error_as_sent(result)
    if result.is_error:  # denied, withheld, or the server could not be reached
        raise MCPError(mcp_types.INVALID_REQUEST, result.text)
