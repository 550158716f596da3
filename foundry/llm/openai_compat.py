"""The model provider for any server that speaks OpenAI's chat completions API over HTTP."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Awaitable
from typing import Any, TypeVar

import httpx
from pydantic import BaseModel, ValidationError

from foundry.llm.base import (
    FIRST_BYTE_TIMEOUT_S,
    ChatRequest,
    Chunk,
    ProviderError,
    first_byte_deadline,
    no_answer_in_time,
    silent_server,
    stalled_stream,
)
from foundry.llm.wire import ChunkReader, chat_completion_body, tool_names

_RETRYABLE_STATUS = frozenset({408, 429, 500, 502, 503, 504})
_T = TypeVar("_T")


class _ModelEntry(BaseModel):
    id: str


class _ModelList(BaseModel):
    data: list[_ModelEntry]


class OpenAICompatibleProvider:
    """Streams chat replies from `{base_url}/chat/completions` (OpenAI, llama.cpp, vLLM, ...)."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        name: str = "openai",
        timeout_s: float = 120.0,
        first_byte_timeout_s: float = FIRST_BYTE_TIMEOUT_S,
    ) -> None:
        self.name = name
        self._first_byte_timeout_s = first_byte_timeout_s
        self.base_url = base_url.rstrip("/")
        self._has_key = bool(api_key)
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.AsyncClient(
            base_url=self.base_url + "/", headers=headers, timeout=timeout_s
        )

    async def stream(self, request: ChatRequest) -> AsyncIterator[Chunk]:
        """Yield text deltas, then whole tool calls, then one Usage; raise ProviderError."""
        reader = ChunkReader(time.perf_counter(), tool_names(request))
        deadline = asyncio.get_running_loop().time() + request.timeout_s
        try:
            response = await self._first_response(deadline, request)
            try:
                await self._within(deadline, request, self._check(response))
                lines = response.aiter_lines()
                data = await self._next_event(lines, request, deadline)
                while data is not None:
                    for chunk in reader.read(data):
                        yield chunk
                    data = await self._next_event(lines, request, deadline, begun=True)
            finally:
                await response.aclose()
        except httpx.TransportError as error:
            raise self._transport_error(error) from error
        for chunk in reader.finish():
            yield chunk

    async def list_models(self) -> list[str]:
        """The model ids the server offers (`GET {base_url}/models`)."""
        try:
            response = await self._client.get("models")
        except httpx.TransportError as error:
            raise self._transport_error(error) from error
        await self._check(response)
        try:
            listing = _ModelList.model_validate_json(response.content)
        except ValidationError as error:
            raise ProviderError(f"{self.base_url}/models sent no model list: {error}") from None
        return [entry.id for entry in listing.data]

    async def aclose(self) -> None:
        await self._client.aclose()

    async def _open(self, request: ChatRequest) -> httpx.Response:
        """Send the request and wait for the response's head; the body streams after."""
        sent = self._client.build_request(
            "POST",
            "chat/completions",
            json=chat_completion_body(request),
            timeout=httpx.Timeout(request.timeout_s, connect=self._first_byte_timeout_s),
        )
        return await self._client.send(sent, stream=True)

    async def _first_response(self, deadline: float, request: ChatRequest) -> httpx.Response:
        """The response's head: a server that takes the request and stays silent is given up
        after the first-byte timeout, not the whole request's."""
        bound, limited = first_byte_deadline(deadline, self._first_byte_timeout_s)
        try:
            return await self._within(bound, request, self._open(request))
        except ProviderError as error:
            if limited and isinstance(error.__cause__, TimeoutError):
                raise silent_server(self.base_url, self._first_byte_timeout_s) from error
            raise

    async def _within(self, deadline: float, request: ChatRequest, step: Awaitable[_T]) -> _T:
        """One step of a call, bounded by what is left of the request's timeout."""
        try:
            async with asyncio.timeout_at(deadline):
                return await step
        except TimeoutError as error:
            raise no_answer_in_time(self.base_url, request) from error

    async def _next_event(
        self, lines: AsyncIterator[str], request: ChatRequest, deadline: float, begun: bool = False
    ) -> dict[str, Any] | None:
        """The next `data:` event of the stream, or None at `[DONE]` or the end of the body.
        Once the reply has `begun`, a server silent for the first-byte timeout is given up."""
        while True:
            try:
                line = await self._next_line(lines, request, deadline, begun)
            except StopAsyncIteration:
                return None
            if not line.startswith("data:"):
                continue  # blank separators, comments and event names
            payload = line.removeprefix("data:").strip()
            if payload == "[DONE]":
                return None
            return self._event(payload)

    async def _next_line(
        self, lines: AsyncIterator[str], request: ChatRequest, deadline: float, begun: bool
    ) -> str:
        bound, limited = first_byte_deadline(deadline, self._first_byte_timeout_s)
        try:
            return await self._within(bound if begun else deadline, request, anext(lines))
        except ProviderError as error:
            if begun and limited and isinstance(error.__cause__, TimeoutError):
                raise stalled_stream(self.base_url, self._first_byte_timeout_s) from error
            raise

    def _event(self, payload: str) -> dict[str, Any]:
        try:
            event = json.loads(payload)
        except json.JSONDecodeError:
            raise ProviderError(
                f"{self.base_url} sent a stream line that is not JSON: {payload[:200]}"
            ) from None
        if not isinstance(event, dict):
            raise ProviderError(f"{self.base_url} sent a stream event that is not an object")
        if "error" in event:
            raise ProviderError(f"{self.base_url} failed: {_error_text(event)}")
        return event

    async def _check(self, response: httpx.Response) -> None:
        if response.status_code < 400:
            return
        await response.aread()
        status = response.status_code
        said = _server_message(response)
        if status in (401, 403):
            raise ProviderError(f"{self._key_problem()} (the server said: {said})")
        raise ProviderError(
            f"{self.base_url} refused the request (HTTP {status}): {said}",
            retryable=status in _RETRYABLE_STATUS,
        )

    def _key_problem(self) -> str:
        if self._has_key:
            return f"the API key was refused by {self.base_url}: check the key in the settings"
        return f"{self.base_url} wants an API key: give one in the provider's settings"

    def _transport_error(self, error: httpx.TransportError) -> ProviderError:
        if isinstance(error, httpx.ConnectError):
            message = f"cannot reach {self.base_url}: is the server running? ({error})"
        elif isinstance(error, httpx.TimeoutException):
            message = f"{self.base_url} did not answer in time: try again or raise the timeout"
        else:
            message = f"the connection to {self.base_url} broke: {error}"
        return ProviderError(message, retryable=True)


def _server_message(response: httpx.Response) -> str:
    try:
        return _error_text(response.json())
    except ValueError:
        return response.text.strip()[:300] or response.reason_phrase


def _error_text(body: Any) -> str:
    """The message of an error body: `{"error": {"message": ...}}`, `{"error": ...}` or text."""
    error = body.get("error", body) if isinstance(body, dict) else body
    if isinstance(error, dict):
        return str(error.get("message") or error)
    return str(error)
