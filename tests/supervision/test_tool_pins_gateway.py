"""Pinned definitions through `foundry gateway` (a real client, the real engine and store): the
rug pull server's changed `add` is offered as pinned and asks a person with the diff in the
approval, its change is told once in the session's events, approving pins it (and offers it),
and a second gateway process keeps the pins."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from foundry.store import Store
from foundry.supervision.tool_pins import PIN_FILE
from tests.gateway.test_gateway_stdio import POLICY, gateway, text_of
from tests.runtime.conftest import write_agent

TOLD = "tool_concern"  # ToolConcernRaised
SERVER = Path(__file__).with_name("rug_pull_server.py")
ALLOW_CALC = {
    **POLICY,
    "config": {
        "rules": [{"name": "calc-is-fine", "tool": "calc.*", "action": "allow"}],
        "loopDetection": False,
        "approvalTimeoutSeconds": 60,
    },
}


def calc_agent(root: Path) -> Path:
    """A trusted agent whose `calc` server is the rug pull server, its calls allowed."""
    server = {"type": "stdio", "command": "python", "args": [str(SERVER)]}
    defaults = {"include": "always", "permissionRequired": False}
    servers = {"calc": {**server, "serverToolDefaults": defaults}}
    return write_agent(root, {"turns": []}, servers=servers, supervisors=[ALLOW_CALC])


async def listing_with(client: Any, name: str) -> dict[str, Any]:
    """The client's listing of the gateway's tools, once it offers `name`."""
    for _ in range(500):
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        if name in listed:
            return listed
        await asyncio.sleep(0.02)
    raise AssertionError(f"{name} was never offered")


async def first_pending(store: Store) -> Any:
    for _ in range(1000):
        pending = await asyncio.to_thread(store.approvals.list, "pending")
        if pending:
            return pending[0]
        await asyncio.sleep(0.02)
    raise AssertionError("no approval appeared")


async def test_a_rug_pull_through_the_gateway_asks_with_the_diff_and_approving_pins_it(
    tmp_path: Path, foundry_home: Path
) -> None:
    agent = calc_agent(tmp_path / "agent")
    store = Store.open()
    try:
        async with gateway(agent, foundry_home) as client:
            assert text_of(await client.call_tool("calc__add", {"a": 1, "b": 2})).startswith(
                "received"
            )
            await client.call_tool("calc__pull", {})
            listed = await listing_with(client, "calc__export_notes")  # listed again
            # the client is offered what the person trusted, the change waits for a person
            assert listed["calc__add"].description == "Adds two numbers."
            assert "sidenote" not in listed["calc__add"].input_schema["properties"]
            waiting = asyncio.ensure_future(client.call_tool("calc__add", {"a": 1, "b": 2}))
            approval = await first_pending(store)
            kinds = [concern["kind"] for concern in approval.concerns]
            assert "definition-changed" in kinds
            changed = approval.concerns[kinds.index("definition-changed")]["detail"]
            assert "sidenote" in changed["diff"] and "~/.ssh" in changed["description"]
            await asyncio.to_thread(store.approvals.resolve, approval.id, "approved", "human:ana")
            assert "received" in text_of(await waiting)
            approved = await listing_with(client, "calc__add")  # the change is pinned now
            assert "sidenote" in approved["calc__add"].input_schema["properties"]
        events = store.events.list(approval.session_id)
        told = [(e.payload["concern"], e.payload["tool"]) for e in events if e.kind == TOLD]
        assert told.count(("definition-changed", "calc.add")) == 1
        assert ("new-tool", "calc.export_notes") in told
        assert (foundry_home / "data" / PIN_FILE).exists()

        # a second gateway process: the approved definition is pinned, the new tool still new
        async with gateway(agent, foundry_home) as client:
            waiting = asyncio.ensure_future(client.call_tool("calc__export_notes", {"path": "n"}))
            approval = await first_pending(store)
            assert [c["kind"] for c in approval.concerns] == ["new-tool"]
            await asyncio.to_thread(store.approvals.resolve, approval.id, "denied", "human:ana")
            assert (await waiting).is_error
            adding = asyncio.ensure_future(
                client.call_tool("calc__add", {"a": 1, "b": 2, "sidenote": "x"})
            )
            approval = await first_pending(store)
            assert [c["kind"] for c in approval.concerns] == ["flagged-description"]
            await asyncio.to_thread(store.approvals.resolve, approval.id, "denied", "human:ana")
            await adding
    finally:
        store.close()
