"""The journal of a task run: numbered steps whose results a resumed or replayed run reads back.

The runner's control flow is deterministic given its steps' results, so running it again with
the journaled results reproduces the same state. A resumed run continues live where the journal
ends; a replay must find every step in the journal and never calls a model.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from foundry.orchestration.events import PhaseFinished, WorkerFinished
from foundry.session.events import Event, EventBody


class JournalError(RuntimeError):
    pass


class StepJournal:
    def __init__(self, history: Sequence[Event] = (), replay: bool = False) -> None:
        self.replay = replay
        self.recorded = [event.body for event in history]
        self.results: dict[int, PhaseFinished] = {
            event.body.step: event.body
            for event in history
            if isinstance(event.body, PhaseFinished) and event.body.step is not None
        }
        self.workers: dict[tuple[int, str, str], str] = {
            (e.body.step, e.body.worker, e.body.instructions): e.body.output
            for e in history
            if isinstance(e.body, WorkerFinished) and e.body.error is None
        }
        self.step = 0

    @property
    def completed_steps(self) -> int:
        return max(self.results, default=0)

    def next_step(self, phase: str) -> tuple[int, dict[str, Any] | None]:
        """The next step's number and, if the journal has it, its result."""
        self.step += 1
        finished = self.results.get(self.step)
        if finished is None:
            if self.replay:
                raise JournalError(
                    f"the journal ends before step {self.step} ({phase}): the task did not finish, "
                    "so it cannot be replayed; run it to resume it"
                )
            return self.step, None
        if finished.phase != phase:
            raise JournalError(
                f"step {self.step} of the journal is {finished.phase}, but this run reached "
                f"{phase}: the task file changed since the run was journaled; start a new run "
                "(`foundry task run FILE --new`, or Run Again in the app)"
            )
        return self.step, finished.result

    def already_recorded(self, body: EventBody) -> bool:
        return body in self.recorded
