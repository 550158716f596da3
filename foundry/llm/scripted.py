"""A model that replays turns from a file: for deterministic tests and reproducible bug reports.

The file (YAML or JSON) holds a list of turns:

    turns:
      - text: "Let me look that up."
        tool_calls:
          - name: time.get_current_time
            arguments: {timezone: Asia/Tokyo}
      - text: "It is 10:04 in Tokyo (Asia/Tokyo, UTC+9)."
      - error: "simulated outage"        # raises a retryable ProviderError instead of replying
      - json: {decision: allow}          # a structured reply (written as JSON text)

A request is answered with turn N when its conversation already holds N assistant messages, so a
conversation replays the same way however often it is restarted or resumed. Text streams word by
word; `delay_s` (per chunk, on a turn or at the top level) slows it down. Token counts are words.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from foundry.agent.problems import AgentError
from foundry.agent.syntax import parse_yaml, plain
from foundry.llm.base import (
    ChatRequest,
    Chunk,
    ProviderError,
    TextDelta,
    ToolCall,
    ToolCallChunk,
    Usage,
    no_answer_in_time,
)


class ScriptedToolCall(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    id: str | None = None


class ScriptedTurn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = ""
    json_reply: Any = Field(default=None, alias="json")
    tool_calls: list[ScriptedToolCall] = Field(default_factory=list)
    error: str | None = None
    delay_s: float | None = None


class Script(BaseModel):
    model_config = ConfigDict(extra="forbid")

    turns: list[ScriptedTurn]
    delay_s: float = 0.0


def load_script(path: Path) -> Script:
    if not path.is_file():
        raise ProviderError(f"no scripted model file at {path}")
    try:
        data = plain(parse_yaml(path.read_text(encoding="utf-8"), path))
        return Script.model_validate(data)
    except AgentError as error:
        raise ProviderError(f"the scripted model file is not valid YAML: {error}") from None
    except ValidationError as error:
        raise ProviderError(f"the scripted model file {path} is malformed: {error}") from None


class ScriptedProvider:
    """Replays a Script; see the module docstring for the file format."""

    name = "scripted"

    def __init__(self, path: Path) -> None:
        self.path = path
        self.script = load_script(path)

    async def list_models(self) -> list[str]:
        return [str(self.path)]

    async def aclose(self) -> None:
        return None

    async def stream(self, request: ChatRequest) -> AsyncIterator[Chunk]:
        started = time.perf_counter()
        turn = self._turn(request)
        deadline = asyncio.get_running_loop().time() + request.timeout_s
        delay = self.script.delay_s if turn.delay_s is None else turn.delay_s
        if turn.error:
            await self._wait(delay, deadline, request)
            raise ProviderError(f"scripted failure: {turn.error}", retryable=True)
        text = turn.text if turn.json_reply is None else json.dumps(turn.json_reply)
        first_token: float | None = None
        for piece in re.findall(r"\S+\s*|\s+", text):
            await self._wait(delay, deadline, request)
            first_token = first_token or time.perf_counter() - started
            yield TextDelta(text=piece)
        index = sum(1 for message in request.messages if message.role == "assistant")
        for number, call in enumerate(turn.tool_calls):
            await self._wait(delay, deadline, request)
            first_token = first_token or time.perf_counter() - started
            call_id = call.id or f"call_{index}_{number}"
            yield ToolCallChunk(call=ToolCall(id=call_id, name=call.name, arguments=call.arguments))
        yield Usage(
            input_tokens=sum(len(message.content.split()) for message in request.messages),
            output_tokens=len(text.split()) + len(turn.tool_calls),
            first_token_s=first_token,
            total_s=time.perf_counter() - started,
            stop_reason="tool_calls" if turn.tool_calls else "stop",
        )

    def _turn(self, request: ChatRequest) -> ScriptedTurn:
        index = sum(1 for message in request.messages if message.role == "assistant")
        if index >= len(self.script.turns):
            raise ProviderError(
                f"the scripted model {self.path.name} has {len(self.script.turns)} turn(s) "
                f"and was asked for turn {index + 1}"
            )
        return self.script.turns[index]

    async def _wait(self, delay: float, deadline: float, request: ChatRequest) -> None:
        """The turn's delay before a chunk, bounded by the request's timeout like a real model."""
        try:
            async with asyncio.timeout_at(deadline):
                await asyncio.sleep(delay)
        except TimeoutError:
            raise no_answer_in_time(f"the scripted model {self.path.name}", request) from None
