"""A `foundry task run` killed by SIGKILL resumes from its last completed phase, journal intact."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from foundry.metrics import load_task_log, task_metrics
from foundry.orchestration.events import PhaseFinished, PhaseStarted, TaskFinished, TaskResumed
from foundry.runtime.engine import Engine
from foundry.session.events import event_body
from foundry.store import Store
from tests.killing import count, database_of, run_and_kill
from tests.orchestration.conftest import GREET_CODE, agent, task_file, write

DONE = {"text": "Done. STATUS: done", "delay_s": 0.05}


def finished_steps(database: Path) -> int:
    return count(database, "SELECT count(*) FROM events WHERE kind = 'phase_finished'")


@pytest.mark.parametrize("after_steps", [1, 2, 3])
def test_a_killed_task_resumes_from_its_last_completed_phase(
    tmp_path: Path, after_steps: int
) -> None:
    agent(
        tmp_path / "agents" / "coder",
        [
            {"tool_calls": [write("greetings.py", "def wave():\n    pass\n")], "delay_s": 0.05},
            DONE,
            {
                "text": "Fixing it.",
                "tool_calls": [write("greetings.py", GREET_CODE)],
                "delay_s": 0.3,
            },
            DONE,
        ],
    )
    path = task_file(tmp_path, limits={"interrogationRounds": 0, "stepTimeouts": [30]})
    home = tmp_path / "home"
    argv = ["task", "run", str(path)]
    killed = run_and_kill(argv, home, lambda database: finished_steps(database) >= after_steps)
    assert killed == -signal.SIGKILL, "the run ended before the kill"

    store = Store.open(f"sqlite:///{database_of(home)}")
    [task] = store.tasks.list()
    before = [(e.seq, e.kind, e.payload) for e in store.events.list(task.id)]
    with Engine(store) as engine:
        outcome = engine.submit(engine.run_task(path)).result(60)
    assert (outcome.task_id, outcome.status, outcome.iterations) == (task.id, "succeeded", 2)

    after = store.events.list(task.id)
    assert [(e.seq, e.kind, e.payload) for e in after[: len(before)]] == before  # nothing rewritten
    bodies = [event_body(e.kind, e.payload) for e in after]
    steps = [b.step for b in bodies if isinstance(b, PhaseFinished) and b.step]
    assert steps == [1, 2, 3, 4]  # each phase finished once: none was redone
    started = [b.step for b in bodies if isinstance(b, PhaseStarted) and b.step]
    assert sorted(set(started)) == [1, 2, 3, 4]
    [resumed] = [b.from_step for b in bodies if isinstance(b, TaskResumed)]
    assert resumed > after_steps  # the kill may land a phase later: validation is quick
    assert sum(isinstance(b, TaskFinished) for b in bodies) == 1
    metrics = task_metrics(load_task_log(store, task.id), task.id)
    assert (metrics.status, metrics.iterations) == ("succeeded", 2)
    assert abs(sum(p.share for p in metrics.phases) - 100) < 0.1
    assert store.tasks.get(task.id).status == "succeeded"
    store.close()
