"""A call's answer: progress reported only to a client that asked for it (a progressToken in
its request), and a cancelled request cancels the call whether or not it asked."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import pytest

from foundry.gateway import server
from foundry.tools.host import ToolResult


@dataclass
class _Peer:
    reported: list[tuple[float, str | None]] = field(default_factory=list)

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        self.reported.append((progress, message))


@dataclass
class _Context:
    """What the SDK hands a handler: the request's `_meta` and the client's session."""

    meta: dict[str, Any] | None
    session: _Peer = field(default_factory=_Peer)


class _Call:
    """A call that waits until released (a person deciding, say)."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.release = asyncio.Event()
        self.cancelled = False

    async def run(self) -> ToolResult:
        self.started.set()
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        return ToolResult(text="done", is_error=False)


@pytest.fixture(autouse=True)
def fast_progress(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(server, "PROGRESS_EVERY_S", 0.01)


@pytest.mark.parametrize("meta", [None, {}])
async def test_a_client_that_asked_for_no_progress_is_sent_none(meta: Any) -> None:
    context, call = _Context(meta), _Call()
    answering = asyncio.ensure_future(server._answered(context, call.run()))
    await call.started.wait()
    await asyncio.sleep(server.PROGRESS_EVERY_S * 10)  # long enough for several reports
    call.release.set()
    assert (await answering).text == "done"
    assert context.session.reported == []


async def test_a_client_that_asked_for_progress_is_told_it_is_still_waiting() -> None:
    context, call = _Context({"progress_token": 7}), _Call()
    answering = asyncio.ensure_future(server._answered(context, call.run()))
    while len(context.session.reported) < 2:
        await asyncio.sleep(server.PROGRESS_EVERY_S)
    call.release.set()
    assert (await answering).text == "done"
    progress, message = context.session.reported[0]
    assert progress > 0 and message is not None and "waiting for the decision" in message


@pytest.mark.parametrize("meta", [None, {"progress_token": "t"}])
async def test_a_cancelled_request_cancels_the_call(meta: Any) -> None:
    context, call = _Context(meta), _Call()
    answering = asyncio.ensure_future(server._answered(context, call.run()))
    await call.started.wait()
    answering.cancel()
    with pytest.raises(asyncio.CancelledError):
        await answering
    assert call.cancelled
