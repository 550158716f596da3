"""tsagent's internal servers in a Foundry chat: the `rules`, `references` and `tools` servers
answer as tsagent's do, act on the session and the agent's files, and go through the gate."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from foundry.agent.document import load_agent
from foundry.runtime.engine import Engine
from foundry.session.events import ContextChanged, ContextItemSaved
from tests.runtime.conftest import write_agent

OPEN = {"permissionRequired": False, "include": "always"}
SERVERS = {
    "rules": {"type": "internal", "tool": "rules", "serverToolDefaults": OPEN},
    "refs": {"type": "internal", "tool": "references", "serverToolDefaults": OPEN},
    "tools": {"type": "internal", "tool": "tools", "serverToolDefaults": OPEN},
}


def calling(tool: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": tool, "arguments": arguments}]}


def chat(engine: Engine, agent: Path, turns: list[dict[str, Any]], ask: Any = None) -> Any:
    (agent / "turns.json").write_text(json.dumps({"turns": [*turns, {"text": "Done."}]}))
    session_id = engine.submit(engine.open_session(agent, ask=ask)).result(60)
    result = engine.submit(engine.send(session_id, "go")).result(120)
    events = [event.body for event in engine.submit(engine.events(session_id)).result()]
    return result, events


def results(result: Any) -> list[str]:
    return [call["result"] for call in result.tool_calls]


def test_the_rules_server_answers_as_tsagents_and_saves_to_the_agent(
    engine: Engine, tmp_path: Path
) -> None:
    agent = write_agent(tmp_path / "keeper", {"turns": []}, SERVERS, rules={"tone": "manual"})
    turns = [
        calling("rules.listRules"),
        calling(
            "rules.createRule",
            name="tables",
            text="Always answer in tables.",
            priorityLevel=200,
        ),
        calling("rules.getRule", name="tables"),
        calling("rules.includeRule", name="tone"),
        calling("rules.listContextRules"),
        calling("rules.excludeRule", name="tone"),
        calling("rules.getRule", name="missing"),
    ]
    result, events = chat(engine, agent, turns)
    answers = results(result)
    assert json.loads(answers[0]) == [
        {"name": "tone", "description": "tone", "priorityLevel": 500, "include": "manual"}
    ]
    assert answers[0].startswith('[\n  {\n    "name": "tone",')  # JSON.stringify(x, null, 2)
    assert answers[1] == 'Rule "tables" created successfully'
    assert json.loads(answers[2]) == {
        "name": "tables",
        "description": "",
        "priorityLevel": 200,
        "text": "Always answer in tables.",
        "include": "manual",
    }
    assert answers[3] == 'Rule "tone" successfully included in chat session'
    assert json.loads(answers[4]) == ["tone"]
    assert answers[5] == 'Rule "tone" successfully excluded from chat session'
    assert answers[6] == 'Error: Rule "missing" not found'
    assert [call["is_error"] for call in result.tool_calls] == [False] * 6 + [True]

    saved = load_agent(agent).agent
    assert saved is not None
    assert [(rule.name, rule.text.strip()) for rule in saved.rules][-1] == (
        "tables",
        "Always answer in tables.",
    )
    assert any(isinstance(b, ContextItemSaved) and b.name == "tables" for b in events)
    changes = [(b.name, b.included, b.by) for b in events if isinstance(b, ContextChanged)]
    assert changes == [("tone", True, "agent"), ("tone", False, "agent")]
