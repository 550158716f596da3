"""The model provider that talks to a local or remote Ollama server."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import cast

import httpx
import ollama

from foundry.llm.base import (
    FIRST_BYTE_TIMEOUT_S,
    ChatMessage,
    ChatRequest,
    Chunk,
    ProviderError,
    TextDelta,
    ToolCall,
    ToolCallChunk,
    Usage,
    first_byte_deadline,
    no_answer_in_time,
    silent_server,
    stalled_stream,
)
from foundry.llm.wire import openai_tools

DEFAULT_HOST = "http://127.0.0.1:11434"

_Parts = AsyncGenerator[ollama.ChatResponse, None]


class OllamaProvider:
    """Streams chat replies from Ollama's `/api/chat` through the official client."""

    name = "ollama"

    def __init__(
        self,
        host: str | None = None,
        timeout_s: float = 120.0,
        first_byte_timeout_s: float = FIRST_BYTE_TIMEOUT_S,
    ) -> None:
        """`timeout_s` bounds listing models; a chat is bounded by its request's own
        `timeout_s`, its connection and first bytes by `first_byte_timeout_s`, and so is the
        silence between two parts of its reply."""
        self.host = host or os.environ.get("OLLAMA_HOST") or DEFAULT_HOST
        self._timeout_s = timeout_s
        self._first_byte_timeout_s = first_byte_timeout_s
        self._client = ollama.AsyncClient(
            host=self.host,
            timeout=httpx.Timeout(timeout_s, connect=first_byte_timeout_s, read=None),
        )

    async def stream(self, request: ChatRequest) -> AsyncIterator[Chunk]:
        """Yield text deltas and tool calls, then one Usage; raise ProviderError on failure."""
        started = time.perf_counter()
        deadline = asyncio.get_running_loop().time() + request.timeout_s
        parts = await self._open(request)
        first_token_s: float | None = None
        final: ollama.ChatResponse | None = None
        call_count = 0
        try:
            part = await self._part_within(parts, request, deadline, silent_server)
            while part is not None:
                chunks = _chunks_of(part.message, call_count)
                if chunks and first_token_s is None:
                    first_token_s = time.perf_counter() - started
                call_count += sum(isinstance(chunk, ToolCallChunk) for chunk in chunks)
                for chunk in chunks:
                    yield chunk
                if part.done:
                    final = part
                part = await self._part_within(parts, request, deadline, stalled_stream)
        finally:
            # Closing the client's generator closes the HTTP response, also on cancellation.
            await parts.aclose()
        yield _usage(final, first_token_s, time.perf_counter() - started, call_count)

    async def list_models(self) -> list[str]:
        """Names of the models installed in Ollama, as `ollama list` shows them."""
        try:
            async with asyncio.timeout(self._timeout_s):
                listing = await self._client.list()
        except TimeoutError as error:
            raise ProviderError(
                f"Ollama at {self.host} did not list its models within {self._timeout_s:g} s",
                retryable=True,
            ) from error
        except (ConnectionError, httpx.TransportError) as error:
            raise self._unreachable() from error
        except ollama.ResponseError as error:
            raise ProviderError(f"Ollama failed to list its models: {error.error}") from error
        return [model.model for model in listing.models if model.model]

    async def aclose(self) -> None:
        await self._client.close()

    async def _open(self, request: ChatRequest) -> _Parts:
        options = _options(request)
        try:
            parts = await self._client.chat(
                model=request.model,
                messages=[_message(message) for message in request.messages],
                tools=openai_tools(request.tools) or None,
                stream=True,
                format=request.response_schema,
                options=options or None,
            )
        except (ConnectionError, httpx.TransportError) as error:
            raise self._unreachable() from error
        except ollama.ResponseError as error:
            raise self._response_error(error, request.model) from error
        # With stream=True the client returns an async generator; its aclose ends the request.
        return cast(_Parts, parts)

    async def _part_within(
        self,
        parts: _Parts,
        request: ChatRequest,
        deadline: float,
        silence: Callable[[str, float], ProviderError],
    ) -> ollama.ChatResponse | None:
        """The next part of the reply: a server silent for the first-byte timeout is given up
        early (before the first part, and between two), with the error `silence` makes."""
        bound, limited = first_byte_deadline(deadline, self._first_byte_timeout_s)
        try:
            return await self._next_part(parts, request, bound)
        except ProviderError as error:
            if limited and isinstance(error.__cause__, TimeoutError):
                raise silence(f"Ollama at {self.host}", self._first_byte_timeout_s) from error
            raise

    async def _next_part(
        self, parts: _Parts, request: ChatRequest, deadline: float
    ) -> ollama.ChatResponse | None:
        try:
            async with asyncio.timeout_at(deadline):
                return await anext(parts)
        except StopAsyncIteration:
            return None
        except TimeoutError as error:
            raise no_answer_in_time(f"Ollama at {self.host}", request) from error
        except (ConnectionError, httpx.ConnectError, httpx.TimeoutException) as error:
            raise self._unreachable() from error
        except httpx.TransportError as error:
            raise ProviderError(
                f"the connection to Ollama at {self.host} broke: {error}", retryable=True
            ) from error
        except ollama.ResponseError as error:
            raise self._response_error(error, request.model) from error

    def _response_error(self, error: ollama.ResponseError, model: str) -> ProviderError:
        said = str(error.error)
        if "not found" in said.lower() and model in said:
            return ProviderError(
                f"model {model} is not installed in Ollama: run `ollama pull {model}`"
            )
        if error.status_code == 404:
            return ProviderError(
                f"not an Ollama server at {self.host}: it has no /api/chat (HTTP 404: "
                f"{said[:200]}); check the host and port (providers.ollama.OLLAMA_HOST)"
            )
        retryable = error.status_code in (429, 503)
        return ProviderError(f"Ollama failed: {said}", retryable=retryable)

    def _unreachable(self) -> ProviderError:
        return ProviderError(
            f"Ollama is not reachable at {self.host}: start it with `ollama serve` "
            "or set OLLAMA_HOST",
            retryable=True,
        )


def _message(message: ChatMessage) -> ollama.Message:
    calls = [
        ollama.Message.ToolCall(
            function=ollama.Message.ToolCall.Function(name=call.name, arguments=call.arguments)
        )
        for call in message.tool_calls
    ]
    return ollama.Message(
        role=message.role,
        content=message.content,
        tool_calls=calls or None,
        tool_name=message.name if message.role == "tool" else None,
    )


def _options(request: ChatRequest) -> dict[str, float | int]:
    options = {
        "temperature": request.temperature,
        "top_p": request.top_p,
        "num_predict": request.max_tokens,
    }
    return {key: value for key, value in options.items() if value is not None}


def _chunks_of(message: ollama.Message, calls_before: int) -> list[Chunk]:
    chunks: list[Chunk] = []
    if message.content:
        chunks.append(TextDelta(text=message.content))
    for offset, call in enumerate(message.tool_calls or ()):
        tool_call = ToolCall(
            id=f"call_{calls_before + offset}",
            name=call.function.name,
            arguments=dict(call.function.arguments),
        )
        chunks.append(ToolCallChunk(call=tool_call))
    return chunks


def _usage(
    final: ollama.ChatResponse | None, first_token_s: float | None, total_s: float, calls: int
) -> Usage:
    if final is None:
        final = ollama.ChatResponse(message=ollama.Message(role="assistant"))
    return Usage(
        input_tokens=final.prompt_eval_count or 0,
        output_tokens=final.eval_count or 0,
        first_token_s=first_token_s,
        total_s=total_s,
        stop_reason="tool_calls" if calls else final.done_reason or "stop",
    )
