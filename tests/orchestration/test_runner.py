"""Every path of a task run, with scripted agents: success, retry, interrogation, helper, rescue."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

from foundry.orchestration.events import (
    AgentConsulted,
    CriterionScored,
    PhaseFinished,
    RescueDecided,
    RetryDecided,
    TaskFinished,
)
from foundry.runtime.engine import Engine
from foundry.supervision.resolution import resolve_approval
from tests.orchestration.conftest import GREET_CODE, agent, task_file, write
from tests.runtime.conftest import write_agent

DONE = {"text": "Done. STATUS: done"}
PLAN = {
    "understanding": "write greet",
    "complexity": 2,
    "confidence": 0.8,
    "steps": [{"step": 1, "action": "write greetings.py", "params": {}, "fallback": None}],
    "operator": "coder",
    "operator_prompt": "Write greetings.py with greet(name).",
    "timeout_seconds": 10,
    "max_retries": 1,
}
TWO_CRITERIA = [
    {
        "text": "greetings.py defines greet",
        "checks": [{"ast": {"file": "greetings.py", "function": "greet"}}],
    },
    {"text": "it says Hello", "checks": [{"keywords": ["Hello"], "within": "greetings.py"}]},
]


def run_while_a_person_approves(engine: Engine, path: Path):  # type: ignore[no-untyped-def]
    """Run the task while a person approves the first approval that reaches the inbox."""

    def approve_when_asked() -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            pending = engine.store.approvals.list(status="pending")
            if pending:
                time.sleep(0.2)  # a person takes a moment
                resolve_approval(engine.store, pending[0].id, "approved", "human:test")
                return
            time.sleep(0.02)

    person = threading.Thread(target=approve_when_asked)
    person.start()
    try:
        return run(engine, path)
    finally:
        person.join()


def run(engine: Engine, path: Path, **options: bool):  # type: ignore[no-untyped-def]
    return engine.submit(engine.run_task(path, **options)).result(60)


def events(engine: Engine, task_id: str) -> list:  # type: ignore[type-arg]
    return [e.body for e in engine.submit(engine.events(task_id)).result()]


def test_a_task_that_succeeds_at_once(engine: Engine, tmp_path: Path) -> None:
    agent(
        tmp_path / "agents" / "coder", [{"tool_calls": [write("greetings.py", GREET_CODE)]}, DONE]
    )
    outcome = run(engine, task_file(tmp_path))

    assert (outcome.status, outcome.iterations, outcome.supervisor_calls) == ("succeeded", 1, 0)
    assert (tmp_path / "workspace" / "greetings.py").read_text() == GREET_CODE
    bodies = events(engine, outcome.task_id)
    scored = [b for b in bodies if isinstance(b, CriterionScored)]
    assert [(s.level, s.score) for s in scored] == [("pass", 92.0)]  # (40*0.9 + 10) / 50
    assert [b.phase for b in bodies if isinstance(b, PhaseFinished)] == [
        "agent_execution",
        "validation",
    ]
    assert isinstance(bodies[-1], TaskFinished) and bodies[-1].status == "succeeded"


def test_a_failed_validation_is_retried_with_a_fix_prompt(engine: Engine, tmp_path: Path) -> None:
    coder = agent(
        tmp_path / "agents" / "coder",
        [
            {"tool_calls": [write("greetings.py", "def wave():\n    pass\n")]},
            DONE,
            {"tool_calls": [write("greetings.py", GREET_CODE)]},
            DONE,
        ],
    )
    outcome = run(
        engine, task_file(tmp_path, limits={"interrogationRounds": 0, "stepTimeouts": [20]})
    )

    assert (outcome.status, outcome.iterations) == ("succeeded", 2)
    retries = [b for b in events(engine, outcome.task_id) if isinstance(b, RetryDecided)]
    assert [(r.retry, r.approach) for r in retries] == [(True, "fix")]
    session = engine.store.sessions.list()[0]
    fix = [m.content for m in engine.store.messages.list(session.id) if m.role == "user"][1]
    assert "not met yet" in fix and "greetings.py defines greet" in fix and "def greet" in fix
    assert coder.exists()


def test_interrogation_finds_the_criterion_in_the_file_the_agent_names(
    engine: Engine, tmp_path: Path
) -> None:
    agent(
        tmp_path / "agents" / "coder",
        [
            {"tool_calls": [write("lib/greet.py", GREET_CODE)]},
            DONE,
            {"text": "It is implemented in lib/greet.py, as asked."},
        ],
    )
    criteria = [
        {
            "text": "the greeting says `Hello`",
            "checks": [{"keywords": ["Hello"], "within": "src/*.py"}],
        }
    ]
    outcome = run(engine, task_file(tmp_path, criteria=criteria))

    assert (outcome.status, outcome.iterations) == ("succeeded", 1)
    scored = [b for b in events(engine, outcome.task_id) if isinstance(b, CriterionScored)]
    assert [(s.by, s.level) for s in scored] == [("checks", "fail"), ("interrogation", "pass")]
    assert "lib/greet.py" in scored[-1].evidence[0]


def test_the_helper_counts_only_when_its_quote_is_really_in_the_file(
    engine: Engine, tmp_path: Path
) -> None:
    agent(
        tmp_path / "agents" / "coder",
        [{"tool_calls": [write("greetings.py", GREET_CODE)]}, DONE, DONE],
    )
    verdict = {"criterion": "greet is documented", "verified": True, "confidence": 0.9}
    agent(
        tmp_path / "agents" / "helper",
        [
            {
                "json": {
                    "criteria": [
                        {**verdict, "evidence": [{"file": "greetings.py", "quote": "not there"}]}
                    ]
                }
            },
            {
                "json": {
                    "criteria": [
                        {
                            **verdict,
                            "evidence": [{"file": "greetings.py", "quote": "def greet(name):"}],
                        }
                    ]
                }
            },
        ],
    )
    # files present (20) + claim (10) and no code evidence: 100 * 30/30... so use keywords too
    criteria = [
        {
            "text": "greet is documented",
            "checks": [
                {"files": ["greetings.py"]},
                {"keywords": ["Hello", "docstring"], "within": "greetings.py"},
            ],
        }
    ]
    path = task_file(
        tmp_path,
        criteria=criteria,
        helper="agents/helper",
        limits={"interrogationRounds": 0, "maxIterations": 2, "stepTimeouts": [20]},
    )
    outcome = run(engine, path)

    scored = [b for b in events(engine, outcome.task_id) if isinstance(b, CriterionScored)]
    # checks: files 1.0 (20), code 0.4 (40*0.4=16), claim (10): 46/70 = 65.71 -> uncertain
    assert [(s.by, s.level, s.score) for s in scored][:1] == [("checks", "uncertain", 65.71)]
    # first helper answer quotes text that is not in the file: nothing changes, the task retries;
    # the second quotes the file: code evidence (0.4 + 1.0) / 2 = 0.7 -> (20 + 28 + 10) / 70
    assert [(s.by, s.score) for s in scored if s.by == "helper"] == [("helper", 82.86)]
    assert outcome.status == "succeeded" and outcome.iterations == 2
    helpers = [
        b
        for b in events(engine, outcome.task_id)
        if isinstance(b, AgentConsulted) and b.role == "helper"
    ]
    assert len(helpers) == 2


def test_rescue_adjusts_the_plan(engine: Engine, tmp_path: Path) -> None:
    agent(
        tmp_path / "agents" / "coder",
        [DONE, DONE, {"tool_calls": [write("greetings.py", GREET_CODE)]}, DONE],
    )
    adjusted = {**PLAN, "operator_prompt": "Write the file now, with the tool."}
    rescue = {"analysis": "nothing was written", "action": "ADJUST_PLAN", "adjusted_plan": adjusted}
    agent(tmp_path / "agents" / "planner", [{"json": PLAN}, {"json": rescue}])
    path = task_file(
        tmp_path,
        criteria=TWO_CRITERIA,
        supervisor="agents/planner",
        limits={"interrogationRounds": 0, "stepTimeouts": [20], "maxRetries": 0},
    )
    outcome = run(engine, path)

    assert (outcome.status, outcome.iterations, outcome.supervisor_calls) == ("succeeded", 3, 2)
    bodies = events(engine, outcome.task_id)
    assert [r.action for r in bodies if isinstance(r, RescueDecided)] == ["ADJUST_PLAN"]
    assert [r.approach for r in bodies if isinstance(r, RetryDecided)] == ["fix", "rescue"]


def test_rescue_changes_the_agent(engine: Engine, tmp_path: Path) -> None:
    agent(tmp_path / "agents" / "coder", [DONE, DONE])
    agent(
        tmp_path / "agents" / "senior", [{"tool_calls": [write("greetings.py", GREET_CODE)]}, DONE]
    )
    rescue = {
        "analysis": "coder does not use tools",
        "action": "CHANGE_AGENT",
        "new_operator": "senior",
    }
    agent(tmp_path / "agents" / "planner", [{"json": PLAN}, {"json": rescue}])
    path = task_file(
        tmp_path,
        criteria=TWO_CRITERIA,
        operators=["agents/coder", "agents/senior"],
        supervisor="agents/planner",
        limits={"interrogationRounds": 0, "stepTimeouts": [20], "maxRetries": 0},
    )
    outcome = run(engine, path)

    assert (outcome.status, outcome.iterations) == ("succeeded", 3)
    consulted = [
        (b.role, b.agent) for b in events(engine, outcome.task_id) if isinstance(b, AgentConsulted)
    ]
    assert consulted == [
        ("supervisor", "planner"),
        ("operator", "coder"),
        ("operator", "coder"),
        ("supervisor", "planner"),
        ("operator", "senior"),
    ]


def test_rescue_takes_over(engine: Engine, tmp_path: Path) -> None:
    agent(tmp_path / "agents" / "coder", [DONE, DONE])
    rescue = {
        "analysis": "I will do it",
        "action": "TAKEOVER",
        "direct_result": "Written by the supervisor.",
    }
    agent(
        tmp_path / "agents" / "planner",
        [
            {"json": PLAN},
            {"json": rescue},
            {"tool_calls": [write("greetings.py", GREET_CODE)]},
            DONE,
        ],
    )
    path = task_file(
        tmp_path,
        criteria=TWO_CRITERIA,
        supervisor="agents/planner",
        limits={"interrogationRounds": 0, "stepTimeouts": [20], "maxRetries": 0},
    )
    outcome = run(engine, path)

    assert (outcome.status, outcome.iterations, outcome.supervisor_calls) == ("succeeded", 3, 3)
    assert [r.action for r in events(engine, outcome.task_id) if isinstance(r, RescueDecided)] == [
        "TAKEOVER"
    ]


def test_a_task_file_with_errors_names_file_field_and_line(tmp_path: Path) -> None:
    import pytest

    from foundry.agent.problems import AgentError
    from foundry.orchestration.taskfile import load_task

    path = tmp_path / "task.yaml"
    path.write_text(
        "name: x\ngoal: y\ncriteria: []\noperators: [agents/none]\nlimits:\n  maxIterations: 0\n"
    )
    with pytest.raises(AgentError) as caught:
        load_task(path)
    text = str(caught.value)
    assert f"{path}:3: criteria:" in text and f"{path}:6: limits.maxIterations:" in text
    assert json.dumps(text)  # every problem at once, one per line


def test_workspace_writes_pass_the_approval_hierarchy_and_waiting_is_a_phase(
    engine: Engine, tmp_path: Path
) -> None:
    from foundry.orchestration.events import PhaseStarted

    policy = {
        "type": "policy",
        "id": "tool-policy",
        "name": "Tool approvals",
        "config": {
            "rules": [
                {"name": "writes-need-a-person", "tool": "workspace.write_*", "action": "human"}
            ],
            "approvalTimeoutSeconds": 30,
        },
    }
    turns = {"turns": [{"tool_calls": [write("greetings.py", GREET_CODE)]}, DONE]}
    write_agent(tmp_path / "agents" / "coder", turns, servers={}, supervisors=[policy])

    outcome = run_while_a_person_approves(engine, task_file(tmp_path))

    assert outcome.status == "succeeded"
    [approval] = engine.store.approvals.list()
    assert (approval.tool, approval.status) == ("workspace.write_file", "approved")
    bodies = events(engine, outcome.task_id)
    waits = [
        b
        for b in bodies
        if isinstance(b, PhaseStarted | PhaseFinished) and b.phase == "waiting_for_approval"
    ]
    assert [type(b).__name__ for b in waits] == ["PhaseStarted", "PhaseFinished"]
    assert waits[0].label == "workspace.write_file" and waits[0].iteration == 1


def test_a_write_that_needs_permission_is_asked_in_the_inbox_without_a_policy(
    engine: Engine, tmp_path: Path
) -> None:
    turns = {"turns": [{"tool_calls": [write("greetings.py", GREET_CODE)]}, DONE]}
    write_agent(
        tmp_path / "agents" / "coder", turns, servers={}, settings={"toolPermission": "tool"}
    )

    outcome = run_while_a_person_approves(engine, task_file(tmp_path))

    assert outcome.status == "succeeded"
    [approval] = engine.store.approvals.list()
    assert (approval.tool, approval.status, approval.policy_rule) == (
        "workspace.write_file",
        "approved",
        "toolPermission",
    )
