"""What the gateway passes on from the agent's servers to a client as they sent it: tool entries,
results (every content block, structured content, `_meta`), JSON-RPC errors, and, during a call,
progress, log messages and questions for the user (elicitation)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import mcp.types as mcp_types
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata

from foundry.tools.catalog import ToolInfo
from foundry.tools.host import CallListener, ToolResult, content_text

MAX_NAME = 64  # what the strictest clients accept: ^[a-zA-Z0-9_-]{1,64}$
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def exposed(named: Iterable[tuple[str, str]]) -> list[str]:
    """The names clients are offered things of the agent's servers by, one for each (server,
    name): `server__name`, only letters, digits, `_` and `-`, at most 64 characters, unique."""
    names: list[str] = []
    taken: set[str] = set()
    for server, name in named:
        base = _UNSAFE.sub("_", f"{server}__{name}")[:MAX_NAME]
        shown, number = base, 2
        while shown in taken:
            suffix = f"-{number}"
            shown, number = base[: MAX_NAME - len(suffix)] + suffix, number + 1
        names.append(shown)
        taken.add(shown)
    return names


def offered_tool(exposed: str, tool: ToolInfo) -> mcp_types.Tool:
    """The server's `tools/list` entry for the tool, under the name the gateway exposes it by."""
    if not tool.listed:  # a tool of Foundry's own
        schema = tool.parameters
        schema = schema if schema.get("type") == "object" else {"type": "object", **schema}
        return mcp_types.Tool(
            name=exposed, description=tool.description or None, input_schema=schema
        )
    return mcp_types.Tool.model_validate({**tool.listed, "name": exposed})


def client_result(result: ToolResult) -> mcp_types.CallToolResult:
    """The result as the client receives it; a server's JSON-RPC error is raised as that error.

    The content blocks are the server's unless the text was changed after it sent them (a note
    of what was not passed on is added as a text block of its own; a text replaced, by masking or
    withholding, replaces the blocks: what the model would read is what the client gets)."""
    if result.error is not None:
        raise error_as_sent(result)
    return mcp_types.CallToolResult.model_validate(
        {
            "content": _blocks(result),
            "structuredContent": result.structured,
            "isError": result.is_error,
            "_meta": result.meta,
        }
    )


def error_as_sent(result: ToolResult) -> MCPError:
    """The server's JSON-RPC error; if supervision masked its message in the result's text, the
    text is the message (and the data, unscreened, is not passed on)."""
    error = result.error
    assert error is not None
    if error.message in result.text:
        return MCPError(error.code, error.message, error.data)
    return MCPError(error.code, result.text)


def _blocks(result: ToolResult) -> list[dict[str, Any]]:
    text_block = {"type": "text", "text": result.text}
    if not result.content:
        return [text_block]
    sent = content_text(result.content)
    if result.text == sent:
        return list(result.content)
    if result.text.startswith(sent):
        return [*result.content, {"type": "text", "text": result.text[len(sent) :].lstrip("\n")}]
    return [text_block]


class CallerRelay:
    """The listener of one client request: what the servers say while it runs reaches that client
    (progress only if it asked for it with a progressToken, questions only if it can ask)."""

    def __init__(self, ctx: Any) -> None:
        self._ctx = ctx
        self._reported = 0.0  # the highest progress the client was told, the gateway's own too
        self._offset: float | None = None  # added to the server's, fixed at its first report

    def listener(self) -> CallListener:
        wants_progress = (self._ctx.meta or {}).get("progress_token") is not None
        return CallListener(
            progress=self._progress if wants_progress else None,
            log=self._log,
            elicit=self._elicit if _can_ask(self._ctx, "form", "url") else None,
        )

    async def waiting(self, waited: float) -> None:
        """The gateway's own progress while the call waits (for a person, say)."""
        if self._offset is not None:
            return  # the server reports its own progress now
        self._reported = waited
        message = f"waiting for the decision ({waited:g} s)"
        await self._ctx.session.report_progress(waited, None, message)

    async def _progress(self, progress: float, total: float | None, message: str | None) -> None:
        """The server's progress as it sent it; if it starts at or below what the gateway
        reported while waiting, counted on from there (progress must only grow for a token)."""
        if self._offset is None:
            self._offset = self._reported if progress <= self._reported else 0.0
        self._reported = self._offset + progress
        shifted_total = None if total is None else self._offset + total
        await self._ctx.session.report_progress(self._reported, shifted_total, message)

    async def _log(self, params: mcp_types.LoggingMessageNotificationParams) -> None:
        notification = mcp_types.LoggingMessageNotification(params=params)
        await self._ctx.session.send_notification(notification, self._ctx.request_id)

    async def _elicit(self, params: mcp_types.ElicitRequestParams) -> mcp_types.ElicitResult:
        mode = "url" if isinstance(params, mcp_types.ElicitRequestURLParams) else "form"
        if not _can_ask(self._ctx, mode):
            return mcp_types.ElicitResult(action="decline")
        result: mcp_types.ElicitResult = await self._ctx.session.send_request(
            mcp_types.ElicitRequest(params=params),
            mcp_types.ElicitResult,
            metadata=ServerMessageMetadata(related_request_id=self._ctx.request_id),
        )
        return result


def _can_ask(ctx: Any, *modes: str) -> bool:
    """Whether the client said it can ask its user in one of these modes (an elicitation
    capability naming neither mode is the form mode, as the spec's first version had it)."""
    params = getattr(ctx.session, "client_params", None)
    capability = getattr(getattr(params, "capabilities", None), "elicitation", None)
    if capability is None:
        return False
    if capability.form is None and capability.url is None:
        return "form" in modes
    declared = {"form": capability.form, "url": capability.url}
    return any(declared.get(mode) is not None for mode in modes)
