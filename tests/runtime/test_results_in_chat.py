"""Results in a chat are supervised: the model reads them masked, a result that reads like an
injection is flagged, and within a turn that has read untrusted content a call that sends data
out asks a person with the reason, under a policy that allows everything; a local read does not
ask, a deny rule still denies, and the next user message starts clean."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from foundry.llm.base import ToolCall
from foundry.runtime.engine import Engine
from foundry.session.events import ApprovalRequested, MessageAdded, ToolConcernRaised
from foundry.session.gate import GateDecision
from tests.gateway import results_server as served
from tests.gateway.test_gateway_results import NO_POSTS_TO_GENERAL, OWN, TOKENS, results_agent
from tests.runtime.conftest import write_agent


def calling(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


TURNS = [
    # the first user message
    {"tool_calls": [{"name": "docs.leak"}, {"name": "docs.page"}]},
    calling("docs.post_message", channel="#a", text="x"),  # asks: after an open-world read
    calling("docs.read_note"),  # a local read: runs
    calling("docs.post_message", channel="#general", text="x"),  # the deny rule denies
    {"text": "Done."},
    # the second: clean again
    calling("docs.post_message", channel="#a", text="y"),  # runs unasked
    calling("docs.planted"),  # flagged
    calling("docs.post_message", channel="#b", text="z"),  # asks: after a flagged result
    {"text": "Done again."},
]


@pytest.fixture(autouse=True)
def own_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCS_KEY", OWN)


def test_a_chat_reads_results_masked_and_asks_before_sending_out_what_it_read(
    engine: Engine, tmp_path: Path
) -> None:
    asked: list[ToolCall] = []

    async def person(call: ToolCall) -> GateDecision:
        asked.append(call)
        return GateDecision(allowed=False, by="human:tester", reason="not now")

    agent = results_agent(tmp_path / "agent")
    turns = tmp_path / "agent" / "turns.json"
    turns.write_text(json.dumps({"turns": TURNS}))
    session_id = engine.submit(engine.open_session(agent, ask=person)).result()
    first = engine.submit(engine.send(session_id, "go")).result(120)
    second = engine.submit(engine.send(session_id, "again")).result(120)
    assert (first.reply, second.reply) == ("Done.", "Done again.")
    assert [(call.name, call.arguments["channel"]) for call in asked] == [
        ("docs.post_message", "#a"),
        ("docs.post_message", "#b"),
    ]
    by_call = {call["arguments"].get("channel", call["name"]): call for call in first.tool_calls}
    assert by_call["#general"]["approved_by"] == f"policy:{NO_POSTS_TO_GENERAL['name']}"
    assert not by_call["docs.read_note"]["is_error"]
    assert not second.tool_calls[0]["is_error"] and "received" in second.tool_calls[0]["result"]

    bodies = [event.body for event in engine.submit(engine.events(session_id)).result()]
    read = [
        b.message.content
        for b in bodies
        if isinstance(b, MessageAdded) and b.message.role == "tool"
    ]
    leaked = read[0]
    assert all(token not in leaked for token in TOKENS) and served.GITHUB[:8] not in leaked
    assert "Foundry masked secrets in this result" in leaked
    [flagged] = [b for b in bodies if isinstance(b, ToolConcernRaised)]
    assert (flagged.tool, flagged.concern) == ("docs.planted", "flagged-result")
    held = [b for b in bodies if isinstance(b, ApprovalRequested)]
    reasons = [concern["reason"] for approval in held for concern in approval.concerns]
    assert len(reasons) == 2
    assert reasons[0].startswith("the session read untrusted content from docs.")
    assert "docs.planted" in reasons[1] and "this call sends data out" in reasons[1]


def test_the_rule_of_two_holds_for_an_agent_with_no_policy_that_asks_about_nothing(
    engine: Engine, tmp_path: Path
) -> None:
    """toolPermission `never` runs every call unasked; after an open-world read a post still
    goes to a person."""
    asked: list[str] = []

    async def person(call: ToolCall) -> GateDecision:
        asked.append(call.name)
        return GateDecision(allowed=False, by="human:tester", reason="not now")

    turns = {
        "turns": [
            calling("docs.read_note"),
            calling("docs.page"),
            calling("docs.read_note"),
            calling("docs.post_message", channel="#a", text="x"),
            {"text": "Done."},
        ]
    }
    server = {
        "type": "stdio",
        "command": "python",
        "args": [served.__file__],
        "serverToolDefaults": {"include": "always", "permissionRequired": False},
    }
    agent = write_agent(
        tmp_path / "agent", turns, servers={"docs": server}, settings={"toolPermission": "never"}
    )
    session_id = engine.submit(engine.open_session(agent, ask=person)).result()
    result = engine.submit(engine.send(session_id, "go")).result(120)
    assert asked == ["docs.post_message"]
    assert [call["is_error"] for call in result.tool_calls] == [False, False, False, True]
