"""The terms of the metrics in plain Python (no pydantic, no database), for the series, the
aggregates and the export alike: which points a filter keeps, the level that decided a tool
call, a phase's share of a task's time."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

LEVELS = ("policy", "grant", "supervisor", "human", "timeout")
_LEVEL_OF_PREFIX = {
    "policy": "policy",
    "grant": "grant",
    "agent": "supervisor",
    "timeout": "timeout",
}


@dataclass(frozen=True)
class MetricsFilter:
    """Which points to keep; an empty set or None keeps everything on that axis."""

    agents: frozenset[str] = frozenset()
    task_ids: frozenset[str] = frozenset()
    since: datetime | None = None
    until: datetime | None = None

    def admits(self, time: datetime, task_id: str, agents: Collection[str]) -> bool:
        if self.since is not None and time < self.since:
            return False
        if self.until is not None and time > self.until:
            return False
        if self.task_ids and task_id not in self.task_ids:
            return False
        return not self.agents or not self.agents.isdisjoint(agents)


def resolution_level(by: str) -> str:
    """The level that decided a tool call, from the decider's name (`policy:rule`, `agent:...`)."""
    return _LEVEL_OF_PREFIX.get(by.split(":", 1)[0], "human")


def phase_shares(seconds: Mapping[str, float]) -> Iterable[tuple[str, float, float]]:
    """Each phase, its seconds and its percent of the time of all of them, in their order."""
    total = sum(seconds.values())
    return ((name, value, value * 100 / total if total else 0.0) for name, value in seconds.items())
