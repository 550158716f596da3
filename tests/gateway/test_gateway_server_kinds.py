"""Rules bound to the server they were written for, through the real gateway: a third-party
server's tools named like the reference filesystem server's are not allowed unasked, a parameter
its tool does not declare never reaches it, and a shell-wrapped reference server has its
relative paths judged where it resolves them."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import httpx

from foundry.api import ApiServer, create_app
from foundry.cli import main
from foundry.store import Store
from tests.gateway.test_gateway_stdio import gateway, text_of
from tests.gateway.test_gateway_third_party import BIN, TOKEN, _first_pending, pytestmark

__all__ = ["pytestmark"]

KEYWORDS = Path(__file__).with_name("keyword_server.py")
ALWAYS = {"include": "always", "permissionRequired": False}


def careful_agent(tmp_path: Path, servers: dict[str, object]) -> Path:
    """An agent with the careful default policy, its folder the workspace, trusted."""
    agent = tmp_path / "agent"
    assert main(["create-agent", str(agent), "--name", "Kinds"]) == 0
    config = json.loads((agent / "tsagent.json").read_text())
    config["mcpServers"] = servers
    (agent / "tsagent.json").write_text(json.dumps(config))
    (agent / "notes.md").write_text("the secret word is heliotrope\n")
    assert main(["trust", "--yes", str(agent)]) == 0
    return agent


def keyword_server() -> dict[str, object]:
    return {
        "type": "stdio",
        "command": sys.executable,
        "args": [str(KEYWORDS)],
        "serverToolDefaults": ALWAYS,
    }


async def test_a_third_party_search_files_with_an_extra_path_asks_and_never_gets_the_path(
    tmp_path: Path, foundry_home: Path
) -> None:
    agent = careful_agent(tmp_path, {"docs": keyword_server()})
    store = Store.open()
    api = ApiServer(create_app(store, TOKEN))
    url = await api.start()
    try:
        async with gateway(agent, foundry_home) as client:
            waiting = asyncio.ensure_future(
                client.call_tool("docs__search_files", {"keyword": "password", "path": "."})
            )
            approval_id = await _first_pending(url)  # not allowed unasked: a person decides
            assert not waiting.done()
            approval = store.approvals.get(approval_id)
            assert approval.policy_rule == "ask-a-person-about-anything-else"
            async with httpx.AsyncClient(
                base_url=url, headers={"Authorization": f"Bearer {TOKEN}"}
            ) as http:
                assert (await http.post(f"/approvals/{approval_id}/approve")).status_code == 200
            result = await asyncio.wait_for(waiting, 60)
    finally:
        await api.stop()
        store.close()
    text = text_of(result)
    assert not result.is_error
    assert 'received {"keyword": "password"}' in text  # the server never saw `path`
    assert "does not declare: path" in text  # and the client is told it was dropped


async def test_a_third_party_read_file_asks_where_the_reference_servers_read_runs(
    tmp_path: Path, foundry_home: Path
) -> None:
    reference = {
        "type": "stdio",
        "command": str(BIN / "mcp-server-filesystem"),
        "args": [str(tmp_path / "agent")],
        "serverToolDefaults": ALWAYS,
    }
    agent = careful_agent(tmp_path, {"docs": keyword_server(), "fs": reference})
    store = Store.open()
    try:
        async with gateway(agent, foundry_home) as client:
            reference_read = await client.call_tool("fs__read_file", {"path": "notes.md"})
            waiting = asyncio.ensure_future(
                client.call_tool("docs__read_file", {"path": "notes.md"})
            )
            for _ in range(600):
                if store.approvals.list(status="pending"):
                    break
                await asyncio.sleep(0.05)
            pending = store.approvals.list(status="pending")
            waiting.cancel()
    finally:
        store.close()
    assert not reference_read.is_error and "heliotrope" in text_of(reference_read)
    assert [approval.tool for approval in pending] == ["docs.read_file"]


async def test_a_shell_wrapped_filesystem_server_has_relative_paths_judged_from_its_root(
    tmp_path: Path, foundry_home: Path
) -> None:
    """Rooted above the workspace through `sh -c "exec ..."`: it reads `secret.md` from its
    root, outside; `agent/notes.md` from its root is inside."""
    (tmp_path / "secret.md").write_text("the outside password is tangerine\n")
    wrapped = {
        "type": "stdio",
        "command": "sh",
        "args": ["-c", f"exec {BIN / 'mcp-server-filesystem'} {tmp_path}"],
        "serverToolDefaults": ALWAYS,
    }
    agent = careful_agent(tmp_path, {"fs": wrapped})
    async with gateway(agent, foundry_home) as client:
        outside = await client.call_tool("fs__read_text_file", {"path": "secret.md"})
        written = await client.call_tool("fs__write_file", {"path": "new.md", "content": "x"})
        inside = await client.call_tool("fs__read_text_file", {"path": "agent/notes.md"})
    assert outside.is_error and "deny-reading-text-outside-the-workspace" in text_of(outside)
    assert "tangerine" not in text_of(outside)
    assert written.is_error and "deny-writing-outside-the-workspace" in text_of(written)
    assert not (tmp_path / "new.md").exists()
    assert not inside.is_error and "heliotrope" in text_of(inside)
