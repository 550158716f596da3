"""Delegation to a team of workers, forward_message, replay from the journal, growing timeouts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from foundry.orchestration.events import AgentConsulted, TaskFinished, WorkerFinished
from foundry.orchestration.tools import TeamTools
from foundry.runtime.engine import Engine
from tests.orchestration.conftest import GREET_CODE, agent, task_file, write
from tests.orchestration.test_runner import events, run

ANSWER = "The capital of France is Paris.\n\n(Checked in two atlases.)"


def delegate(worker: str, instructions: str) -> dict[str, Any]:
    return {"name": "team.delegate", "arguments": {"worker": worker, "instructions": instructions}}


def team_task(tmp_path: Path) -> Path:
    agent(tmp_path / "agents" / "atlas", [{"text": ANSWER, "delay_s": 0.05}])
    agent(
        tmp_path / "agents" / "poet",
        [{"text": "Paris, city of light, rhymes with nothing at all", "delay_s": 0.05}],
    )
    agent(
        tmp_path / "agents" / "lead",
        [
            {
                "tool_calls": [
                    delegate("atlas", "Name the capital of France."),
                    delegate("poet", "A line about Paris."),
                ]
            },
            {"tool_calls": [{"name": "team.forward_message", "arguments": {"worker": "atlas"}}]},
        ],
    )
    return task_file(
        tmp_path,
        goal="What is the capital of France?",
        criteria=[{"text": "names Paris", "checks": [{"reply": ["Paris"]}]}],
        supervisor="agents/lead",
        operators={},
        team={
            "atlas": {"agent": "agents/atlas", "description": "facts"},
            "poet": {"agent": "agents/poet"},
        },
    )


def test_two_delegations_overlap_and_forward_returns_the_answer_verbatim(
    engine: Engine, tmp_path: Path
) -> None:
    outcome = run(engine, team_task(tmp_path))

    assert outcome.status == "succeeded"
    assert outcome.output == ANSWER  # word for word, no synthesis round trip
    bodies = events(engine, outcome.task_id)
    workers = {b.worker: b for b in bodies if isinstance(b, WorkerFinished)}
    atlas, poet = workers["atlas"], workers["poet"]
    assert atlas.started_s < poet.finished_s and poet.started_s < atlas.finished_s  # concurrent
    lead = [b for b in bodies if isinstance(b, AgentConsulted) and b.role == "supervisor"]
    assert [b.model_calls for b in lead] == [2]  # delegate, forward: no third call to synthesise


def test_replay_returns_the_journaled_results_without_calling_any_model(
    engine: Engine, tmp_path: Path
) -> None:
    path = team_task(tmp_path)
    first = run(engine, path)
    for turns in (tmp_path / "agents").glob("*/turns.json"):
        turns.write_text('{"turns": []}')  # any model call now fails

    replayed = run(engine, path, replay=True)

    assert (replayed.status, replayed.output) == (first.status, first.output)
    assert replayed.model_calls == 0 and replayed.replayed_steps == 2
    finished = [b for b in events(engine, first.task_id) if isinstance(b, TaskFinished)]
    assert len(finished) == 1  # a replay writes nothing


def test_a_replay_of_a_task_that_never_ran_says_so(engine: Engine, tmp_path: Path) -> None:
    import pytest

    from foundry.runtime.engine import TaskNotFound

    with pytest.raises(TaskNotFound, match="has not run yet"):
        run(engine, team_task(tmp_path), replay=True)


async def test_workers_can_be_added_and_removed_between_runs() -> None:
    calls: list[tuple[str, str]] = []

    async def run_worker(name: str, instructions: str) -> str:
        calls.append((name, instructions))
        return f"{name} did it"

    team = TeamTools({"a": ""}, run_worker)
    team.add_worker("b", "the new one")
    assert team.tools()[0].parameters["properties"]["worker"]["enum"] == ["a", "b"]
    assert (
        await team.call("team.delegate", {"worker": "b", "instructions": "go"})
    ).text == "b did it"
    team.remove_worker("a")
    missing = await team.call("team.delegate", {"worker": "a", "instructions": "go"})
    assert missing.is_error and "no worker 'a'" in missing.text
    assert calls == [("b", "go")]


def test_a_worker_can_lead_a_team_of_its_own(engine: Engine, tmp_path: Path) -> None:
    agent(
        tmp_path / "agents" / "coder",
        [{"tool_calls": [write("greetings.py", GREET_CODE)]}, {"text": "written"}],
    )
    agent(
        tmp_path / "agents" / "sublead",
        [
            {"tool_calls": [delegate("coder", "write greetings.py")]},
            {"text": "coder wrote it. STATUS: done"},
        ],
    )
    agent(
        tmp_path / "agents" / "lead",
        [
            {"tool_calls": [delegate("sublead", "get greet written")]},
            {"text": "Done. STATUS: done"},
        ],
    )
    team = {"sublead": {"agent": "agents/sublead", "workers": {"coder": {"agent": "agents/coder"}}}}
    path = task_file(tmp_path, supervisor="agents/lead", operators={}, team=team)
    outcome = run(engine, path)

    assert outcome.status == "succeeded"
    workers = [b.worker for b in events(engine, outcome.task_id) if isinstance(b, WorkerFinished)]
    assert workers == ["sublead/coder", "sublead"]


def test_timeouts_grow_from_one_attempt_to_the_next(engine: Engine, tmp_path: Path) -> None:
    agent(tmp_path / "agents" / "coder", [{"text": "Hello written. STATUS: done", "delay_s": 0.3}])
    criteria = [{"text": "answer says Hello", "checks": [{"reply": ["Hello"]}]}]
    limits = {"stepTimeouts": [0.1, 5], "maxRetries": 2}
    outcome = run(engine, task_file(tmp_path, criteria=criteria, limits=limits))

    assert outcome.status == "succeeded"
    consulted = [b for b in events(engine, outcome.task_id) if isinstance(b, AgentConsulted)]
    assert [b.ended_by for b in consulted] == ["timeout", "reply"]


async def test_workspace_tools_stay_inside_the_workspace(tmp_path: Path) -> None:
    from foundry.orchestration.tools import workspace_tools

    tools = workspace_tools(tmp_path)
    written = await tools.call("workspace.write_file", {"path": "a/b.txt", "content": "hi"})
    assert not written.is_error and (tmp_path / "a" / "b.txt").read_text() == "hi"
    escaped = await tools.call("workspace.write_file", {"path": "../evil.txt", "content": "x"})
    assert escaped.is_error and "outside the workspace" in escaped.text
    assert not (tmp_path.parent / "evil.txt").exists()
    listed = await tools.call("workspace.list_files", {})
    assert listed.text == "a/b.txt"


def test_a_planned_team_task_still_offers_the_team_to_its_supervisor(
    engine: Engine, tmp_path: Path
) -> None:
    plan = {
        "understanding": "ask the atlas twice",
        "complexity": 3,
        "confidence": 0.9,
        "operator_prompt": "Ask the atlas.",
    }
    agent(tmp_path / "agents" / "atlas", [{"text": "Paris."}, {"text": "The Seine."}])
    agent(
        tmp_path / "agents" / "lead",
        [
            {"json": plan},
            {  # two delegations to one worker in one reply: they take turns in its session
                "tool_calls": [
                    delegate("atlas", "The capital of France?"),
                    delegate("atlas", "Its river?"),
                ]
            },
            {"text": "Paris, on the Seine. STATUS: done"},
        ],
    )
    criteria = [
        {"text": "names Paris", "checks": [{"reply": ["Paris"]}]},
        {"text": "names the Seine", "checks": [{"reply": ["Seine"]}]},
    ]
    team = {"atlas": {"agent": "agents/atlas"}}
    path = task_file(tmp_path, criteria=criteria, supervisor="agents/lead", operators={}, team=team)
    outcome = run(engine, path)

    assert (outcome.status, outcome.output) == ("succeeded", "Paris, on the Seine. STATUS: done")
    answers = [b.output for b in events(engine, outcome.task_id) if isinstance(b, WorkerFinished)]
    assert sorted(answers) == ["Paris.", "The Seine."]


def test_starting_a_task_that_is_running_follows_the_run(engine: Engine, tmp_path: Path) -> None:
    agent(
        tmp_path / "agents" / "coder",
        [{"text": " ".join(f"word{i}" for i in range(200)) + " STATUS: done", "delay_s": 0.02}],
    )
    path = task_file(tmp_path, criteria=[{"text": "words", "checks": [{"reply": ["word"]}]}])
    first = engine.submit(engine.start_task(path)).result(10)
    second = engine.submit(engine.start_task(path)).result(10)
    assert second == first  # the same run, not a second one on the same journal
    outcome = engine.submit(engine.task_outcome(first)).result(60)
    assert outcome.status == "succeeded" and len(engine.store.tasks.list()) == 1


def test_a_run_that_fails_with_an_error_is_marked_failed(engine: Engine, tmp_path: Path) -> None:
    import pytest

    agent(tmp_path / "agents" / "coder", [{"text": "Done. STATUS: done"}])
    path = task_file(tmp_path, criteria=[{"text": "done", "checks": [{"reply": ["Done"]}]}])
    run(engine, path)
    two = [{"text": "done", "checks": [{"reply": ["Done"]}]}, {"text": "and more"}]
    task_file(tmp_path, criteria=two, supervisor="agents/coder")  # now it starts with a plan
    (tmp_path / "agents" / "coder" / "turns.json").write_text('{"turns": []}')
    engine.store.tasks.update(engine.store.tasks.list()[0].id, status="running")  # as if killed
    with pytest.raises(Exception, match="journal"):
        run(engine, path)
    assert engine.store.tasks.list()[0].status == "failed"
