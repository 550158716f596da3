"""Delegation to a task's team: each worker runs through the desk, its answer journaled."""

from __future__ import annotations

import time

from foundry.orchestration.desk import AgentDesk, Emit
from foundry.orchestration.events import WorkerFinished
from foundry.orchestration.taskfile import WorkerSpec
from foundry.orchestration.tools import TeamTools


class Delegation:
    """Builds the team tools of a coordinator (and of workers that lead teams of their own) and
    runs the workers; a worker's journaled answer is returned without running it again."""

    def __init__(
        self, desk: AgentDesk, emit: Emit, journaled: dict[tuple[int, str, str], str]
    ) -> None:
        self.desk = desk
        self.emit = emit
        self.journaled = journaled  # (step, worker, instructions) -> answer, from the journal
        self.step = 0  # the step delegating now: a later iteration's delegation runs again
        self._started = time.monotonic()

    def team(self, workers: dict[str, WorkerSpec], prefix: str = "") -> TeamTools:
        async def run_worker(name: str, instructions: str) -> str:
            return await self.run_worker(f"{prefix}{name}", workers[name], instructions)

        return TeamTools({n: w.description for n, w in workers.items()}, run_worker)

    async def run_worker(self, name: str, worker: WorkerSpec, instructions: str) -> str:
        journaled = self.journaled.get((self.step, name, instructions))
        if journaled is not None:
            return journaled
        started = self._clock()
        nested = self.team(worker.workers, f"{name}/") if worker.workers else None
        path = self.desk.task.agent_path(worker.agent)
        reply = await self.desk.consult(
            "worker", name, instructions, extra_tools=nested, agent_path=path
        )
        output = reply.text if reply.ok else f"{name} failed: {reply.error}"
        await self.emit(
            WorkerFinished(
                step=self.step,
                worker=name,
                instructions=instructions,
                output=output,
                session_id=reply.session_id,
                started_s=started,
                finished_s=self._clock(),
                error=None if reply.ok else reply.error,
            )
        )
        return output

    def _clock(self) -> float:
        """Seconds since the task (this run of it) started."""
        return round(time.monotonic() - self._started, 3)
