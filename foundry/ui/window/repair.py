"""An agent that cannot be used, in the window: New Chat reads it again (it opens once repaired,
else says why), and a repair saved in its editor makes it the current agent at once."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from foundry.ui.window.agent_dock import agent_name

if TYPE_CHECKING:
    from foundry.agent.document import AgentDocument
    from foundry.ui.window.main_window import MainWindow

NO_AGENT = "New Chat needs an agent: open one first (Ctrl+O)."
SAID_FOR_S = 8000


class AgentRepair:
    def __init__(self, window: MainWindow) -> None:
        self.window = window

    def new_chat_without_agent(self) -> None:
        """New Chat with no agent to chat with: the broken one is read again, or it is said
        that an agent must be opened first."""
        broken = self.window.broken_agent
        if broken is None:
            self.window.statusBar().showMessage(NO_AGENT, SAID_FOR_S)
            return
        self.window.spawn(self._chat_if_usable(broken))

    async def _chat_if_usable(self, path: Path) -> None:
        document = await self._usable(path)
        if document is None:
            return
        self.window.show_agent(document)
        await self.window.start_chat()

    async def _usable(self, path: Path) -> AgentDocument | None:
        """The agent at `path` if it can be used now; else None, its problems shown and the
        first said in the status bar."""
        from foundry.agent import AgentError, load_agent

        try:
            return await asyncio.to_thread(load_agent, path)
        except AgentError as error:
            await self.window.show_problems(path, error.problems)
            count = len(error.problems)
            said = f"{count} problem{'' if count == 1 else 's'}, in the Agent panel"
            self.window.statusBar().showMessage(
                f"No chat started: {path.name} cannot be used ({said}). Fix it in the editor "
                "(Ctrl+E)."
            )
            return None

    def saved(self, path: Path) -> None:
        """An editor saved the agent at `path`: if it is the agent shown as broken, it is read
        again, and becomes the current agent if it can be used now."""
        broken = self.window.broken_agent
        if broken is not None and _same_place(broken, path):
            self.window.spawn(self._repaired(broken))

    async def _repaired(self, path: Path) -> None:
        document = await self._usable(path)
        if document is None:
            return
        self.window.show_agent(document)
        self.window.statusBar().showMessage(
            f"{agent_name(document)} can be used now: New Chat (Ctrl+N) starts a chat with it."
        )


def _same_place(first: Path, second: Path) -> bool:
    from foundry.agent.document import resolve_agent_path

    return resolve_agent_path(first).resolve() == resolve_agent_path(second).resolve()
