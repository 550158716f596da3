"""The dashboard series of the fixture log and their filters (their CSV files: test_export.py)."""

from __future__ import annotations

from foundry.metrics import (
    MetricsFilter,
    confidence_series,
    dashboard_series,
    human_wait_series,
    iterations_series,
    model_call_series,
    phase_share_series,
    resolution_level,
    resolution_series,
)

from .fixture_log import DOCS_TASK, TASK, at, full_log


def test_confidence_points_follow_the_criterion_scores_in_time() -> None:
    points = confidence_series(full_log())
    assert [(p.time, p.task, p.criterion, p.score, p.level) for p in points] == [
        (at(145), "add-endpoint", "endpoint exists", 82.0, "pass"),
        (at(150), "add-endpoint", "tests pass", 40.0, "fail"),
        (at(175), "add-endpoint", "tests pass", 55.0, "uncertain"),
        (at(560), "add-endpoint", "endpoint exists", 90.0, "pass"),
        (at(565), "add-endpoint", "tests pass", 45.0, "fail"),
        (at(1045), "write-docs", "docs complete", 88.0, "pass"),
    ]
    assert points[2].by == "interrogation"


def test_iterations_and_phase_shares_per_task() -> None:
    events = full_log()
    assert [(p.task, p.iterations, p.status) for p in iterations_series(events)] == [
        ("add-endpoint", 2, "failed"),
        ("write-docs", 1, "succeeded"),
    ]
    shares = {(p.task_id, p.phase): p.share for p in phase_share_series(events) if p.share}
    # write-docs: planning 10 s, agent execution 30 s, validation 10 s of 50 s
    assert {k: v for k, v in shares.items() if k[0] == DOCS_TASK} == {
        (DOCS_TASK, "planning"): 20.0,
        (DOCS_TASK, "agent_execution"): 60.0,
        (DOCS_TASK, "validation"): 20.0,
    }
    assert shares[(TASK, "waiting_for_approval")] == 20.3125  # 65 s of 320 s


def test_model_calls_carry_their_session_agent_and_task() -> None:
    points = model_call_series(full_log())
    rows = [
        (p.session_id, p.agent, p.task, p.input_tokens, p.output_tokens, p.total_s) for p in points
    ]
    assert rows == [
        ("chat-sup", "planner", "add-endpoint", 300, 200, 18.5),
        ("chat-op", "coder", "add-endpoint", 500, 400, 19.0),
        ("chat-op", "coder", "add-endpoint", 150, 100, 14.0),
        ("chat-op", "coder", "add-endpoint", 550, 450, 38.5),
        ("chat-help", "reviewer", "add-endpoint", 220, 70, 8.0),
        ("chat-sup", "planner", "add-endpoint", 380, 150, 13.5),
        ("chat-free", "assistant", "", 120, 30, 2.0),
        ("chat-doc", "writer", "write-docs", 200, 600, 23.0),
    ]
    assert points[4].first_token_s is None


def test_resolutions_by_level_and_human_waits() -> None:
    events = full_log()
    assert [(p.tool, p.level, p.allowed) for p in resolution_series(events)] == [
        ("fs.read_file", "policy", True),
        ("fs.write_file", "human", True),
        ("shell.run", "supervisor", False),
        ("time.get_current_time", "grant", True),
        ("web.fetch", "timeout", False),
    ]
    waits = human_wait_series(events)
    assert [(p.approval_id, p.agent, p.status, p.waited_s) for p in waits] == [
        ("ap1", "coder", "approved", 65.0),
        ("ap2", "assistant", "timed_out", 90.0),
    ]


def test_the_level_of_a_decider() -> None:
    assert resolution_level("policy:default-deny") == "policy"
    assert resolution_level("agent:supervisor") == "supervisor"
    assert resolution_level("human:gui:ana") == "human"
    assert resolution_level("cli:--yes") == "human"
    assert resolution_level("grant:g_1") == "grant"
    assert resolution_level("timeout") == "timeout"


def test_filters_by_agent_task_and_time_range() -> None:
    events = full_log()
    coder = MetricsFilter(agents=frozenset({"coder"}))
    assert {p.agent for p in model_call_series(events, coder)} == {"coder"}
    assert [p.task for p in iterations_series(events, coder)] == ["add-endpoint"]  # coder's task
    docs = MetricsFilter(task_ids=frozenset({DOCS_TASK}))
    assert [p.criterion for p in confidence_series(events, docs)] == ["docs complete"]
    assert resolution_series(events, docs) == []  # write-docs decided no tool call
    window = MetricsFilter(since=at(500), until=at(800))
    assert [p.score for p in confidence_series(events, window)] == [90.0, 45.0]
    assert [p.session_id for p in model_call_series(events, window)] == [
        "chat-op",
        "chat-help",
        "chat-sup",
        "chat-free",
    ]
    assert iterations_series(events, window) == []  # both tasks started outside the window


def test_the_filter_choices_list_everything_whatever_the_filter() -> None:
    series = dashboard_series(full_log(), MetricsFilter(task_ids=frozenset({DOCS_TASK})))
    assert series.agents == ("assistant", "coder", "planner", "reviewer", "tester", "writer")
    assert [(task.task_id, task.name) for task in series.tasks] == [
        (TASK, "add-endpoint"),
        (DOCS_TASK, "write-docs"),
    ]
