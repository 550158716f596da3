"""The editor's status line, derived from where the agent's save stands now."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from foundry.agent.problems import AgentProblem


@dataclass
class SaveStatus:
    """What the line is made of; `line()` says it. An action (a refusal for a reason of its
    own, a reload) sets `said`, which the next action or edit replaces."""

    saving: bool = False
    saved_to: Path | None = None  # the last save, said while nothing is edited since
    chats: int = 0  # the open chats of the agent the last save applies to
    refused: bool = False  # the last save waits for the problems that stop it to be fixed
    said: str = ""

    def action(self, said: str = "") -> None:
        """An action's outcome replaces what the line said before."""
        self.said, self.refused = said, False

    def line(self, modified: bool, stopping: Sequence[AgentProblem]) -> str:
        """The line for an editor whose edits are `modified`, whose save `stopping` stops."""
        if self.saving:
            return "Saving…"
        if self.refused and stopping:
            return not_saved(stopping)
        if self.refused and modified:
            return "Fixed: nothing stops the save now (Ctrl+S saves)."
        if self.said:
            return self.said
        if self.saved_to is not None and not modified:
            return f"Saved to {self.saved_to}{self._in_force()}"
        return ""

    def _in_force(self) -> str:
        if not self.chats:
            return ""
        chats = (
            "its open chat follows" if self.chats == 1 else f"its {self.chats} open chats follow"
        )
        return f"; {chats} it from the next step"


def not_saved(problems: Sequence[AgentProblem]) -> str:
    """Why a save waits, as `foundry validate` says the first problem (without its file)."""
    first = problems[0]
    what = f"{first.field}: {first.message}" if first.field else first.message
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return f"Not saved: {what}{more}; see Problems. Everything you typed is kept."
