"""SnapshotCommand: one edit of the working agent, undone and redone by swapping snapshots."""

from __future__ import annotations

from typing import Protocol

from PySide6.QtGui import QUndoCommand

from foundry.agent.models import Agent

EDIT_ID = 1


class SnapshotTarget(Protocol):
    def restore(self, agent: Agent, refresh: bool) -> None: ...

    def show_page(self, page: str) -> None: ...


class SnapshotCommand(QUndoCommand):
    """The agent before and after an edit; typing in one field merges into one command.

    `label` says what the edit did ("edit rule 'be-brief'"); undoing or redoing it shows `page`.
    """

    def __init__(
        self,
        target: SnapshotTarget,
        key: str,
        before: Agent,
        after: Agent,
        mergeable: bool,
        label: str,
        page: str,
    ) -> None:
        super().__init__(label)
        self.target = target
        self.key = key
        self.page = page
        self.before = before
        self.after = after
        self.mergeable = mergeable
        self._pushed = False

    def id(self) -> int:
        return EDIT_ID if self.mergeable else -1

    def mergeWith(self, other: QUndoCommand) -> bool:
        if not isinstance(other, SnapshotCommand) or not other.mergeable or other.key != self.key:
            return False
        self.after = other.after
        return True

    def redo(self) -> None:
        # The first redo is the edit the user just made: the widgets already show it.
        self.target.restore(self.after.model_copy(deep=True), refresh=self._pushed)
        if self._pushed:
            self.target.show_page(self.page)
        self._pushed = True

    def undo(self) -> None:
        self.target.restore(self.before.model_copy(deep=True), refresh=True)
        self.target.show_page(self.page)
