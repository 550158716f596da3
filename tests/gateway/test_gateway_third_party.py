"""The gateway between real third-party parts: the reference filesystem server behind it, the
Python SDK's client and the MCP Inspector's CLI in front, approvals answered over the API."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from foundry.api import ApiServer, create_app
from foundry.cli import main
from foundry.store import Store
from tests.gateway.test_gateway_stdio import gateway, text_of

NPM = Path(__file__).resolve().parent / "npm"
BIN = NPM / "node_modules" / ".bin"
TOKEN = "t" * 43

pytestmark = pytest.mark.skipif(
    not (BIN / "mcp-server-filesystem").exists() and os.environ.get("FOUNDRY_REQUIRE_NPM") != "1",
    reason="the npm test parts are not installed: npm ci --prefix tests/gateway/npm",
)


def filesystem_agent(tmp_path: Path, root: Path | None = None) -> Path:
    """An agent with the default policy whose workspace is its folder, and the filesystem server
    rooted there, or at `root`. (Rooted above, the kernel still keeps it to the workspace, but
    the reference server lists its way down from its root to a new file, which it may not.)"""
    agent = tmp_path / "agent"
    assert main(["create-agent", str(agent), "--name", "Files"]) == 0
    config = json.loads((agent / "tsagent.json").read_text())
    config["mcpServers"] = {
        "fs": {
            "type": "stdio",
            "command": str(BIN / "mcp-server-filesystem"),
            "args": [str(root or agent)],
            "serverToolDefaults": {"include": "always", "permissionRequired": False},
        }
    }
    (agent / "tsagent.json").write_text(json.dumps(config))
    (agent / "notes.md").write_text("the secret word is heliotrope\n")
    assert main(["trust", "--yes", str(agent)]) == 0
    return agent


async def test_reads_run_writes_outside_are_denied_and_a_sensitive_write_waits_for_the_api(
    tmp_path: Path, foundry_home: Path
) -> None:
    agent = filesystem_agent(tmp_path)
    store = Store.open()
    api = ApiServer(create_app(store, TOKEN))
    url = await api.start()
    try:
        async with gateway(agent, foundry_home) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert {"fs__read_text_file", "fs__write_file"} <= names
            read = await client.call_tool("fs__read_text_file", {"path": str(agent / "notes.md")})
            assert not read.is_error and "heliotrope" in text_of(read)
            outside = tmp_path / "outside.txt"
            write = await client.call_tool("fs__write_file", {"path": str(outside), "content": "x"})
            assert write.is_error and "deny-writing-outside-the-workspace" in text_of(write)
            assert not outside.exists()
            waiting = asyncio.ensure_future(
                client.call_tool(
                    "fs__write_file", {"path": str(agent / ".env"), "content": "KEY=1"}
                )
            )
            approval_id = await _first_pending(url)
            async with httpx.AsyncClient(
                base_url=url, headers={"Authorization": f"Bearer {TOKEN}"}
            ) as http:
                answer = await http.post(f"/approvals/{approval_id}/approve")
                assert answer.status_code == 200
            written = await asyncio.wait_for(waiting, 60)
            assert not written.is_error and (agent / ".env").read_text() == "KEY=1"
    finally:
        await api.stop()
        store.close()


async def _first_pending(url: str) -> str:
    async with httpx.AsyncClient(
        base_url=url, headers={"Authorization": f"Bearer {TOKEN}"}
    ) as http:
        for _ in range(600):
            pending = (await http.get("/approvals", params={"status": "pending"})).json()
            if pending:
                return str(pending[0]["id"])
            await asyncio.sleep(0.05)
    raise AssertionError("no approval reached the API")


def inspector(*args: str, home: Path, agent: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "foundry.cli", "gateway", str(agent)]
    return subprocess.run(
        [str(BIN / "mcp-inspector"), "--cli", "-e", f"FOUNDRY_HOME={home}", *command, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "FOUNDRY_HOME": str(home)},
        cwd=NPM,
    )


def test_the_inspector_cli_lists_and_calls_through_the_gateway(
    tmp_path: Path, foundry_home: Path
) -> None:
    agent = filesystem_agent(tmp_path)
    listed = inspector("--method", "tools/list", home=foundry_home, agent=agent)
    assert listed.returncode == 0, listed.stderr
    assert "fs__read_text_file" in listed.stdout
    read = inspector(
        "--method", "tools/call", "--tool-name", "fs__read_text_file",
        "--tool-arg", f"path={agent / 'notes.md'}",
        home=foundry_home, agent=agent,
    )  # fmt: skip
    assert read.returncode == 0, read.stderr
    assert "heliotrope" in read.stdout
    denied = inspector(
        "--method", "tools/call", "--tool-name", "fs__write_file",
        "--tool-arg", f"path={tmp_path / 'outside.txt'}", "--tool-arg", "content=x",
        home=foundry_home, agent=agent,
    )  # fmt: skip
    assert "deny-writing-outside-the-workspace" in denied.stdout + denied.stderr
    assert not (tmp_path / "outside.txt").exists()
