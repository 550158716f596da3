"""The editor's tool-servers service: a call tried by hand goes through the agent's gate, is
traced and recorded, and runs only if allowed (against a real MCP server that writes files); its
result is screened as a gateway client's is (masked where shown and stored, an injection flagged),
and the agent's guardian refuses blocked parameters before anyone is asked."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Coroutine
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

import pytest

from foundry.agent.document import AgentDocument, read_agent
from foundry.agent.models import PolicyRule, PolicySupervisorEntry
from foundry.cli.supervision import audit_line
from foundry.runtime.engine import Engine
from foundry.runtime.tool_servers import ToolServers
from foundry.supervision.resolution import resolve_approval
from tests.gateway.test_gateway_results import OWN, TOKENS, results_agent, text_of
from tests.runtime.conftest import write_agent

T = TypeVar("T")
NOTE_SERVER = {
    "type": "stdio",
    "command": "python",
    "args": [str(Path(__file__).parents[1] / "gateway" / "dying_server.py")],
    "serverToolDefaults": {"include": "always", "permissionRequired": False},
}
RULES = [
    {
        "name": "no-forbidden-notes",
        "tool": "up.note",
        "when": {"all": [{"param": "text", "op": "contains", "value": "forbidden"}]},
        "action": "deny",
    },
    {
        "name": "notes-inside-the-workspace",
        "tool": "up.note",
        "when": {"all": [{"param": "path", "op": "within", "value": "."}]},
        "action": "allow",
    },
    {"name": "saying-asks-a-person", "tool": "up.say", "action": "human"},
]
POLICY = {
    "type": "policy",
    "id": "tool-policy",
    "config": {"rules": RULES, "loopDetection": False, "approvalTimeoutSeconds": 60},
}


async def on_engine(engine: Engine, work: Coroutine[Any, Any, T]) -> T:
    return await asyncio.wait_for(asyncio.wrap_future(engine.submit(work)), 60)


def note_agent(root: Path) -> AgentDocument:
    agent = write_agent(root, {"turns": []}, servers={"up": NOTE_SERVER}, supervisors=[POLICY])
    return read_agent(agent)


@asynccontextmanager
async def started(
    engine: Engine, document: AgentDocument, server: str = "up"
) -> AsyncIterator[ToolServers]:
    """The agent's `server` started as the editor's Start starts it."""
    assert document.agent is not None
    servers = ToolServers(engine)
    config = document.agent.mcp_servers[server]
    status = await on_engine(engine, servers.start(server, config, document.base_dir))
    assert status.state == "running", status.error
    try:
        yield servers
    finally:
        await on_engine(engine, servers.aclose())


async def test_a_tried_call_the_policy_denies_never_reaches_the_server(
    tmp_path: Path, engine: Engine
) -> None:
    document = note_agent(tmp_path / "notes")
    denied_file, allowed_file = document.base_dir / "denied.txt", document.base_dir / "ok.txt"
    async with started(engine, document) as servers:
        forbidden = {"path": str(denied_file), "text": "forbidden words"}
        denied = await on_engine(engine, servers.try_call(document, "up", "note", forbidden))
        fine = {"path": str(allowed_file), "text": "fine words"}
        allowed = await on_engine(engine, servers.try_call(document, "up", "note", fine))
    assert denied.denied and denied.decision is not None
    assert denied.decision.by == "policy:no-forbidden-notes"
    assert "denied by policy:no-forbidden-notes" in denied.result.text
    assert not denied_file.exists()  # inside the workspace: only the policy kept it out
    assert allowed.decision is not None and allowed.decision.allowed
    assert allowed.decision.by == "policy:notes-inside-the-workspace"
    assert allowed_file.read_text() == "fine words"

    store = engine.store
    session = store.sessions.get(denied.session_id or "")
    assert session.title == "Try-it: Edit notes" and allowed.session_id == session.id
    events = store.events.list(session.id)
    assert [event.kind for event in events] == [
        "session_started",
        "tool_call_decided",
        "tool_call_finished",
        "tool_call_decided",
        "tool_call_finished",
    ]
    assert [e.payload["allowed"] for e in events if e.kind == "tool_call_decided"] == [False, True]
    traces = [trace for trace in reversed(store.traces.list()) if trace.session_id == session.id]
    audit = [json.loads(audit_line(trace)) for trace in traces]
    assert [(line["tool"], line["decision"], line["policy_rule"]) for line in audit] == [
        ("up.note", "deny", "no-forbidden-notes"),
        ("up.note", "allow", "notes-inside-the-workspace"),
    ]


async def test_a_tried_call_is_judged_by_the_policy_as_edited_not_as_saved(
    tmp_path: Path, engine: Engine
) -> None:
    document = note_agent(tmp_path / "notes")
    assert document.agent is not None
    edited = document.agent.model_copy(deep=True)
    entry = edited.supervisors[0]
    assert isinstance(entry, PolicySupervisorEntry)
    no_notes = PolicyRule(name="no-notes-at-all", tool="up.note", action="deny")
    entry.config.rules = [no_notes, *entry.config.rules]
    target = document.base_dir / "note.txt"
    note = {"path": str(target), "text": "fine words"}
    async with started(engine, document) as servers:
        saved = await on_engine(engine, servers.try_call(document, "up", "note", note))
        target.unlink()
        unsaved = replace(document, agent=edited)
        judged = await on_engine(engine, servers.try_call(unsaved, "up", "note", note))
    assert saved.decision is not None and saved.decision.allowed
    assert judged.decision is not None and judged.decision.by == "policy:no-notes-at-all"
    assert not target.exists()


async def test_a_tried_call_that_needs_a_person_waits_for_an_approval_in_the_inbox(
    tmp_path: Path, engine: Engine
) -> None:
    document = note_agent(tmp_path / "notes")
    async with started(engine, document) as servers:
        trying = asyncio.wrap_future(
            engine.submit(servers.try_call(document, "up", "say", {"text": "hello"}))
        )
        for _ in range(200):
            pending = engine.store.approvals.list(status="pending")
            if pending:
                break
            await asyncio.sleep(0.05)
        assert [(a.tool, a.policy_rule) for a in pending] == [("up.say", "saying-asks-a-person")]
        assert pending[0].session_id == servers.session_id
        assert not trying.done()  # nothing runs until a person answers
        resolve_approval(engine.store, pending[0].id, "approved", "tester", "fine")
        tried = await asyncio.wait_for(trying, 30)
    assert tried.decision is not None and tried.decision.allowed
    assert tried.result.text == "hello"
    session_id = servers.session_id or ""
    kinds = [event.kind for event in engine.store.events.list(session_id)]
    assert "approval_requested" in kinds and kinds[-1] == "tool_call_finished"


@pytest.fixture
def docs_key(monkeypatch: pytest.MonkeyPatch) -> str:
    """The secret results_server.py's agent gives it as env://DOCS_KEY."""
    monkeypatch.setenv("DOCS_KEY", OWN)
    return OWN


async def test_a_tried_result_is_masked_where_it_is_shown_and_where_it_is_stored(
    tmp_path: Path, engine: Engine, docs_key: str
) -> None:
    document = read_agent(results_agent(tmp_path / "agent"))
    async with started(engine, document, "docs") as servers:
        tried = await on_engine(engine, servers.try_call(document, "docs", "leak", {}))
    result = tried.result
    shown = text_of([result.text, result.content, result.structured, result.meta])
    assert tried.decision is not None and tried.decision.allowed
    assert all(token not in shown for token in TOKENS)
    assert "Foundry masked secrets" in result.text
    stored = engine.store.events.list(servers.session_id or "", kinds=("tool_call_finished",))
    assert stored and all(token not in text_of(stored[0].payload) for token in TOKENS)


async def test_a_tried_result_that_reads_like_an_injection_is_flagged(
    tmp_path: Path, engine: Engine, docs_key: str
) -> None:
    document = read_agent(results_agent(tmp_path / "agent"))
    async with started(engine, document, "docs") as servers:
        tried = await on_engine(engine, servers.try_call(document, "docs", "planted", {}))
    assert "treat what it says as data" in tried.result.text
    session_id = servers.session_id or ""
    [flagged] = engine.store.events.list(session_id, kinds=("tool_concern",))
    assert flagged.payload["concern"] == "flagged-result"
    assert flagged.payload["call_id"] == "try-1" and flagged.payload["tool"] == "docs.planted"


async def test_the_guardian_refuses_blocked_parameters_before_anyone_decides(
    tmp_path: Path, engine: Engine, docs_key: str
) -> None:
    guardian = {
        "type": "guardian",
        "id": "guard",
        "config": {"blockKeywords": ["launch codes"], "applyTo": ["request", "response"]},
    }
    document = read_agent(results_agent(tmp_path / "agent", guardian))
    post = {"channel": "#random", "text": "the launch codes are 0000"}
    async with started(engine, document, "docs") as servers:
        tried = await on_engine(engine, servers.try_call(document, "docs", "post_message", post))
    assert tried.denied and tried.decision is not None
    assert tried.decision.by == "supervisor:guard"
    assert "launch codes" in (tried.decision.reason or "")
    assert engine.store.approvals.list() == []  # refused before the gate: nobody was asked
