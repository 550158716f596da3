"""The engine runs sessions on its own loop: scripted turns, the real time MCP server, persistence,
cancellation, errors, and reopening a session where it was."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from foundry.agent.models import PolicyConfig
from foundry.llm.base import ToolCall
from foundry.runtime.engine import Engine
from foundry.session.events import (
    ApprovalRequested,
    ContextSelected,
    ErrorOccurred,
    Event,
    MessageAdded,
    SessionStarted,
    TokenDelta,
    ToolCallDecided,
    TurnFinished,
)
from foundry.session.gate import GateDecision
from foundry.store import Store
from foundry.supervision.policy_check import (
    CheckedCall,
    PolicyChecker,
    calls_from_session,
    check_calls,
    loop_key_note,
    recorded_schemas,
)
from foundry.supervision.resolution import resolve_approval

from ..killing import edited
from .conftest import TIME_SERVER, engine_over, write_agent


def kinds(engine: Engine, session_id: str) -> list[str]:
    return [event.kind for event in engine.submit(engine.events(session_id)).result()]


def test_a_scripted_model_calls_the_real_time_server(engine: Engine, tokyo_agent: Path) -> None:
    session_id = engine.submit(engine.open_session(tokyo_agent)).result()
    result = engine.submit(engine.send(session_id, "What time is it in Tokyo?")).result(60)
    assert result.ended_by == "reply"
    assert result.reply == "It is evening in Tokyo (Asia/Tokyo)."
    assert result.model_calls == 2
    [call] = result.tool_calls
    assert call["name"] == "time.get_current_time" and not call["is_error"]
    assert "Asia/Tokyo" in call["result"]
    assert call["approved_by"] == "policy:toolPermission"
    events = kinds(engine, session_id)
    assert events[0] == "session_started"
    assert events.count("tool_call_finished") == 1 and events[-1] == "turn_finished"


def test_every_event_is_persisted_before_subscribers_see_it(
    engine: Engine, tokyo_agent: Path
) -> None:
    seen: list[tuple[int, bool]] = []

    def check(event: Event) -> None:
        stored = engine.store.events.list(event.session_id, after_seq=event.seq - 1)
        seen.append((event.seq, bool(stored) and stored[0].kind == event.kind))

    engine.bus.subscribe(check)
    session_id = engine.submit(engine.open_session(tokyo_agent)).result()
    engine.submit(engine.send(session_id, "time?")).result(60)
    assert seen and all(persisted for _, persisted in seen)
    numbers = [seq for seq, _ in seen]
    assert numbers == sorted(numbers) == list(range(1, len(numbers) + 1))


def _guarded_agent(root: Path) -> Path:
    """An agent without a policy whose time tool requires a person's permission."""
    guarded = dict(TIME_SERVER, serverToolDefaults={"permissionRequired": True})
    turns = {
        "turns": [
            {"tool_calls": [{"name": "time.get_current_time", "arguments": {"timezone": "UTC"}}]},
            {"text": "Here is the time."},
        ]
    }
    return write_agent(root, turns, servers={"time": guarded})


def _answer_first_approval(store: Store, status: str, reasoning: str) -> str:
    """Answer the first approval that appears, as the app's inbox or the API would."""
    deadline = time.monotonic() + 30
    while not (pending := store.approvals.list(status="pending")):
        assert time.monotonic() < deadline, "no approval reached the inbox"
        time.sleep(0.02)
    resolve_approval(store, pending[0].id, status, "human:inbox", reasoning)
    return pending[0].tool


@pytest.mark.parametrize("status", ["approved", "denied"])
def test_a_tool_that_needs_permission_asks_the_inbox_with_no_one_at_the_terminal(
    engine: Engine, tmp_path: Path, status: str
) -> None:
    session_id = engine.submit(engine.open_session(_guarded_agent(tmp_path / "guarded"))).result()
    turn = engine.submit(engine.send(session_id, "time?"))
    asked = _answer_first_approval(engine.store, status, "decided in the inbox")
    result = turn.result(60)
    [call] = result.tool_calls
    assert asked == "time.get_current_time"
    if status == "approved":
        assert not call["is_error"] and call["approved_by"] == "human:inbox"
    else:
        assert call["is_error"] and "decided in the inbox" in call["result"]
    requested = [
        e.body
        for e in engine.submit(engine.events(session_id)).result()
        if isinstance(e.body, ApprovalRequested)
    ]
    assert [r.tool for r in requested] == ["time.get_current_time"]


def test_the_approver_is_asked_and_its_answer_recorded(engine: Engine, tmp_path: Path) -> None:
    asked: list[ToolCall] = []

    async def approve(call: ToolCall) -> GateDecision:
        asked.append(call)
        return GateDecision(allowed=True, by="human:tester", reason="fine")

    agent = write_agent(
        tmp_path / "asking",
        {
            "turns": [
                {
                    "tool_calls": [
                        {"name": "time.get_current_time", "arguments": {"timezone": "UTC"}}
                    ]
                },
                {"text": "Done."},
            ]
        },
        settings={"toolPermission": "always"},
    )
    session_id = engine.submit(engine.open_session(agent, ask=approve)).result()
    result = engine.submit(engine.send(session_id, "time?")).result(60)
    assert [call.name for call in asked] == ["time.get_current_time"]
    assert result.tool_calls[0]["approved_by"] == "human:tester"
    decisions = [
        e.body
        for e in engine.submit(engine.events(session_id)).result()
        if isinstance(e.body, ToolCallDecided)
    ]
    assert decisions[0].allowed and decisions[0].by == "human:tester"


def test_a_deciders_confidence_is_recorded_with_its_decision(
    engine: Engine, tmp_path: Path
) -> None:
    class Supervisor:  # as the hierarchy's L1 decides
        async def review(self, call: ToolCall, permission_required: bool) -> GateDecision:
            return GateDecision(
                allowed=True, by="agent:supervisor", reason="routine", confidence=0.9
            )

    time_call = {"name": "time.get_current_time", "arguments": {"timezone": "UTC"}}
    agent = write_agent(
        tmp_path / "supervised",
        {"turns": [{"tool_calls": [time_call]}, {"text": "Done."}]},
    )
    session_id = engine.submit(engine.open_session(agent)).result()
    engine._live(session_id).chat.use_gate(Supervisor())  # between turns, on no loop's work
    engine.submit(engine.send(session_id, "time?")).result(60)
    [decided] = [
        e.body
        for e in engine.submit(engine.events(session_id)).result()
        if isinstance(e.body, ToolCallDecided)
    ]
    assert (decided.by, decided.confidence) == ("agent:supervisor", 0.9)


def test_max_chat_turns_stops_the_tool_loop(engine: Engine, tmp_path: Path) -> None:
    again = {"tool_calls": [{"name": "time.get_current_time", "arguments": {"timezone": "UTC"}}]}
    agent = write_agent(tmp_path / "looping", {"turns": [again] * 5}, settings={"maxChatTurns": 2})
    session_id = engine.submit(engine.open_session(agent)).result()
    result = engine.submit(engine.send(session_id, "loop")).result(60)
    assert (result.ended_by, result.model_calls, len(result.tool_calls)) == ("max_turns", 2, 2)


def test_mentions_and_relevance_shape_the_context(engine: Engine, tmp_path: Path) -> None:
    agent = write_agent(
        tmp_path / "ctx",
        {"turns": [{"text": "ok"}]},
        servers={},
        rules={"formal-tone": "manual", "tokyo-facts": "agent", "cooking": "agent"},
    )
    session_id = engine.submit(engine.open_session(agent)).result()
    engine.submit(engine.send(session_id, "@rule:formal-tone tell me tokyo facts")).result(30)
    events = engine.submit(engine.events(session_id)).result()
    [selected] = [e.body for e in events if isinstance(e.body, ContextSelected)]
    reasons = {entry.name: (entry.reason, entry.score) for entry in selected.entries}
    assert reasons == {"formal-tone": ("mention", None), "tokyo-facts": ("agent", 1.0)}


def test_a_model_server_that_is_down_is_retried_reported_and_the_session_kept(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("OLLAMA_HOST", f"http://127.0.0.1:{port}")
    agent = write_agent(tmp_path / "down", {"turns": []}, servers={})
    session_id = engine.submit(engine.open_session(agent, model="ollama:qwen2.5")).result()
    result = engine.submit(engine.send(session_id, "hello?")).result(60)
    assert result.ended_by == "error"
    assert result.error and "not reachable" in result.error
    errors = [
        e.body
        for e in engine.submit(engine.events(session_id)).result()
        if isinstance(e.body, ErrorOccurred)
    ]
    assert [error.retryable for error in errors] == [True, True, False]
    assert "retrying" in errors[0].message
    assert engine.session(session_id).messages[-1].content == "hello?"  # the session is kept


def test_cancel_stops_a_reply_and_keeps_what_was_written(engine: Engine, tmp_path: Path) -> None:
    long_text = " ".join(f"word{i}" for i in range(200))
    agent = write_agent(
        tmp_path / "slow",
        {"turns": [{"text": long_text}, {"text": "next"}], "delay_s": 0.01},
        servers={},
    )
    session_id = engine.submit(engine.open_session(agent)).result()
    tokens = threading.Event()
    engine.bus.subscribe(lambda e: tokens.set() if isinstance(e.body, TokenDelta) else None)
    turn = engine.submit(engine.send(session_id, "talk"))
    assert tokens.wait(10)
    engine.submit(engine.cancel(session_id)).result()
    result = turn.result(10)
    assert result.ended_by == "cancelled"
    assert result.reply and long_text.startswith(result.reply.strip())
    assert len(result.reply) < len(long_text)
    follow_up = engine.submit(engine.send(session_id, "go on")).result(10)
    assert follow_up.reply == "next"


def test_a_session_reopens_where_it_was_and_continues(tmp_path: Path, tokyo_agent: Path) -> None:
    url = f"sqlite:///{tmp_path / 'shared.sqlite3'}"
    with engine_over(url) as first:
        session_id = first.submit(first.open_session(tokyo_agent)).result()
        first.submit(first.send(session_id, "What time is it in Tokyo?")).result(60)
        before = list(first.session(session_id).messages)
    with engine_over(url) as second:
        chat = second.submit(second.reopen_session(session_id)).result(30)
        assert chat.messages == before and not chat.needs_resume
        result = second.submit(second.send(session_id, "Thanks!")).result(30)
        assert result.reply == "You are welcome."
        events = second.submit(second.events(session_id)).result()
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert sum(isinstance(e.body, SessionStarted) for e in events) == 1


def answered_once(url: str, agent: Path, then: Callable[[Engine, str], None] | None = None) -> str:
    """A session of `agent` in the store at `url` after one turn (and `then` done with it)."""
    with engine_over(url) as engine:
        session_id = engine.submit(engine.open_session(agent)).result()
        engine.submit(engine.send(session_id, "What time is it in Tokyo?")).result(60)
        if then is not None:
            then(engine, session_id)
    return session_id


def test_a_turn_killed_after_its_reply_was_stored_gets_its_end_without_a_model_call(
    tmp_path: Path, tokyo_agent: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'shared.sqlite3'}"
    session_id = answered_once(url, tokyo_agent)
    with edited(tmp_path / "shared.sqlite3") as database:  # the kill came before the end
        database.execute("DELETE FROM events WHERE kind = 'turn_finished'")
    with engine_over(url) as second:
        chat = second.submit(second.reopen_session(session_id)).result(30)
        assert chat.needs_resume
        result = second.submit(second.resume(session_id)).result(30)
        events = second.submit(second.events(session_id)).result()
        assert not second.session(session_id).needs_resume
    assert result.reply == "It is evening in Tokyo (Asia/Tokyo)."
    assert [e.kind for e in events].count("message") == 4  # no model call made again
    assert isinstance(events[-1].body, TurnFinished)
    assert events[-1].body.reply == result.reply and events[-1].body.model_calls == 2


def test_a_turn_killed_before_its_message_was_stored_ends_as_cancelled(
    tmp_path: Path, tokyo_agent: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'shared.sqlite3'}"

    def start_a_turn_and_die(engine: Engine, session_id: str) -> None:
        engine.store.events.append(session_id, "turn_started", {})

    session_id = answered_once(url, tokyo_agent, start_a_turn_and_die)
    with engine_over(url) as second:
        chat = second.submit(second.reopen_session(session_id)).result(30)
        assert chat.needs_resume
        result = second.submit(second.resume(session_id)).result(30)
        last = second.submit(second.events(session_id)).result()[-1]
    assert result.ended_by == "cancelled" and result.reply == ""
    assert isinstance(last.body, TurnFinished) and last.body.ended_by == "cancelled"
    assert last.body.model_calls == 0


def test_messages_are_projected_into_the_messages_table(engine: Engine, tokyo_agent: Path) -> None:
    session_id = engine.submit(engine.open_session(tokyo_agent)).result()
    engine.submit(engine.send(session_id, "time?")).result(60)
    rows = engine.store.messages.list(session_id)
    events = [
        e.body.message
        for e in engine.submit(engine.events(session_id)).result()
        if isinstance(e.body, MessageAdded)
    ]
    assert [(r.role, r.content) for r in rows] == [(m.role, m.content) for m in events]
    assert rows[1].data["tool_calls"][0]["name"] == "time.get_current_time"
    assert json.dumps(rows[2].data)  # the tool result's call id and name
    assert rows[2].data["tool_call_id"] == rows[1].data["tool_calls"][0]["id"]


def test_turn_finished_is_the_last_event_of_a_turn(engine: Engine, tokyo_agent: Path) -> None:
    session_id = engine.submit(engine.open_session(tokyo_agent)).result()
    engine.submit(engine.send(session_id, "time?")).result(60)
    last = engine.submit(engine.events(session_id)).result()[-1]
    assert isinstance(last.body, TurnFinished) and last.body.model_calls == 2


def test_an_mcp_server_that_crashes_mid_call_gives_the_model_a_clear_error(
    engine: Engine, tmp_path: Path
) -> None:
    from tests.tools.test_host import TOOLS_SERVER

    (tmp_path / "tools_server.py").write_text(TOOLS_SERVER)
    server = {
        "type": "stdio",
        "command": "python",
        "args": [str(tmp_path / "tools_server.py")],
        "serverToolDefaults": {"permissionRequired": False, "include": "always"},
    }
    agent = write_agent(
        tmp_path / "crashy",
        {
            "turns": [
                {"tool_calls": [{"name": "fragile.crash", "arguments": {}}]},
                {"text": "The tool failed, sorry."},
            ]
        },
        servers={"fragile": server},
    )
    session_id = engine.submit(engine.open_session(agent)).result(30)
    result = engine.submit(engine.send(session_id, "crash it")).result(60)
    assert result.reply == "The tool failed, sorry."
    tool_message = engine.session(session_id).messages[-2]
    assert tool_message.role == "tool"
    assert "exited during the call" in tool_message.content
    assert "the disk is on fire" in tool_message.content
    states = [
        e.body.state
        for e in engine.submit(engine.events(session_id)).result()
        if e.kind == "tool_server"
    ]
    assert states[-1] == "failed"


def test_a_policy_sends_a_call_to_the_inbox_and_the_human_answer_reaches_the_agent(
    engine: Engine, tmp_path: Path
) -> None:
    policy = {
        "type": "policy",
        "id": "tool-policy",
        "config": {
            "rules": [{"name": "ask", "tool": "time.*", "action": "human"}],
            "loopDetection": False,
        },
    }
    agent = write_agent(
        tmp_path / "inboxed",
        {
            "turns": [
                {
                    "tool_calls": [
                        {"name": "time.get_current_time", "arguments": {"timezone": "UTC"}}
                    ]
                },
                {
                    "tool_calls": [
                        {"name": "time.get_current_time", "arguments": {"timezone": "UTC"}}
                    ]
                },
                {"text": "Done."},
            ]
        },
        supervisors=[policy],
    )
    session_id = engine.submit(engine.open_session(agent)).result(30)
    turn = engine.submit(engine.send(session_id, "time twice"))
    for status, reasoning in (("approved", "fine"), ("denied", "once is enough")):
        pending = []
        for _ in range(500):
            pending = engine.store.approvals.list("pending")
            if pending:
                break
            threading.Event().wait(0.02)
        engine.store.approvals.resolve(pending[0].id, status, "human:ana", reasoning)
    result = turn.result(60)
    first, second = result.tool_calls
    assert first["approved_by"] == "human:ana" and not first["is_error"]
    assert second["is_error"] and "once is enough" in second["result"]
    assert result.reply == "Done."
    kinds_seen = kinds(engine, session_id)
    assert kinds_seen.count("approval_requested") == 2
    assert kinds_seen.count("approval_resolved") == 2


TIME_POLICY = {
    "type": "policy",
    "id": "tool-policy",
    "config": {"rules": [{"name": "time", "tool": "time.*", "action": "allow"}]},
}


def _chat_repeating_a_call_with_a_junk_field(engine: Engine, tmp_path: Path) -> tuple[str, Any]:
    """A chat that calls the time tool three times, each with another `nonce` (a field the
    tool does not declare): its id, and the turn's result."""
    calls = [
        {"name": "time.get_current_time", "arguments": {"timezone": "UTC", "nonce": n}}
        for n in range(3)
    ]
    turns = {"turns": [*({"tool_calls": [call]} for call in calls), {"text": "Done."}]}
    agent = write_agent(tmp_path / "looping", turns, supervisors=[TIME_POLICY])
    session_id = engine.submit(engine.open_session(agent)).result(30)
    return session_id, engine.submit(engine.send(session_id, "time, again and again")).result(60)


def test_a_chat_knows_the_tools_schemas_so_a_junk_field_does_not_hide_a_loop(
    engine: Engine, tmp_path: Path
) -> None:
    _, result = _chat_repeating_a_call_with_a_junk_field(engine, tmp_path)
    *first, last = result.tool_calls
    assert [call["approved_by"] for call in first] == ["policy:time", "policy:time"]
    assert last["is_error"] and "loop: the same call 3 times" in last["result"]
    # the field the tool does not declare was neither judged nor passed on, and the model is told
    assert all(call["arguments"] == {"timezone": "UTC"} for call in result.tool_calls)
    assert "does not declare: nonce" in first[0]["result"]


def test_a_dry_run_of_a_recorded_chat_keys_its_loops_on_the_schemas_the_chat_had(
    engine: Engine, tmp_path: Path
) -> None:
    session_id, _ = _chat_repeating_a_call_with_a_junk_field(engine, tmp_path)
    engine.submit(engine.close_session(session_id)).result(30)
    schemas = recorded_schemas(engine.store, [session_id])
    assert "timezone" in schemas["time.get_current_time"]["properties"]
    calls = calls_from_session(engine.store, session_id)
    config = PolicyConfig.model_validate(TIME_POLICY["config"])

    assert all("nonce" not in call.params for call in calls)  # the chat did not pass it on
    # as a session recorded before Foundry dropped undeclared fields holds them
    with_nonces = [
        call.model_copy(update={"params": {**call.params, "nonce": n}})
        for n, call in enumerate(calls)
    ]

    def dry_run(tool_schemas: dict[str, Any]) -> list[CheckedCall]:
        checker = PolicyChecker(engine.store, config, tmp_path, tool_schemas=tool_schemas)
        return asyncio.run(check_calls(checker, with_nonces))

    replayed = dry_run(schemas)
    assert [(r.outcome, r.changed) for r in replayed] == [*[("allow", False)] * 2, ("deny", False)]
    assert loop_key_note(replayed) is None
    blind = dry_run({})  # a session recorded before the schemas were: it says so
    assert [r.outcome for r in blind] == ["allow"] * 3
    note = loop_key_note(blind)
    assert note is not None and "all the arguments of time.get_current_time" in note


def test_stopping_a_turn_that_waits_for_a_person_withdraws_its_approval(
    engine: Engine, tmp_path: Path
) -> None:
    session_id = engine.submit(engine.open_session(_guarded_agent(tmp_path / "guarded"))).result()
    turn = engine.submit(engine.send(session_id, "time?"))
    deadline = time.monotonic() + 30
    while not (pending := engine.store.approvals.list(status="pending")):
        assert time.monotonic() < deadline, "no approval reached the inbox"
        time.sleep(0.02)
    engine.submit(engine.cancel(session_id)).result(10)
    assert turn.result(30).ended_by == "cancelled"
    withdrawn = engine.store.approvals.get(pending[0].id)
    assert (withdrawn.status, withdrawn.resolved_by) == ("timed_out", "withdrawn")


def test_a_stopped_engine_leaves_no_thread_or_loop_behind(tmp_path: Path) -> None:
    """A process that starts and stops engines (a test suite, a server) must not gather their
    loops' threads and descriptors: CI ran out of select()'s 1024 after a few hundred."""
    before = set(threading.enumerate())
    with Store.open(f"sqlite:///{tmp_path / 'store.db'}") as store:
        engine = Engine(store).start()
        assert engine.submit(asyncio.to_thread(sum, [1, 2])).result(10) == 3  # an executor thread
        engine.stop()

    assert set(threading.enumerate()) - before == set()
    with pytest.raises(RuntimeError, match="closed"):
        engine.submit(asyncio.sleep(0)).result(10)  # refused, where a stopped loop never ran it
