"""Fixtures shared by the supervision tests."""

from __future__ import annotations

import pytest

from foundry.supervision import on_loop


@pytest.fixture(params=["on the loop", "in a thread"])
def judged_both_ways(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The test runs twice: with a call's rules judged on the event loop, and in a worker
    thread as where a network filesystem is mounted (see on_loop); no decision may differ."""
    on_the_loop = request.param == "on the loop"
    monkeypatch.setattr(on_loop._MOUNTS, "all_local", lambda: on_the_loop)
    return str(request.param)
