"""Progress for one progressToken only grows: the gateway's own "waiting for the decision" while
a person decides, then the server's own progress counted on from it; without the gateway's, the
server's as sent."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import pytest

from foundry.gateway import server
from foundry.tools.host import ToolResult, current_listener


@dataclass
class _Peer:
    reported: list[tuple[float, float | None, str | None]] = field(default_factory=list)

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        self.reported.append((progress, total, message))


@dataclass
class _Context:
    meta: dict[str, Any] | None
    session: _Peer = field(default_factory=_Peer)
    request_id: int = 1


@pytest.fixture(autouse=True)
def fast_progress(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(server, "PROGRESS_EVERY_S", 0.01)


async def _server_reporting(
    context: _Context, after_waiting_reports: int, unit: float = 1.0
) -> ToolResult:
    """A call that waits for the gateway to have reported, then reports steps of `unit` as a
    server does."""
    while len(context.session.reported) < after_waiting_reports:
        await asyncio.sleep(server.PROGRESS_EVERY_S)
    listener = current_listener()
    assert listener is not None and listener.progress is not None
    for step in (1, 2, 3):
        await listener.progress(step * unit, 3 * unit, f"step {step}")
    return ToolResult(text="done", is_error=False)


async def test_server_progress_below_the_gateways_own_is_counted_on_from_it() -> None:
    context = _Context({"progress_token": "t"})
    unit = server.PROGRESS_EVERY_S / 10  # the server's first step is below what was reported
    result = await server._answered(context, _server_reporting(context, 2, unit))
    assert result.text == "done"
    values = [progress for progress, _, _ in context.session.reported]
    assert values == sorted(values) and len(set(values)) == len(values)  # only grows
    messages = [message for _, _, message in context.session.reported]
    waited = [m for m in messages if m is not None and m.startswith("waiting for the decision")]
    assert len(waited) >= 2
    assert messages[-3:] == ["step 1", "step 2", "step 3"]
    last_wait = context.session.reported[len(waited) - 1][0]
    assert context.session.reported[-1][:2] == (last_wait + 3 * unit, last_wait + 3 * unit)


async def test_server_progress_above_the_gateways_own_is_passed_on_as_sent() -> None:
    context = _Context({"progress_token": "t"})
    await server._answered(context, _server_reporting(context, 2))
    assert context.session.reported[-3:] == [(float(s), 3.0, f"step {s}") for s in (1, 2, 3)]
    values = [progress for progress, _, _ in context.session.reported]
    assert values == sorted(values)


async def test_server_progress_alone_is_passed_on_as_sent() -> None:
    context = _Context({"progress_token": "t"})
    await server._answered(context, _server_reporting(context, 0))
    assert context.session.reported == [(float(s), 3.0, f"step {s}") for s in (1, 2, 3)]


async def test_a_client_that_asked_for_no_progress_hears_none_of_the_servers() -> None:
    context = _Context(None)

    async def call() -> ToolResult:
        listener = current_listener()
        assert listener is not None and listener.progress is None
        return ToolResult(text="done", is_error=False)

    assert (await server._answered(context, call())).text == "done"
    assert context.session.reported == []
