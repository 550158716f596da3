"""A supervised chat's spans: a turn, its model calls, its tool calls and every decision on them,
made from the stored events (as `foundry sessions export --otlp` sends them) and live from the
engine's bus."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from foundry.runtime.engine import Engine
from foundry.telemetry.export import spans_of
from foundry.telemetry.live import LiveExport
from tests.runtime.conftest import TOKYO_TURNS, engine_over, write_agent

from .conftest import POLICY, TOKYO, attributes, children, named, supervised_chat


def _tool_spans(spans: list[ReadableSpan]) -> dict[str, ReadableSpan]:
    """The execute_tool spans by what they asked: the tool and its first argument's value."""
    found = {}
    for span in spans:
        if span.name.startswith("execute_tool "):
            arguments = str(attributes(span)["gen_ai.tool.call.arguments"])
            found[f"{span.name} {'Tokyo' if 'Tokyo' in arguments else 'UTC'}"] = span
    return found


def test_a_turn_is_an_invoke_agent_span_with_its_model_calls_and_tools_under_it(
    engine: Engine, tmp_path: Path
) -> None:
    session_id = supervised_chat(engine, tmp_path / "clock")
    spans = spans_of(engine.store, session_id)

    [turn] = named(spans, "invoke_agent clock")
    assert turn.parent is None
    turn_attributes = attributes(turn)
    assert turn_attributes["gen_ai.operation.name"] == "invoke_agent"
    assert turn_attributes["gen_ai.conversation.id"] == session_id
    assert turn_attributes["gen_ai.agent.name"] == "clock"
    assert turn_attributes["input.value"] == "What time is it in UTC and Tokyo?"
    assert turn_attributes["output.value"].endswith("evening in Tokyo.")
    chats = named(spans, "chat turns.json")
    assert len(chats) == 4 and all(c.parent == turn.context for c in chats)
    chat = attributes(chats[0])
    assert (chat["gen_ai.operation.name"], chat["gen_ai.provider.name"]) == ("chat", "scripted")
    assert chat["gen_ai.request.model"] == "turns.json"
    assert turn_attributes["gen_ai.usage.output_tokens"] == sum(
        attributes(c)["gen_ai.usage.output_tokens"] for c in chats
    )
    tools = [s for s in spans if s.name.startswith("execute_tool ")]
    assert len(tools) == 3 and all(t.parent == turn.context for t in tools)
    assert all(s.start_time and s.end_time and s.start_time <= s.end_time for s in spans)
    assert {s.context.trace_id for s in spans if s.context} == {turn.context.trace_id}


def test_each_decision_says_its_verdict_the_action_enforced_and_who_decided(
    engine: Engine, tmp_path: Path
) -> None:
    spans = spans_of(engine.store, supervised_chat(engine, tmp_path / "clock"))
    tools = _tool_spans(spans)

    allowed = tools["execute_tool time.get_current_time UTC"]
    [decision] = children(spans, allowed)
    assert decision.name == "run_guardrail tool_call policy:time-is-fine"
    assert {
        key: attributes(decision)[key]
        for key in (
            "gen_ai.security.verdict.type",
            "gen_ai.security.action.type",
            "gen_ai.security.target.type",
            "gen_ai.security.policy.rule.id",
            "foundry.decision.kind",
            "foundry.decision.level",
        )
    } == {
        "gen_ai.security.verdict.type": "allow",
        "gen_ai.security.action.type": "allow",
        "gen_ai.security.target.type": "tool_call",
        "gen_ai.security.policy.rule.id": "time-is-fine",
        "foundry.decision.kind": "policy",
        "foundry.decision.level": "L0",
    }
    assert allowed.status.status_code is not StatusCode.ERROR
    assert attributes(allowed)["gen_ai.tool.type"] == "extension"
    assert "UTC" in attributes(allowed)["gen_ai.tool.call.result"]

    denied = tools["execute_tool time.convert_time Tokyo"]
    [refusal] = children(spans, denied)
    assert attributes(refusal)["gen_ai.security.verdict.type"] == "deny"
    assert attributes(refusal)["gen_ai.security.action.type"] == "block"
    assert attributes(refusal)["gen_ai.security.policy.rule.id"] == "no-conversions"
    assert denied.status.status_code is StatusCode.ERROR

    approved = tools["execute_tool time.get_current_time Tokyo"]
    escalated, answered = sorted(children(spans, approved), key=lambda s: s.start_time or 0)
    assert attributes(escalated)["gen_ai.security.verdict.type"] == "escalate"
    assert attributes(escalated)["foundry.approval.resolved_by"] == "human:inbox:ana"
    assert attributes(escalated)["foundry.approval.waited_s"] > 0
    assert attributes(answered)["gen_ai.security.verdict.type"] == "allow"
    assert attributes(answered)["foundry.decision.kind"] == "human"
    assert attributes(answered)["foundry.decision.level"] == "L2"
    # the wait for the person is inside the call's span, and the call's run after it
    assert approved.start_time == escalated.start_time
    assert escalated.end_time and approved.end_time and escalated.end_time <= approved.end_time


def test_a_call_a_grant_covers_is_decided_by_the_grant_without_asking_anyone(
    engine: Engine, tmp_path: Path
) -> None:
    expires = datetime.now(UTC) + timedelta(minutes=15)
    grant = engine.store.grants.add("time.get_current_time", expires, "human:ana", "clock")
    turns = {"turns": [{"tool_calls": [TOKYO]}, {"text": "Evening in Tokyo."}]}
    agent = write_agent(tmp_path / "clock", turns, supervisors=[POLICY])
    session_id = engine.submit(engine.open_session(agent)).result(30)
    engine.submit(engine.send(session_id, "Tokyo?")).result(60)
    spans = spans_of(engine.store, session_id)

    [call] = named(spans, "execute_tool time.get_current_time")
    [decided] = children(spans, call)  # no escalation: no one was asked
    assert decided.name == f"run_guardrail tool_call grant:{grant.id}"
    assert attributes(decided)["gen_ai.security.verdict.type"] == "allow"
    assert attributes(decided)["foundry.decision.kind"] == "grant"
    assert attributes(decided)["foundry.decision.level"] == "L0"
    assert "gen_ai.security.policy.rule.id" not in attributes(decided)


def test_a_call_no_one_answered_in_time_is_denied_by_the_timeout(
    engine: Engine, tmp_path: Path
) -> None:
    impatient = {**POLICY, "config": {**POLICY["config"], "approvalTimeoutSeconds": 0.3}}
    turns = {"turns": [{"tool_calls": [TOKYO]}, {"text": "No one answered."}]}
    agent = write_agent(tmp_path / "clock", turns, supervisors=[impatient])
    session_id = engine.submit(engine.open_session(agent)).result(30)
    engine.submit(engine.send(session_id, "Tokyo?")).result(60)
    spans = spans_of(engine.store, session_id)

    [call] = named(spans, "execute_tool time.get_current_time")
    escalated, decided = sorted(children(spans, call), key=lambda s: s.start_time or 0)
    assert attributes(escalated)["gen_ai.security.verdict.type"] == "escalate"
    assert attributes(escalated)["foundry.approval.status"] == "timed_out"
    assert attributes(decided)["gen_ai.security.verdict.type"] == "deny"
    assert attributes(decided)["gen_ai.security.action.type"] == "block"
    assert attributes(decided)["foundry.decision.kind"] == "timeout"
    assert attributes(decided)["foundry.decision.level"] == "L2"
    assert call.status.status_code is StatusCode.ERROR


def test_a_message_supervisors_decisions_are_guardrail_spans_of_the_turn(
    engine: Engine, tmp_path: Path
) -> None:
    guardian = {"type": "guardian", "id": "guard", "config": {"blockKeywords": ["mango"]}}
    turns = {"turns": [{"text": "The secret word is mango."}]}
    agent = write_agent(tmp_path / "guarded", turns, servers={}, supervisors=[guardian])
    session_id = engine.submit(engine.open_session(agent)).result(30)
    assert engine.submit(engine.send(session_id, "hi")).result(60).ended_by == "blocked"
    spans = spans_of(engine.store, session_id)

    [turn] = named(spans, "invoke_agent guarded")
    assert turn.status.status_code is StatusCode.ERROR
    decisions = {
        attributes(span)["gen_ai.security.target.type"]: attributes(span)
        for span in children(spans, turn)
        if span.name.startswith("run_guardrail ")
    }
    assert set(decisions) == {"llm_input", "llm_output"}
    request, reply = decisions["llm_input"], decisions["llm_output"]
    assert (request["gen_ai.security.verdict.type"], request["gen_ai.security.action.type"]) == (
        "allow",
        "allow",
    )
    assert (reply["gen_ai.security.verdict.type"], reply["gen_ai.security.action.type"]) == (
        "deny",
        "block",
    )
    assert reply["foundry.supervisor.id"] == "guard"
    assert reply["foundry.decision.level"] == "message"
    assert "mango" in reply["gen_ai.security.verdict.reason"]


def test_the_live_export_sends_the_spans_the_stored_events_make(
    engine: Engine, tmp_path: Path
) -> None:
    collected = InMemorySpanExporter()
    live = LiveExport(engine.store, engine.bus.subscribe, collected)
    try:
        session_id = supervised_chat(engine, tmp_path / "clock")
    finally:
        live.close()
    sent = sorted(span.name for span in collected.get_finished_spans())
    stored = sorted(span.name for span in spans_of(engine.store, session_id))
    assert sent == stored
    assert len(sent) == 1 + 4 + 3 + 4  # the turn, model calls, tool calls, decisions and a wait


def test_a_session_reopened_by_another_engine_keeps_its_agents_name_live(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'shared.sqlite3'}"
    agent = write_agent(tmp_path / "tokyo", TOKYO_TURNS)
    with engine_over(url) as first:
        session_id = first.submit(first.open_session(agent)).result(30)
        first.submit(first.send(session_id, "What time is it in Tokyo?")).result(60)
    collected = InMemorySpanExporter()
    with engine_over(url) as second:
        live = LiveExport(second.store, second.bus.subscribe, collected)
        try:
            second.submit(second.reopen_session(session_id)).result(30)
            second.submit(second.send(session_id, "Thanks!")).result(30)
        finally:
            live.close()
    [turn] = named(list(collected.get_finished_spans()), "invoke_agent tokyo")
    assert attributes(turn)["gen_ai.request.model"] == "turns.json"
    assert attributes(turn)["output.value"] == "You are welcome."
