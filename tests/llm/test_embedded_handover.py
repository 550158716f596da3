"""Chunks from the model's worker thread to the loop: in order, none lost, and the chunks that
arrive while the loop is busy share one wake-up of it."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import Future
from typing import Any

import pytest

from foundry.llm.base import ProviderError
from foundry.llm.embedded import _Handover


def _finished(error: BaseException | None = None) -> Future[Any]:
    job: Future[Any] = Future()
    if error is None:
        job.set_result(None)
    else:
        job.set_exception(error)
    return job


async def _read_all(handover: _Handover) -> list[dict[str, Any]]:
    chunks = []
    while (chunk := await handover.next()) is not None:
        chunks.append(chunk)
    return chunks


async def test_chunks_posted_while_the_loop_is_busy_arrive_in_order_with_one_wake_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    loop = asyncio.get_running_loop()
    wake_ups = []
    wake = loop.call_soon_threadsafe
    monkeypatch.setattr(loop, "call_soon_threadsafe", lambda *a: wake_ups.append(a) or wake(*a))
    handover = _Handover(loop, timeout_s=30)
    chunks = [{"n": n} for n in range(100)]

    def worker() -> None:  # the loop is busy (in join) the whole time
        for chunk in chunks:
            assert handover.on_chunk(chunk) is False
        handover.finish(_finished())

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert len(wake_ups) == 1
    assert await _read_all(handover) == chunks


async def test_chunks_posted_one_by_one_each_wake_the_waiting_loop() -> None:
    loop = asyncio.get_running_loop()
    handover = _Handover(loop, timeout_s=30)
    received = []
    for n in range(5):
        await asyncio.to_thread(handover.on_chunk, {"n": n})
        received.append(await handover.next())
    await asyncio.to_thread(handover.finish, _finished())
    assert received == [{"n": n} for n in range(5)] and await handover.next() is None


async def test_a_failure_after_some_chunks_comes_after_them() -> None:
    handover = _Handover(asyncio.get_running_loop(), timeout_s=30)
    handover.on_chunk({"n": 0})
    handover.finish(_finished(RuntimeError("llama.cpp crashed")))
    assert await handover.next() == {"n": 0}
    with pytest.raises(ProviderError, match="crashed"):
        await handover.next()


async def test_a_stopped_handover_tells_the_worker_to_stop_and_takes_nothing() -> None:
    handover = _Handover(asyncio.get_running_loop(), timeout_s=30)
    handover.stop.set()
    assert handover.on_chunk({"n": 0}) is True


async def test_no_chunk_in_time_is_a_timeout() -> None:
    handover = _Handover(asyncio.get_running_loop(), timeout_s=0.05)
    with pytest.raises(TimeoutError):
        await handover.next()
