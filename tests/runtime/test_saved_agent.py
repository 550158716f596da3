"""An agent saved while its chats are open: the policy and guardian from the next step, the
rest said and applied by a restart that keeps the history; tool servers that fail are said."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from foundry.agent.problems import AgentError
from foundry.llm.base import ProviderError
from foundry.runtime.engine import Engine
from foundry.session.events import (
    AgentApplied,
    ApprovalRequested,
    ErrorOccurred,
    EventBody,
)

from .conftest import TIME_SERVER, trust, write_agent

UTC_CALL = {"name": "time.get_current_time", "arguments": {"timezone": "UTC"}}
TWO_TURNS = {
    "turns": [
        {"tool_calls": [UTC_CALL]},
        {"text": "It is noon."},
        {"tool_calls": [UTC_CALL]},
        {"text": "Still noon."},
    ]
}


def policy(action: str) -> dict[str, Any]:
    rule = {"name": "time-is-routine", "tool": "time.*", "action": action}
    return {"type": "policy", "id": "tool-policy", "config": {"rules": [rule]}}


def change_config(agent: Path, **parts: Any) -> None:
    """Write parts of the agent's tsagent.json, as a save from the editor would."""
    config = json.loads((agent / "tsagent.json").read_text())
    config.update(parts)
    (agent / "tsagent.json").write_text(json.dumps(config))


def bodies(engine: Engine, session_id: str) -> list[EventBody]:
    return [event.body for event in engine.submit(engine.events(session_id)).result()]


def wait_for_approval(engine: Engine) -> str:
    for _ in range(1500):
        pending = engine.store.approvals.list("pending")
        if pending:
            return pending[0].tool
        threading.Event().wait(0.02)
    raise AssertionError("no approval was asked for")


def test_a_tightened_policy_saved_during_a_chat_asks_at_the_next_call(
    engine: Engine, tmp_path: Path
) -> None:
    agent = write_agent(tmp_path / "timed", TWO_TURNS, supervisors=[policy("allow")])
    session_id = engine.submit(engine.open_session(agent)).result(30)
    first = engine.submit(engine.send(session_id, "time?")).result(60)
    assert first.tool_calls[0]["approved_by"] == "policy:time-is-routine"

    change_config(agent, supervisors=[policy("human")])
    touched = engine.submit(engine.apply_saved_agent(agent)).result(30)
    second = engine.submit(engine.send(session_id, "and now?"))
    asked = wait_for_approval(engine)
    engine.submit(engine.cancel(session_id)).result(10)
    second.result(60)

    assert touched == [session_id]
    assert asked == "time.get_current_time"
    [applied] = [body for body in bodies(engine, session_id) if isinstance(body, AgentApplied)]
    assert applied.applied == ("its policy",) and applied.pending == ()
    assert any(isinstance(body, ApprovalRequested) for body in bodies(engine, session_id))


def test_a_loosened_tool_permission_applies_without_a_restart(
    engine: Engine, tmp_path: Path
) -> None:
    agent = write_agent(tmp_path / "asking", TWO_TURNS, settings={"toolPermission": "always"})
    session_id = engine.submit(engine.open_session(agent)).result(30)
    change_config(agent, settings={"model": "scripted:turns.json", "toolPermission": "never"})
    engine.submit(engine.apply_saved_agent(agent)).result(30)
    result = engine.submit(engine.send(session_id, "time?")).result(60)
    assert result.tool_calls[0]["approved_by"] == "policy:toolPermission"
    assert not result.tool_calls[0]["is_error"]


def test_a_saved_guardian_reviews_the_next_message(engine: Engine, tmp_path: Path) -> None:
    turns = {"turns": [{"text": "The secret word is mango."}] * 2}
    agent = write_agent(tmp_path / "guarded", turns, servers={})
    session_id = engine.submit(engine.open_session(agent)).result(30)
    assert engine.submit(engine.send(session_id, "hi")).result(60).ended_by == "reply"

    guardian = {"type": "guardian", "id": "guard", "config": {"blockKeywords": ["mango"]}}
    change_config(agent, supervisors=[guardian])
    engine.submit(engine.apply_saved_agent(agent)).result(30)
    result = engine.submit(engine.send(session_id, "again")).result(60)
    assert result.ended_by == "blocked"


def test_what_cannot_change_mid_chat_is_said_and_a_restart_applies_it_keeping_history(
    engine: Engine, tmp_path: Path
) -> None:
    agent = write_agent(tmp_path / "prompted", TWO_TURNS)
    session_id = engine.submit(engine.open_session(agent)).result(30)
    engine.submit(engine.send(session_id, "time?")).result(60)
    (agent / "prompt.md").write_text("You are a brief test agent.")
    engine.submit(engine.apply_saved_agent(agent)).result(30)
    [applied] = [body for body in bodies(engine, session_id) if isinstance(body, AgentApplied)]
    assert applied.applied == () and applied.pending == ("its prompt",)
    assert engine.session(session_id).agent.system_prompt == "You are a test agent."

    chat = engine.submit(engine.restart_session(session_id)).result(30)
    assert chat.agent.system_prompt == "You are a brief test agent."
    assert [m.role for m in chat.messages] == ["user", "assistant", "tool", "assistant"]
    result = engine.submit(engine.send(session_id, "and now?")).result(60)
    assert result.reply == "Still noon."


def test_the_same_save_twice_is_said_once(engine: Engine, tmp_path: Path) -> None:
    agent = write_agent(tmp_path / "twice", TWO_TURNS)
    session_id = engine.submit(engine.open_session(agent)).result(30)
    (agent / "prompt.md").write_text("Another prompt.")
    for _ in range(2):
        engine.submit(engine.apply_saved_agent(agent)).result(30)
    said = [body for body in bodies(engine, session_id) if isinstance(body, AgentApplied)]
    assert len(said) == 1


def test_a_restart_takes_the_saved_model_unless_the_chat_chose_its_own(
    engine: Engine, tmp_path: Path
) -> None:
    agent = write_agent(tmp_path / "models", TWO_TURNS)
    for name in ("other", "third"):
        (agent / f"{name}.json").write_text(json.dumps({"turns": [{"text": f"From {name}."}]}))
    default = engine.submit(engine.open_session(agent)).result(30)
    chosen = engine.submit(engine.open_session(agent, model="scripted:third.json")).result(30)
    change_config(agent, settings={"model": "scripted:other.json", "toolPermission": "tool"})
    engine.submit(engine.apply_saved_agent(agent)).result(30)
    restarted = engine.submit(engine.restart_session(default)).result(30)
    kept = engine.submit(engine.restart_session(chosen)).result(30)
    assert (str(restarted.model), str(kept.model)) == ("scripted:other.json", "scripted:third.json")


def test_a_restarted_session_reopens_on_its_new_model(tmp_path: Path) -> None:
    from foundry.store import Store

    agent = write_agent(tmp_path / "reopened", TWO_TURNS)
    (agent / "other.json").write_text(json.dumps({"turns": [{"text": "From the other."}]}))
    store = Store.open(f"sqlite:///{tmp_path / 'reopen.sqlite3'}")
    try:
        with Engine(store) as first:
            session_id = first.submit(first.open_session(agent)).result(30)
            change_config(agent, settings={"model": "scripted:other.json"})
            first.submit(first.restart_session(session_id)).result(30)
        with Engine(store) as second:
            chat = second.submit(second.reopen_session(session_id)).result(30)
            assert str(chat.model) == "scripted:other.json"
    finally:
        store.close()


def test_a_tool_server_that_does_not_start_is_said_in_the_conversation(
    engine: Engine, tmp_path: Path
) -> None:
    missing = dict(TIME_SERVER, command="foundry-no-such-command")
    agent = write_agent(tmp_path / "broken", TWO_TURNS, servers={"time": missing})
    trust(agent)
    session_id = engine.submit(engine.open_session(agent)).result(30)
    engine.submit(engine.close_session(session_id)).result(30)  # what it recorded is stored
    errors = [
        body
        for body in bodies(engine, session_id)
        if isinstance(body, ErrorOccurred) and body.where == "tools"
    ]
    assert errors and "'time' failed" in errors[0].message
    assert "foundry-no-such-command" in errors[0].message


def test_a_saved_agent_that_does_not_load_leaves_its_chats_as_they_run(
    engine: Engine, tmp_path: Path
) -> None:
    agent = write_agent(tmp_path / "spoilt", TWO_TURNS, supervisors=[policy("allow")])
    session_id = engine.submit(engine.open_session(agent)).result(30)
    (agent / "tsagent.json").write_text("{")
    with pytest.raises(AgentError):
        engine.submit(engine.apply_saved_agent(agent)).result(30)
    result = engine.submit(engine.send(session_id, "time?")).result(60)
    assert result.tool_calls[0]["approved_by"] == "policy:time-is-routine"
    with pytest.raises(AgentError):  # nor is it restarted on it
        engine.submit(engine.restart_session(session_id)).result(30)
    assert engine.is_open(session_id)


def test_a_restart_whose_model_does_not_open_can_be_tried_again_once_fixed(
    engine: Engine, tmp_path: Path
) -> None:
    agent = write_agent(tmp_path / "retried", TWO_TURNS, servers={})
    session_id = engine.submit(engine.open_session(agent)).result(30)
    change_config(agent, settings={"model": "nowhere:model"})  # no such provider configured
    with pytest.raises(ProviderError):
        engine.submit(engine.restart_session(session_id)).result(30)
    change_config(agent, settings={"model": "scripted:turns.json"})
    chat = engine.submit(engine.restart_session(session_id)).result(30)
    assert str(chat.model) == "scripted:turns.json" and engine.is_open(session_id)


def test_an_agent_file_written_by_another_program_is_applied_to_its_open_chat(
    engine: Engine, tmp_path: Path
) -> None:
    agent = write_agent(tmp_path / "edited", TWO_TURNS, supervisors=[policy("allow")])
    session_id = engine.submit(engine.open_session(agent)).result(30)
    engine.submit(engine.send(session_id, "time?")).result(60)
    change_config(agent, supervisors=[policy("human")])  # a text editor, not Foundry's
    for _ in range(1500):
        if any(isinstance(body, AgentApplied) for body in bodies(engine, session_id)):
            break
        threading.Event().wait(0.02)
    second = engine.submit(engine.send(session_id, "and now?"))
    assert wait_for_approval(engine) == "time.get_current_time"
    engine.submit(engine.cancel(session_id)).result(10)
    second.result(60)


def test_a_gateways_session_decides_its_next_call_by_the_saved_policy(
    engine: Engine, tmp_path: Path
) -> None:
    agent = write_agent(tmp_path / "gated", TWO_TURNS, supervisors=[policy("allow")])
    tool_session = engine.submit(engine.open_tool_session(agent, "a client")).result(30)
    try:
        arguments = {"timezone": "UTC"}
        first = engine.submit(tool_session.call("time.get_current_time", arguments)).result(30)
        assert not first.is_error
        change_config(agent, supervisors=[policy("human")])
        touched = engine.submit(engine.apply_saved_agent(agent)).result(30)
        assert touched == [tool_session.session_id]
        second = engine.submit(tool_session.call("time.get_current_time", arguments))
        assert wait_for_approval(engine) == "time.get_current_time"
        [pending] = engine.store.approvals.list("pending")
        engine.store.approvals.resolve(pending.id, "denied", "human:ana", "not now")
        assert second.result(30).is_error
    finally:
        engine.submit(tool_session.aclose()).result(30)
