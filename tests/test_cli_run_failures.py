"""`foundry run` says plainly what went wrong: supervisor fallbacks, and who is waited for."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from foundry.cli import main
from tests.runtime.conftest import write_agent
from tests.supervision.test_agent_supervisor import write_supervisor


def agent_with_failing_supervisor(root: Path, fallback: str) -> Path:
    write_supervisor(root / "checker", [])  # it has nothing to say: every review fails
    entry = {
        "type": "agent",
        "id": "checker",
        "name": "Checker",
        "config": {
            "agentPath": "../checker",
            "allowedActions": ["READ_ONLY"],
            "fallbackBehavior": fallback,
            "applyTo": ["request"],
        },
    }
    turns = {"turns": [{"text": "Hello there."}]}
    return write_agent(root / "agent", turns, servers={}, supervisors=[entry])


@pytest.mark.parametrize(("fallback", "code"), [("allow", 0), ("block", 1)])
def test_run_prints_each_supervisor_fallback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fallback: str, code: int
) -> None:
    agent = agent_with_failing_supervisor(tmp_path, fallback)
    assert main(["run", "--wait-reviews", str(agent), "-m", "hi"]) == code
    error = capsys.readouterr().err
    [line] = [line for line in error.splitlines() if line.startswith("[supervisor fallback]")]
    assert "Checker on the request" in line and f"fallback: {fallback}" in line


def test_run_json_lists_the_fallbacks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    agent = agent_with_failing_supervisor(tmp_path, "allow")
    assert main(["run", "--json", "--wait-reviews", str(agent), "-m", "hi"]) == 0
    captured = capsys.readouterr()
    summary = json.loads(captured.out)
    [fallback] = summary["supervisor_fallbacks"]
    assert (fallback["supervisor"], fallback["direction"], fallback["action"]) == (
        "Checker",
        "request",
        "allow",
    )
    assert "fallback: allow" in fallback["reason"]
    assert summary["reply"] == "Hello there."
    assert "[supervisor fallback]" in captured.err


def test_run_json_lists_no_fallbacks_when_none_happened(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agent = write_agent(tmp_path / "plain", {"turns": [{"text": "Hi."}]}, servers={})
    assert main(["run", "--json", str(agent), "-m", "hi"]) == 0
    assert json.loads(capsys.readouterr().out)["supervisor_fallbacks"] == []


def agent_with_slow_reader(root: Path, delay_s: float) -> Path:
    """An agent whose Reader supervisor reviews after the reply, `delay_s` a word."""
    allow = {"name": "supervised_allow_message", "arguments": {"reason": "fine"}}
    slow = [{"text": "Reading the reply slowly before I allow it.", "tool_calls": [allow]}]
    write_supervisor(root / "reader", slow)
    (root / "reader" / "turns.json").write_text(json.dumps({"turns": slow, "delay_s": delay_s}))
    entry = {
        "type": "agent",
        "id": "reader",
        "name": "Reader",
        "config": {"agentPath": "../reader", "allowedActions": ["READ_ONLY"]},
    }
    turns = {"turns": [{"text": "Hello there."}]}
    return write_agent(root / "agent", turns, servers={}, supervisors=[entry])


def test_run_says_which_reviews_after_the_reply_it_waits_for(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agent = agent_with_slow_reader(tmp_path, 0.2)
    assert main(["run", "--wait-reviews", str(agent), "-m", "hi"]) == 0
    captured = capsys.readouterr()
    assert "Hello there." in captured.out
    waiting = [line for line in captured.err.splitlines() if line.startswith("[after the reply]")]
    assert waiting == [
        "[after the reply] waiting for Reader to finish reviewing (Ctrl+C stops them)"
    ]


def test_run_returns_after_the_reply_and_says_which_reviews_it_stopped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agent = agent_with_slow_reader(tmp_path, 30.0)  # a review that would take minutes
    assert main(["run", "--json", str(agent), "-m", "hi"]) == 0
    captured = capsys.readouterr()
    summary = json.loads(captured.out)
    assert summary["reply"] == "Hello there."
    late = [line for line in captured.err.splitlines() if line.startswith("[after the reply]")]
    assert late == [
        "[after the reply] not waiting for Reader: stopped, and recorded as not finished "
        "(--wait-reviews waits for them)"
    ]
    stopped = summary["supervisor_fallbacks"]  # recorded, not lost: the request's and reply's
    assert sorted((s["supervisor"], s["direction"]) for s in stopped) == [
        ("Reader", "request"),
        ("Reader", "response"),
    ]
    assert all("stopped before it finished" in s["reason"] for s in stopped)
