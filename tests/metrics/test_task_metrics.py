"""TaskMetrics of the fixture log, against figures worked out by hand."""

from __future__ import annotations

import pytest

from foundry.metrics import ConsultSize, PhaseTime, TaskMetrics, task_metrics
from foundry.metrics.task import phase_times
from foundry.orchestration.events import TaskResumed
from foundry.session.events import Event

from .fixture_log import T0, TASK, LogWriter, at, endpoint_log, finished, full_log, started

# The endpoint task, event by event (seconds after T0), and where each gap goes:
#     0 task_started, planning started
#    20 supervisor consulted            planning   0 -> 20   20
#    25 planning finished                planning  20 -> 25    5   planning = 25
#    25 agent_execution 1 started
#    40 waiting_for_approval started     agent     25 -> 40   15
#   105 waiting finished                 waiting   40 -> 105  65   waiting = 65
#   125 operator consulted               agent    105 -> 125  20
#   130 agent_execution 1 finished       agent    125 -> 130   5   (iteration 1: 40)
#   135 validation 1 started             other    130 -> 135   5
#   155 validation 1 finished            valid.   135 -> 155  20
#   155 interrogation started
#   180 interrogation finished           interr.  155 -> 180  25   interrogation = 25
#   185 retry decided, agent 2 started   other    180 -> 185   5
#   200 worker consulted                 agent    185 -> 200  15
#   --- the process dies; task_resumed at 500: 200 -> 500 (300 s) counts for nothing
#   500 agent_execution 2 started again
#   550 agent_execution 2 finished       agent    500 -> 550  50   agent = 40 + 15 + 50 = 105
#   550 validation 2 started
#   570 validation 2 finished            valid.   550 -> 570  20   validation = 20 + 20 = 40
#   570 helper started
#   585 helper finished                  helper   570 -> 585  15   helper = 15
#   590 retry decided, rescue started    other    585 -> 590   5
#   615 rescue finished                  rescue   590 -> 615  25   rescue = 25
#   620 task finished                    other    615 -> 620   5   other = 4 x 5 = 20
# Total: 620 - 300 = 320 = 25 + 105 + 65 + 40 + 25 + 15 + 25 + 20.
# Shares (x 100 / 320): planning 7.8125, agent 32.8125, validation 12.5, helper 4.6875,
# interrogation 7.8125, rescue 7.8125, waiting 20.3125, other 6.25; sum 100.
EXPECTED_PHASES = (
    PhaseTime(phase="planning", seconds=25.0, share=7.8125),
    PhaseTime(phase="agent_execution", seconds=105.0, share=32.8125),
    PhaseTime(phase="validation", seconds=40.0, share=12.5),
    PhaseTime(phase="helper", seconds=15.0, share=4.6875),
    PhaseTime(phase="interrogation", seconds=25.0, share=7.8125),
    PhaseTime(phase="rescue", seconds=25.0, share=7.8125),
    PhaseTime(phase="waiting_for_approval", seconds=65.0, share=20.3125),
    PhaseTime(phase="other", seconds=20.0, share=6.25),
)
# The seven consults (role, agent, prompt, response, tokens in, out, seconds):
EXPECTED_CONSULTS = tuple(
    ConsultSize(
        role=role,
        agent=agent,
        prompt_chars=prompt,
        response_chars=response,
        input_tokens=tokens_in,
        output_tokens=tokens_out,
        seconds=seconds,
    )
    for role, agent, prompt, response, tokens_in, tokens_out, seconds in (
        ("supervisor", "planner", 1200, 800, 300, 200, 19.5),
        ("operator", "coder", 2000, 1500, 500, 400, 84.0),
        ("operator", "coder", 600, 400, 150, 100, 14.0),
        ("worker", "tester", 300, 200, 80, 60, 14.0),
        ("operator", "coder", 2200, 1700, 550, 450, 39.0),
        ("helper", "reviewer", 950, 400, 220, 70, 9.0),
        ("supervisor", "planner", 1500, 600, 380, 150, 14.0),
    )
)
EXPECTED = TaskMetrics(
    task_id=TASK,
    name="add-endpoint",
    status="failed",
    started_at=T0,
    last_event_at=at(620),
    iterations=2,  # agent_execution of iterations 1 and 2 (2 started twice: counted once)
    supervisor_calls=2,
    operator_calls=3,
    helper_calls=1,
    worker_calls=1,
    interrogation_rounds=1,
    rescues=("ADJUST_PLAN",),
    prompt_chars=8750,  # 1200 + 2000 + 600 + 300 + 2200 + 950 + 1500
    response_chars=5600,  # 800 + 1500 + 400 + 200 + 1700 + 400 + 600
    input_tokens=2180,  # 300 + 500 + 150 + 80 + 550 + 220 + 380
    output_tokens=1430,  # 200 + 400 + 100 + 60 + 450 + 70 + 150
    consults=EXPECTED_CONSULTS,
    confidence_scores=(82.0, 40.0, 55.0, 90.0, 45.0),
    retry_reasons=(
        "tests pass failed: test_get_user returns 404",
        "the same error twice: AssertionError in test_get_user",
    ),
    phases=EXPECTED_PHASES,
    total_seconds=320.0,
    bottleneck="agent_execution",
)


def test_the_fixture_task_matches_the_hand_computed_metrics() -> None:
    metrics = task_metrics(endpoint_log())
    assert metrics == EXPECTED
    assert metrics.prompt_chars_per_consult == 1250.0  # 8750 / 7
    assert metrics.response_chars_per_consult == 800.0  # 5600 / 7
    assert sum(entry.share for entry in metrics.phases) == 100.0


def test_events_of_other_sessions_and_their_order_do_not_change_the_metrics() -> None:
    assert task_metrics(list(reversed(endpoint_log()))) == EXPECTED
    assert task_metrics(list(reversed(full_log())), task_id=TASK) == EXPECTED


def test_a_log_without_a_task_start_is_refused() -> None:
    chats_only = [event for event in endpoint_log() if event.session_id != TASK]
    with pytest.raises(ValueError, match="task_started"):
        task_metrics(chats_only)


def _log(*entries: tuple[float, object]) -> list[Event]:
    log = LogWriter()
    for seconds, body in entries:
        log.add(TASK, seconds, body)  # type: ignore[arg-type]
    return log.events


def _seconds(events: list[Event]) -> dict[str, float]:
    return {entry.phase: entry.seconds for entry in phase_times(events) if entry.seconds}


def test_a_phase_left_open_by_a_crash_gets_no_time_after_the_resume() -> None:
    events = _log(
        (0, started("validation", 1, 3)),
        (10, started("helper", 1, 4)),  # validation 0 -> 10
        (30, TaskResumed(from_step=4)),  # 10 -> 30 lost; both phases closed
        (32, started("helper", 1, 4)),  # other 30 -> 32
        (40, finished("helper", 1, 4)),  # helper 32 -> 40
        (45, finished("validation", 1, 3)),  # validation was closed: other 40 -> 45
    )
    assert _seconds(events) == {"validation": 10.0, "helper": 8.0, "other": 7.0}


def test_a_phase_finished_out_of_order_closes_the_innermost_of_its_kind() -> None:
    events = _log(
        (0, started("agent_execution", 1)),
        (5, started("waiting_for_approval", 1)),  # agent 0 -> 5
        (9, finished("agent_execution", 1)),  # waiting 5 -> 9; agent closed under it
        (12, finished("waiting_for_approval", 1)),  # waiting 9 -> 12
        (20, started("rescue", 1)),  # other 12 -> 20
    )
    assert _seconds(events) == {"agent_execution": 5.0, "waiting_for_approval": 7.0, "other": 8.0}


def test_a_task_that_has_not_finished_is_running_with_no_bottleneck_before_any_phase() -> None:
    metrics = task_metrics([endpoint_log()[0]])
    assert metrics.status == "running"
    assert metrics.total_seconds == 0.0 and metrics.bottleneck is None
    assert all(entry.share == 0.0 for entry in metrics.phases)
