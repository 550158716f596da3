"""Runaway repetition is stopped: the guard's limits, and the embedded stream it ends."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from foundry.llm.base import ChatMessage, ChatRequest, TextDelta, Usage
from foundry.llm.embedded import EmbeddedProvider, EmbeddedRuntime
from foundry.llm.model_queue import OnChunk
from foundry.llm.repetition import RepetitionGuard, repeated_unit

NAME = "Bjelke Sørensen "
STAMP = "2022-01-22T11:12:31.123-01:00, "


def test_a_name_over_and_over_is_a_runaway() -> None:
    assert repeated_unit("The winner is " + NAME * 8) == NAME
    assert repeated_unit("The winner is " + NAME * 7) is None  # 112 characters: not yet


def test_a_long_unit_four_times_is_a_runaway() -> None:
    assert repeated_unit("Paris, France, " + STAMP * 4) == STAMP
    assert repeated_unit("Paris, France, " + STAMP * 3) is None


@pytest.mark.parametrize(
    "text",
    [
        "| city | zone |\n|---|---|\n| Paris | Europe/Paris |",
        "Ha ha ha ha! That is a good one.",
        "It is 09:00 in Paris (Europe/Paris, UTC+01:00). " * 2,
        "-" * 40,  # a rule line: short, below the span
        " " * 300,  # blank space is not a unit
    ],
)
def test_ordinary_text_is_not_a_runaway(text: str) -> None:
    assert repeated_unit(text) is None


def test_the_guard_finds_a_runaway_across_pieces() -> None:
    guard = RepetitionGuard()
    pieces = ["The answer: ", *list(NAME * 10)]
    said = [guard.feed(piece) for piece in pieces]
    assert said[-1] and guard.unit in NAME * 2 and len(guard.unit) == len(NAME)  # a rotation
    assert not any(said[: 1 + len(NAME) * 7])  # seven laps are not yet a runaway


class LoopingRuntime(EmbeddedRuntime):
    """A runtime whose model writes a sentence, then one name until told to stop."""

    def __init__(self) -> None:
        super().__init__(Path("looping.gguf"))
        self.stopped_after: int | None = None

    def _complete(self, body: dict[str, Any], on_chunk: OnChunk) -> Any:
        pieces = ["The winner is ", *([NAME] * 500)]
        for sent, piece in enumerate(pieces, 1):
            if on_chunk({"choices": [{"delta": {"content": piece}, "finish_reason": None}]}):
                self.stopped_after = sent
                return None
        return None


@pytest.fixture
def looping() -> Any:
    runtime = LoopingRuntime()
    yield runtime
    runtime.close()


async def test_the_embedded_stream_stops_a_runaway_reply(looping: LoopingRuntime) -> None:
    request = ChatRequest(model="smollm2", messages=(ChatMessage(role="user", content="Who?"),))
    chunks = [chunk async for chunk in EmbeddedProvider(looping).stream(request)]
    text = "".join(chunk.text for chunk in chunks if isinstance(chunk, TextDelta))
    assert text == "The winner is " + NAME * 8  # stopped at the lap that made it a runaway
    usage = chunks[-1]
    assert isinstance(usage, Usage) and usage.stop_reason == "repetition"
