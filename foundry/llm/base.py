"""The one protocol every model provider speaks, and the values that cross it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

Role = Literal["system", "user", "assistant", "tool"]


class Value(BaseModel):
    model_config = ConfigDict(frozen=True)


class ToolCall(Value):
    """A model's request to run one tool; `arguments` are already parsed from JSON."""

    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class ChatMessage(Value):
    role: Role
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None  # for role "tool": the call this is the result of
    name: str | None = None  # for role "tool": the tool's name


class ToolSpec(Value):
    """A tool offered to the model: its name, what it does and a JSON schema of its arguments."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})


class ChatRequest(Value):
    """One model call. `response_schema`, when given, constrains the reply to that JSON schema;
    `timeout_s` bounds the whole call, from the request to the last chunk (waiting for a busy
    model included): past it, the provider stops and raises `no_answer_in_time`."""

    model: str
    messages: tuple[ChatMessage, ...]
    tools: tuple[ToolSpec, ...] = ()
    response_schema: dict[str, Any] | None = None
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    timeout_s: float = 120.0


class TextDelta(Value):
    kind: Literal["text"] = "text"
    text: str


class ToolCallChunk(Value):
    kind: Literal["tool_call"] = "tool_call"
    call: ToolCall


class Usage(Value):
    """The last chunk of every stream: token counts and timings of the call."""

    kind: Literal["usage"] = "usage"
    input_tokens: int = 0
    output_tokens: int = 0
    first_token_s: float | None = None  # from the request to the first generated token
    total_s: float = 0.0
    stop_reason: str = "stop"  # stop, length, tool_calls, cancelled, repetition (a runaway)


Chunk = TextDelta | ToolCallChunk | Usage


class ProviderError(Exception):
    """A model call failed for a reason the user can act on; the message says what to do.

    `retryable` is true for failures that may pass on their own (a server down or busy).
    """

    def __init__(self, message: str, *, retryable: bool = False) -> None:
        super().__init__(message)
        self.retryable = retryable


FIRST_BYTE_TIMEOUT_S = 30.0  # a server that accepts and stays silent is given up after this


def silent_server(source: str, seconds: float) -> ProviderError:
    """The error of a server that took the request and sent nothing back: not retried, since a
    server in that state answers no better to the next attempt."""
    return ProviderError(
        f"{source} accepted the connection but sent nothing for {seconds:g} s: is it the model "
        "server you meant, and is it stuck? (the provider's FIRST_BYTE_TIMEOUT setting raises "
        "this limit for a model that loads slowly)"
    )


def first_byte_deadline(deadline: float, first_byte_timeout_s: float) -> tuple[float, bool]:
    """The deadline of a call's first bytes (or of its next part, given the idle limit), and
    whether that limit, rather than the request's own deadline, sets it."""
    limit = asyncio.get_running_loop().time() + first_byte_timeout_s
    return min(deadline, limit), limit < deadline


def stalled_stream(source: str, seconds: float) -> ProviderError:
    """The error of a reply that began and then stopped coming: not retried, since the part
    already shown would be shown again, and a server in that state answers no better."""
    return ProviderError(
        f"{source} stopped sending the reply: nothing came for {seconds:g} s after its first "
        "part (the part that came is kept); try again, or check the model server (the "
        "provider's FIRST_BYTE_TIMEOUT setting also sets this limit)"
    )


def no_answer_in_time(source: str, request: ChatRequest) -> ProviderError:
    """The error of a call that ran over its request's `timeout_s`; every provider raises it."""
    return ProviderError(
        f"{source} gave no answer within {request.timeout_s:g} s (model {request.model}): "
        "try again or raise the timeout",
        retryable=True,
    )


@runtime_checkable
class ModelProvider(Protocol):
    """A source of model replies. Cancelling the task that iterates `stream` stops generation."""

    name: str

    def stream(self, request: ChatRequest) -> AsyncIterator[Chunk]:
        """Yield text deltas and whole tool calls, then exactly one Usage; raise ProviderError."""
        ...

    async def list_models(self) -> list[str]: ...

    async def aclose(self) -> None: ...
