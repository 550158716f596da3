"""A task run as spans: the coordinator's invoke_agent span, a span per phase under it, the agents
each phase consulted under their phase, the scores as span events."""

from __future__ import annotations

from pathlib import Path

from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from foundry.runtime.engine import Engine
from foundry.telemetry.export import spans_of
from foundry.telemetry.live import LiveExport
from tests.orchestration.conftest import GREET_CODE, agent, task_file, write

from .conftest import attributes, children, named

DONE = {"text": "Done. STATUS: done"}


def _greeting_task(engine: Engine, root: Path) -> str:
    agent(root / "agents" / "coder", [{"tool_calls": [write("greetings.py", GREET_CODE)]}, DONE])
    outcome = engine.submit(engine.run_task(task_file(root))).result(60)
    assert outcome.status == "succeeded"
    return str(outcome.task_id)


def test_a_task_is_its_coordinators_span_with_its_phases_and_consults_under_it(
    engine: Engine, tmp_path: Path
) -> None:
    task_id = _greeting_task(engine, tmp_path)
    spans = spans_of(engine.store, task_id)

    [task] = named(spans, "invoke_agent greeting")
    assert task.parent is None
    assert attributes(task)["foundry.task.status"] == "succeeded"
    assert attributes(task)["gen_ai.conversation.id"] == task_id
    phases = sorted(children(spans, task), key=lambda s: s.start_time or 0)
    assert [p.name for p in phases] == ["phase agent_execution", "phase validation"]
    [consult] = children(spans, phases[0])
    assert consult.name == "invoke_agent coder"
    assert attributes(consult)["foundry.task.role"] == "operator"
    assert attributes(consult)["gen_ai.usage.output_tokens"] > 0
    [scored] = [e for e in phases[1].events if e.name == "foundry.criterion_scored"]
    assert dict(scored.attributes or {})["foundry.criterion.level"] == "pass"
    assert dict(scored.attributes or {})["foundry.criterion.score"] == 92.0
    assert all(s.start_time and s.end_time and s.start_time <= s.end_time for s in spans)


def test_a_tasks_spans_are_sent_live_and_its_agents_chats_too(
    engine: Engine, tmp_path: Path
) -> None:
    collected = InMemorySpanExporter()
    live = LiveExport(engine.store, engine.bus.subscribe, collected)
    try:
        task_id = _greeting_task(engine, tmp_path)
    finally:
        live.close()
    sent = collected.get_finished_spans()
    stored = spans_of(engine.store, task_id)
    task_spans = [s for s in sent if attributes(s).get("foundry.task.id") == task_id]
    assert sorted(s.name for s in task_spans) == sorted(s.name for s in stored)
    # the operator's own chat, a session of its own, is exported as a chat is
    assert named(sent, "invoke_agent coder")
    assert [s for s in sent if s.name == "execute_tool workspace.write_file"]
