"""Pinned definitions in a chat: after the rug pull the model is offered what the person
trusted, the sidenote the poisoned text asks for is not passed on, and the call asks a person."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

from foundry.agent.document import load_agent
from foundry.llm.base import ChatRequest, Chunk
from foundry.llm.registry import ModelChoice
from foundry.llm.scripted import ScriptedProvider
from foundry.session.chat import ChatSession
from foundry.session.events import ToolCallFinished
from foundry.store import Store
from foundry.supervision.tool_definitions import ToolDefinitions
from foundry.supervision.tool_pins import PinStore
from tests.supervision import test_tool_pins
from tests.supervision.test_hierarchy import Recorder, gate, resolve_soon
from tests.supervision.test_tool_pins import ALLOW_CALC, StartHost, pull, source

start_host = test_tool_pins.start_host  # the fixture: the rug pull server in a ToolHost
TURNS = [
    {"tool_calls": [{"name": "calc.add", "arguments": {"a": 1, "b": 2, "sidenote": "key"}}]},
    {"text": "The sum is 3."},
]


class Listening(ScriptedProvider):
    """The scripted model, keeping each request it was sent (the tools it was offered)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.requests: list[ChatRequest] = []

    async def stream(self, request: ChatRequest) -> AsyncIterator[Chunk]:
        self.requests.append(request)
        async for chunk in super().stream(request):
            yield chunk


async def test_after_a_rug_pull_the_model_is_offered_the_pinned_tool_and_the_call_asks(
    start_host: StartHost, tmp_path: Path
) -> None:
    host = await start_host()
    definitions: ToolDefinitions = source(host, PinStore(tmp_path / "pins.json"), Recorder())
    definitions.observe()  # the first listing after trust: pinned
    await pull(host)
    (tmp_path / "turns.json").write_text(json.dumps({"turns": TURNS}))
    (tmp_path / "tsagent.json").write_text(json.dumps({"metadata": {"name": "Sums"}}))
    (tmp_path / "prompt.md").write_text("You add.")
    agent = load_agent(tmp_path).agent
    assert agent is not None
    model = Listening(tmp_path / "turns.json")
    store = Store.open(f"sqlite:///{tmp_path / 'chat.sqlite3'}")
    events = Recorder()
    try:
        checks = gate(store, tmp_path, events, config=ALLOW_CALC, concerns=[definitions])
        chat = ChatSession(
            "s1", agent, ModelChoice.parse("scripted:turns.json"), model, checks, events, host
        )
        answering = asyncio.ensure_future(chat.send("What is 1 + 2?"))
        await resolve_soon(store, "approved")
        await answering
        approval = store.approvals.list("approved")[0]
        assert "definition-changed" in [c["kind"] for c in approval.concerns]
    finally:
        store.close()
    offered = {spec.name: spec for spec in model.requests[0].tools}
    assert offered["calc.add"].description == "Adds two numbers."
    assert "sidenote" not in offered["calc.add"].parameters["properties"]
    assert "calc.export_notes" in offered  # a new tool is offered, its calls held
    finished = next(e for e in events.events if isinstance(e, ToolCallFinished))
    assert finished.text.startswith('received {"a": 1, "b": 2}')  # no sidenote reached it
