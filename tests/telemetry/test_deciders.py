"""Who decided, as the exported decisions name it: the same levels the dashboards count."""

from __future__ import annotations

import pytest

from foundry.telemetry.decisions import decider


@pytest.mark.parametrize(
    ("by", "named"),
    [
        ("policy:current-time-is-routine", ("policy", "L0")),
        ("grant:3f2a", ("grant", "L0")),
        ("agent:supervisor", ("supervisor", "L1")),
        ("supervisor:agent7", ("supervisor", "L1")),  # an agent-mesh supervisor, through the API
        ("human:gui:ana", ("human", "L2")),
        ("api:ci-bot", ("human", "L2")),  # a client naming itself is counted as a person
        ("timeout", ("timeout", "L2")),
        ("withdrawn", ("withdrawn", "L2")),
    ],
)
def test_each_decider_is_named_at_its_level(by: str, named: tuple[str, str]) -> None:
    assert decider(by) == named
