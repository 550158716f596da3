"""The OpenAI chat wire format, which llama.cpp and OpenAI-compatible servers speak."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

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


def wire_name(name: str) -> str:
    """OpenAI-style APIs allow only letters, digits, `_` and `-` in tool names: `server.tool` is
    sent as `server__tool`."""
    return name.replace(".", "__")


def tool_names(request: ChatRequest) -> dict[str, str]:
    """Wire name -> Foundry name of the tools offered in a request."""
    return {wire_name(tool.name): tool.name for tool in request.tools}


def openai_messages(messages: Sequence[ChatMessage], rename: bool = False) -> list[dict[str, Any]]:
    """Messages as the wire wants them; content is always a string (some templates fail on None)."""
    return [_openai_message(message, rename) for message in messages]


def _openai_message(message: ChatMessage, rename: bool = False) -> dict[str, Any]:
    named = wire_name if rename else str
    wire: dict[str, Any] = {"role": message.role, "content": message.content or ""}
    if message.tool_calls:
        wire["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": named(call.name), "arguments": json.dumps(call.arguments)},
            }
            for call in message.tool_calls
        ]
    if message.role == "tool":
        wire["tool_call_id"] = message.tool_call_id or ""
        if message.name:
            wire["name"] = named(message.name)
    return wire


def openai_tools(tools: Sequence[ToolSpec], rename: bool = False) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": wire_name(tool.name) if rename else tool.name,
                "description": tool.description,
                "parameters": tool.parameters,
            },
        }
        for tool in tools
    ]


def chat_completion_body(request: ChatRequest, with_model: bool = True) -> dict[str, Any]:
    """A streamed /chat/completions request (the embedded runtime serves one model: no name)."""
    body: dict[str, Any] = {
        "messages": openai_messages(request.messages, rename=True),
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if with_model:
        body["model"] = request.model
    if request.tools:
        body["tools"] = openai_tools(request.tools, rename=True)
    if request.response_schema is not None:
        schema = {"name": "response", "schema": request.response_schema}
        body["response_format"] = {"type": "json_schema", "json_schema": schema}
    optional = {
        "temperature": request.temperature,
        "top_p": request.top_p,
        "max_tokens": request.max_tokens,
    }
    body.update({key: value for key, value in optional.items() if value is not None})
    return body


def parse_arguments(text: str, tool: str) -> dict[str, Any]:
    """A tool call's JSON arguments; the model wrote something else: say so, naming the tool."""
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise ProviderError(f"the model sent invalid JSON arguments for {tool}: {error}") from None
    if not isinstance(value, dict):
        raise ProviderError(f"the model sent arguments for {tool} that are not a JSON object")
    return value


class ChunkReader:
    """Turns OpenAI-style stream chunks into Foundry chunks, gathering tool-call fragments."""

    def __init__(self, started: float, names: dict[str, str] | None = None) -> None:
        self._started = started
        self._names = names or {}
        self._first_token: float | None = None
        self._calls: dict[int, dict[str, str]] = {}
        self._usage: dict[str, Any] = {}
        self._stop_reason = "stop"

    def read(self, chunk: dict[str, Any]) -> list[Chunk]:
        if chunk.get("usage"):
            self._usage = chunk["usage"]
        out: list[Chunk] = []
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            if delta.get("content"):
                self._mark_first_token()
                out.append(TextDelta(text=delta["content"]))
            for fragment in delta.get("tool_calls") or []:
                self._mark_first_token()
                self._gather(fragment)
            if choice.get("finish_reason"):
                self._stop_reason = choice["finish_reason"]
        return out

    def _mark_first_token(self) -> None:
        if self._first_token is None:
            self._first_token = time.perf_counter() - self._started

    def _gather(self, fragment: dict[str, Any]) -> None:
        call = self._calls.setdefault(fragment.get("index", 0), {"id": "", "name": "", "args": ""})
        function = fragment.get("function") or {}
        call["id"] = fragment.get("id") or call["id"]
        call["name"] += function.get("name") or ""
        call["args"] += function.get("arguments") or ""

    def finish(self) -> list[Chunk]:
        out: list[Chunk] = [
            ToolCallChunk(
                call=ToolCall(
                    id=call["id"] or f"call_{index}",
                    name=self._names.get(call["name"], call["name"]),
                    arguments=parse_arguments(call["args"], call["name"]),
                )
            )
            for index, call in sorted(self._calls.items())
        ]
        out.append(
            Usage(
                input_tokens=int(self._usage.get("prompt_tokens", 0)),
                output_tokens=int(self._usage.get("completion_tokens", 0)),
                first_token_s=self._first_token,
                total_s=time.perf_counter() - self._started,
                stop_reason=self._stop_reason,
            )
        )
        return out
