"""Tool calls for models without native tool calling, as JSON that a schema constrains."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Sequence
from typing import Any

import jsonschema
import referencing.exceptions

from foundry.llm.base import (
    ChatMessage,
    ChatRequest,
    Chunk,
    ProviderError,
    TextDelta,
    ToolCall,
    ToolCallChunk,
    ToolSpec,
    Usage,
)

REPLY = "reply"


def offered_tools(request: ChatRequest) -> tuple[ToolSpec, ...]:
    """The tools the model may call now: none right after a tool result, so that it answers
    with it; a turn makes one round of calls per user message and cannot loop."""
    return () if request.messages and request.messages[-1].role == "tool" else request.tools


def choice_schema(tools: Sequence[ToolSpec], reply: dict[str, Any] | None = None) -> dict[str, Any]:
    """One of: `{"TOOL NAME": arguments}` for each tool, or `{"reply": text}` (or `reply` the
    caller's schema). The tool's name as the key lets the model's first word pick it. Even
    without tools the reply is JSON: in plain text SmolLM2 imitates the calls it sees."""
    answer = reply if reply is not None else {"type": "string"}
    options = [_object({tool.name: _arguments_schema(tool)}) for tool in tools]
    return {"oneOf": [*options, _object({REPLY: answer})]}


def _object(properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(properties)}


def _arguments_schema(tool: ToolSpec) -> dict[str, Any]:
    """The tool's own schema, as an object even where the tool left the type out."""
    return {"type": "object", **tool.parameters}


def choice_hint(tools: Sequence[ToolSpec]) -> str:
    """The system prompt's part that names the tools and the JSON of a call. The call comes
    first and no example is given: SmolLM2 copies an example, and the first form shown wins."""
    lines = "\n".join(_tool_line(tool) for tool in tools)
    return (
        f"Tools you can call:\n{lines}\n\nWrite your answer as JSON. If one of the tools does "
        'what the user asks, call it: {"TOOL NAME": {ARGUMENTS}}. Otherwise reply in text: '
        '{"reply": "..."}.'
    )


def _tool_line(tool: ToolSpec) -> str:
    properties = tool.parameters.get("properties") or {}
    arguments = ", ".join(
        f"{name}: {spec.get('description', '')}".rstrip(": ")
        for name, spec in properties.items()
        if isinstance(spec, dict)
    )
    described = f"- {tool.name}: {tool.description.strip()}".rstrip(": ")
    return f"{described}. Arguments: {arguments}" if arguments else described


def choice_request(request: ChatRequest) -> ChatRequest:
    """The request as a model without tool support can take it: earlier calls and results as
    text, the tools it may call named in the system prompt, and the choice's schema."""
    tools = offered_tools(request)
    messages = tuple(_as_text(message) for message in request.messages)
    if tools:
        messages = _with_hint(messages, choice_hint(tools))
    schema = choice_schema(tools, request.response_schema)
    return request.model_copy(update={"messages": messages, "tools": (), "response_schema": schema})


def _as_text(message: ChatMessage) -> ChatMessage:
    """A tool call as the JSON the model writes for it; a tool result as a user message."""
    if message.role == "tool":
        tool = message.name or "the tool"
        return ChatMessage(role="user", content=f"Result of {tool}: {message.content}")
    if not message.tool_calls:
        return message
    calls = "\n".join(json.dumps({call.name: call.arguments}) for call in message.tool_calls)
    return ChatMessage(role="assistant", content="\n".join(filter(None, [message.content, calls])))


def _with_hint(messages: tuple[ChatMessage, ...], hint: str) -> tuple[ChatMessage, ...]:
    if messages and messages[0].role == "system":
        first = messages[0]
        return (first.model_copy(update={"content": f"{first.content}\n\n{hint}"}), *messages[1:])
    return (ChatMessage(role="system", content=hint), *messages)


_REPLY_START = re.compile(r'\s*\{\s*"reply"\s*:\s*"')


class ChoiceReader:
    """Turns the chunks of a constrained reply into the chunks of a native one: the reply's
    text as it streams, a tool call once its JSON is complete."""

    def __init__(self, tools: Sequence[ToolSpec]) -> None:
        self._tools = {tool.name: tool for tool in tools}
        self._text = ""
        self._reply: JsonStringStream | None = None

    def read(self, chunk: Chunk) -> list[Chunk]:
        if isinstance(chunk, TextDelta):
            return self._feed(chunk.text)
        if isinstance(chunk, Usage):
            out = self.finish()
            if any(isinstance(item, ToolCallChunk) for item in out):
                chunk = chunk.model_copy(update={"stop_reason": "tool_calls"})
            return [*out, chunk]
        return [chunk]

    def _feed(self, text: str) -> list[Chunk]:
        self._text += text
        if self._reply is None:
            start = _REPLY_START.match(self._text)
            if start is None:
                return []
            self._reply = JsonStringStream()
            text = self._text[start.end() :]
        shown = self._reply.feed(text)
        return [TextDelta(text=shown)] if shown else []

    def finish(self) -> list[Chunk]:
        """What the whole JSON says, once it is complete; raises ProviderError if it is not a
        reply or a call of one of the tools with valid arguments."""
        if self._reply is not None:
            return []  # streamed already; a reply cut short by max_tokens stays as it was
        value = self._parse()
        if REPLY in value:
            reply = value[REPLY]
            return [TextDelta(text=reply if isinstance(reply, str) else json.dumps(reply))]
        [(name, arguments)] = value.items()
        return [ToolCallChunk(call=self._call(name, arguments))]

    def _parse(self) -> dict[str, Any]:
        try:
            value = json.loads(self._text)
        except json.JSONDecodeError:
            raise ProviderError(
                "the model's tool call is not complete JSON (cut off by the token limit?): "
                f"{_start(self._text)}; raise maxOutputTokens or try again"
            ) from None
        if not isinstance(value, dict) or len(value) != 1:
            what = _start(self._text)
            raise ProviderError(f'the model answered neither {{"reply": ...}} nor one call: {what}')
        return value

    def _call(self, name: str, arguments: Any) -> ToolCall:
        tool = self._tools.get(name)
        if tool is None:
            offered = ", ".join(self._tools) or "none"
            raise ProviderError(f"the model called a tool it was not offered: {name!r} ({offered})")
        problem = _schema_problem(arguments, _arguments_schema(tool))
        if problem:
            raise ProviderError(
                f"the model's arguments for {name} do not fit its schema: {problem}"
            )
        return ToolCall(id=f"call_{uuid.uuid4().hex[:12]}", name=name, arguments=arguments)


def _schema_problem(value: Any, schema: dict[str, Any]) -> str | None:
    """What is wrong with `value` under `schema`; None if it fits (or the schema is unreadable,
    which the tool's server judges instead)."""
    try:
        kind = jsonschema.validators.validator_for(schema)
        kind.check_schema(schema)
        error = jsonschema.exceptions.best_match(kind(schema).iter_errors(value))
    except (jsonschema.exceptions.SchemaError, referencing.exceptions.Unresolvable):
        return None
    if error is None:
        return None
    where = "/".join(str(part) for part in error.absolute_path)
    return f"{where}: {error.message}" if where else error.message


def _start(text: str, limit: int = 120) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")


_PIECE = re.compile(
    r'[^"\\]+|"|\\["\\/bfnrt]'
    r"|\\u[dD][89abAB][0-9a-fA-F]{2}(?:\\u[dD][c-fC-F][0-9a-fA-F]{2})?"
    r"|\\u[0-9a-fA-F]{4}"
)
_ESCAPE_PREFIX = re.compile(r"\\(?:u[0-9a-fA-F]{0,3})?\Z")
_LOW_SURROGATE_PREFIX = re.compile(r"(?:\\(?:u(?:[dD](?:[c-fC-F][0-9a-fA-F]?)?)?)?)?\Z")


class JsonStringStream:
    """The characters of a JSON string as its text arrives in pieces (after the opening quote),
    up to the closing quote; an escape split between two pieces waits for the second."""

    def __init__(self) -> None:
        self._raw = ""
        self._read = 0
        self.closed = False

    def feed(self, text: str) -> str:
        self._raw += text
        out: list[str] = []
        while not self.closed and self._read < len(self._raw):
            piece = self._next_piece()
            if piece is None:
                break
            out.append(piece)
        return "".join(out)

    def _next_piece(self) -> str | None:
        match = _PIECE.match(self._raw, self._read)
        rest = self._raw[self._read :]
        if match is None:
            if _ESCAPE_PREFIX.match(rest):
                return None  # the escape's end is still to come
            self._read += 1  # not JSON: keep the character as it is
            return rest[0]
        piece = match.group()
        if _lone_high_surrogate(piece) and _LOW_SURROGATE_PREFIX.match(rest, len(piece)):
            return None  # its low half may still come
        self._read = match.end()
        if piece == '"':
            self.closed = True
            return ""
        return _decoded(piece) if piece.startswith("\\") else piece


def _lone_high_surrogate(piece: str) -> bool:
    return len(piece) == 6 and piece[2] in "dD" and piece[3] in "89abAB"


def _decoded(escape: str) -> str:
    text: str = json.loads(f'"{escape}"')
    return "".join("\ufffd" if "\ud800" <= char <= "\udfff" else char for char in text)
