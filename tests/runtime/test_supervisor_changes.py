"""What a supervisor changes in a session (its rules, references and context) is in the event
log, and a session reopened by another engine on the same store has exactly that state."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from foundry.runtime.engine import Engine
from foundry.session.chat import ChatSession
from foundry.session.events import ContextItemSaved
from foundry.store import Store
from tests.supervision.test_agent_supervisor import write_supervisor

from .conftest import write_agent


def call(tool: str, **arguments: Any) -> dict[str, Any]:
    return {"name": f"supervised_{tool}", "arguments": arguments}


CHANGES = [
    call("create_rule", name="cite-sources", text="Always cite sources.", include="manual"),
    call("update_rule", name="be-brief", text="Three sentences at most.", priority_level=10),
    call("delete_rule", name="old-style"),
    call("include_rule", name="cite-sources"),
    call("exclude_reference", name="glossary"),
    call("create_reference", name="faq", text="Q: why? A: because."),
]
SUPERVISOR_TURNS = [
    {"tool_calls": CHANGES},
    {"tool_calls": [call("allow_message", reason="context adjusted")]},
]


def supervised_agent(root: Path) -> Path:
    write_supervisor(root / "curator", SUPERVISOR_TURNS)
    entry = {
        "type": "agent",
        "id": "curator",
        "name": "Curator",
        "config": {
            "agentPath": "../curator",
            "allowedActions": ["MODIFY_CONTEXT"],
            "maxModifications": 10,
            "applyTo": ["request"],
            "timeoutSeconds": 60,  # the request waits for it, however busy the machine
        },
    }
    agent = write_agent(
        root / "writer",
        {"turns": [{"text": "Here it is."}, {"text": "And again."}]},
        servers={},
        rules={"be-brief": "always", "old-style": "always"},
        supervisors=[entry],
    )
    (agent / "refs").mkdir()
    header = json.dumps({"name": "glossary", "include": "always"})
    (agent / "refs" / "glossary.mdt").write_text(f"---\n{header}---\nTerms.\n")
    return agent


def state(chat: ChatSession) -> dict[str, Any]:
    return {
        "rules": [rule.model_dump() for rule in chat.agent.rules],
        "references": [ref.model_dump() for ref in chat.agent.references],
        "included": sorted(chat.context.included),
        "excluded": sorted(chat.context.excluded),
    }


def test_a_reopened_session_has_exactly_the_supervisors_changes(tmp_path: Path) -> None:
    agent = supervised_agent(tmp_path)
    database = f"sqlite:///{tmp_path / 'store.sqlite3'}"
    store = Store.open(database)
    with Engine(store) as first:
        session_id = first.submit(first.open_session(agent)).result()
        first.submit(first.send(session_id, "Write it up.")).result(60)
        before = state(first.session(session_id))
        saved = [
            e.body
            for e in first.submit(first.events(session_id)).result()
            if isinstance(e.body, ContextItemSaved)
        ]
    store.close()

    assert [(s.item, s.name, s.value is None) for s in saved] == [
        ("rule", "cite-sources", False),
        ("rule", "be-brief", False),
        ("rule", "old-style", True),
        ("reference", "faq", False),
    ]
    assert all(s.by == "supervisor:curator" for s in saved)
    assert [rule["name"] for rule in before["rules"]] == ["be-brief", "cite-sources"]
    assert before["rules"][0]["text"] == "Three sentences at most."
    assert ("rule", "cite-sources") in before["included"]
    assert ("reference", "glossary") in before["excluded"]
    assert (agent / "rules" / "old-style.mdt").exists()  # the agent's files are not touched

    store = Store.open(database)
    with Engine(store) as second:
        reopened = second.submit(second.reopen_session(session_id)).result()
        assert state(reopened) == before
    store.close()
