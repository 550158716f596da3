"""The what-if replays recorded calls as they happened: at their recorded times, each session's
calls counted by their own session's gate, with who decided them then and why."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from foundry.agent.models import PolicyConfig, PolicyRule, RateLimit
from foundry.llm.base import ToolCall
from foundry.session.events import ApprovalRequested, ToolCallDecided
from foundry.store import Store
from foundry.supervision.policy import PolicyEngine
from foundry.supervision.policy_check import (
    CallToCheck,
    CheckedCall,
    PolicyChecker,
    calls_from_session,
    check_calls,
    result_line,
)

START = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
READ = {"path": "notes/todo.md"}


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store.open(f"sqlite:///{tmp_path / 'replay.sqlite3'}")
    yield opened
    opened.close()


def reading_policy(**settings: object) -> PolicyConfig:
    rules = [PolicyRule(name="reads-run", tool="files.read_file", action="allow")]
    return PolicyConfig(rules=rules, **settings)  # type: ignore[arg-type]


def replay(
    store: Store, config: PolicyConfig, calls: list[CallToCheck], compiled: bool = False
) -> list[CheckedCall]:
    engine = PolicyEngine(config, Path.cwd()) if compiled else None
    checker = PolicyChecker(store, config, Path.cwd(), compiled=engine)
    return asyncio.run(check_calls(checker, calls))


def reads(seconds_apart: float, count: int = 3, session: str | None = "s1") -> list[CallToCheck]:
    return [
        CallToCheck(
            id=f"c{number}",
            tool="files.read_file",
            params=READ,
            was="allow",
            at=START + timedelta(seconds=number * seconds_apart),
            session=session,
        )
        for number in range(count)
    ]


@pytest.mark.parametrize("compiled", [False, True], ids=["own engine", "compiled once"])
def test_the_same_call_a_minute_apart_is_no_loop_when_replayed(
    store: Store, compiled: bool
) -> None:
    results = replay(store, reading_policy(), reads(seconds_apart=60), compiled)
    assert [result.outcome for result in results] == ["allow", "allow", "allow"]
    assert not any(result.changed for result in results)


def test_the_same_call_within_seconds_is_a_loop_and_says_so(store: Store) -> None:
    results = replay(store, reading_policy(), reads(seconds_apart=1))
    assert [result.outcome for result in results] == ["allow", "allow", "deny"]
    last = results[-1]
    assert last.changed and last.rule is None
    assert last.reason == "loop: the same call 3 times in 10 s"


def test_a_rate_limit_counts_the_recorded_times(store: Store) -> None:
    limit = RateLimit(tool="files.*", max_calls=2, per_seconds=60)
    config = reading_policy(rate_limits=[limit], loop_detection=False)
    spread = replay(store, config, reads(seconds_apart=40))
    bunched = replay(store, config, reads(seconds_apart=5))
    assert [result.outcome for result in spread] == ["allow", "allow", "allow"]
    assert bunched[-1].outcome == "deny"
    assert bunched[-1].reason == "rate limit: 3 calls of files.* in 60 s (limit 2)"


def test_calls_of_two_sessions_are_counted_apart(store: Store) -> None:
    first, second = reads(1, count=2, session="s1"), reads(1, count=2, session="s2")
    results = replay(store, reading_policy(), [first[0], second[0], first[1], second[1]])
    assert [result.outcome for result in results] == ["allow"] * 4


def record(store: Store, session_id: str, body: ToolCallDecided | ApprovalRequested) -> None:
    store.events.append(session_id, body.kind, body.model_dump(mode="json"))


def test_a_recorded_session_gives_each_call_its_time_and_who_decided_it(store: Store) -> None:
    session = store.sessions.create("/agents/reader", agent_name="reader")
    read = ToolCall(id="r", name="files.read_file", arguments=READ)
    mail = ToolCall(id="m", name="mail.send", arguments={"to": "a@example.com"})
    record(store, session.id, ToolCallDecided(call=read, allowed=True, by="policy:reads-run"))
    asked = ApprovalRequested(approval_id="a1", tool="mail.send", level="L2", reason="mail")
    record(store, session.id, asked)
    decided = ToolCallDecided(call=mail, allowed=False, by="human:ana", reason="not today")
    record(store, session.id, decided)
    events = store.events.list(session.id)
    calls = calls_from_session(store, session.id)
    assert [(call.id, call.was, call.was_by, call.session) for call in calls] == [
        ("r", "allow", "policy:reads-run", session.id),
        ("m", "human", "human:ana", session.id),
    ]
    assert calls[0].at == events[0].time
    assert calls[1].at == events[1].time  # when it was put to the person, not when answered
    assert calls[1].was_reason == "not today"


def test_a_changed_decision_names_who_decided_it_then() -> None:
    result = CheckedCall(
        id="c",
        tool="files.read_file",
        level="L0",
        outcome="deny",
        rule=None,
        reason="loop: the same call 3 times in 10 s",
        was="allow",
        was_by="policy:reads-run",
    )
    assert result_line(result) == (
        "c: files.read_file -> deny at L0 (was allow by policy:reads-run): "
        "loop: the same call 3 times in 10 s"
    )
