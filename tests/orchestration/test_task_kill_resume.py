"""A `foundry task run` killed by SIGKILL resumes from its last completed phase, journal intact."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from foundry.metrics import load_task_log, task_metrics
from foundry.orchestration.events import PhaseFinished, PhaseStarted, TaskFinished, TaskResumed
from foundry.runtime.engine import Engine
from foundry.session.events import event_body
from foundry.store import Store
from tests.orchestration.conftest import GREET_CODE, agent, task_file, write

DONE = {"text": "Done. STATUS: done", "delay_s": 0.05}


def finished_steps(database: Path) -> int:
    if not database.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=5) as connection:
            rows = connection.execute("SELECT count(*) FROM events WHERE kind = 'phase_finished'")
            return int(rows.fetchone()[0])
    except sqlite3.OperationalError:
        return 0


def run_and_kill(path: Path, home: Path, after_steps: int) -> int:
    process = subprocess.Popen(
        [sys.executable, "-m", "foundry.cli", "task", "run", str(path)],
        env=dict(os.environ, FOUNDRY_HOME=str(home)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    database = home / "data" / "foundry.sqlite3"
    deadline = time.monotonic() + 60
    while process.poll() is None and time.monotonic() < deadline:
        if finished_steps(database) >= after_steps:
            process.send_signal(signal.SIGKILL)
            break
        time.sleep(0.005)
    return process.wait(30)


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
    assert run_and_kill(path, home, after_steps) == -signal.SIGKILL, "the run ended before the kill"

    store = Store.open(f"sqlite:///{home / 'data' / 'foundry.sqlite3'}")
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
