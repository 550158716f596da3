"""The list of recent agents: written in the order the agents were opened."""

import asyncio
from pathlib import Path

from pytestqt.qtbot import QtBot

from foundry.ui.recent import MAX_RECENT, RecentAgents


def test_agents_opened_in_quick_succession_are_listed_newest_first(
    qtbot: QtBot, tmp_path: Path
) -> None:
    recent = RecentAgents(tmp_path / "recent-agents.json")
    agents = [tmp_path / f"agent-{number}" for number in range(MAX_RECENT)]
    for _ in range(5):
        written = asyncio.gather(*(recent.remember(agent) for agent in agents))
        qtbot.waitUntil(written.done, timeout=10000)
        written.result()
        assert RecentAgents.load(recent.file).paths == [path.resolve() for path in reversed(agents)]
