"""`foundry run` as a program ends once its reply is out: its output whole, its session stored,
a slow review not waited for (and said), the exit code kept."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from .runtime.conftest import write_agent
from .test_cli_run_failures import agent_with_failing_supervisor, agent_with_slow_reader

HANG_GUARD_S = 120  # a run that never ends fails here instead of hanging the suite


def foundry(*args: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "foundry.cli", *args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=HANG_GUARD_S)


def test_the_program_prints_the_whole_reply_and_stores_the_session(tmp_path: Path) -> None:
    agent = agent_with_slow_reader(tmp_path, 30.0)  # its review would take minutes
    ran = foundry("run", "--json", str(agent), "-m", "hi")
    assert ran.returncode == 0, ran.stderr
    summary = json.loads(ran.stdout)  # flushed whole before the process ended
    assert summary["reply"] == "Hello there."
    assert "[after the reply] not waiting for Reader" in ran.stderr
    shown = foundry("sessions", "show", summary["session_id"])
    assert shown.returncode == 0 and "Hello there." in shown.stdout


def test_the_program_keeps_the_runs_exit_code(tmp_path: Path) -> None:
    agent = agent_with_failing_supervisor(tmp_path, "block")
    ran = foundry("run", "--wait-reviews", str(agent), "-m", "hi")
    assert ran.returncode == 1
    assert "[supervisor fallback] Checker on the request" in ran.stderr


def test_a_plain_reply_ends_with_its_newline(tmp_path: Path) -> None:
    agent = write_agent(tmp_path / "plain", {"turns": [{"text": "Hi."}]}, servers={})
    ran = foundry("run", str(agent), "-m", "hi")
    assert (ran.returncode, ran.stdout) == (0, "Hi.\n")
