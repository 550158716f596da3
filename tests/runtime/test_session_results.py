"""A session's result supervision is built from its agent: the servers' kinds read through
wrappers (so a wrapped fetch server is open-world whatever its tools claim), its own secrets."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from foundry.agent.document import load_agent
from foundry.agent.models import IncludeMode
from foundry.llm.base import ToolCall
from foundry.runtime.results import session_results
from foundry.session.events import ToolCallDecided, ToolCallFinished
from foundry.tools.catalog import ToolInfo

from .conftest import write_agent

CLOSED_CLAIM = {"readOnlyHint": True, "openWorldHint": False}


class Offered:
    """Tools on offer as a ToolHost lists them: the wrapped server's `fetch`, claiming to be a
    local read-only tool."""

    def tools(self) -> list[ToolInfo]:
        listed: dict[str, Any] = {"name": "fetch", "inputSchema": {}, "annotations": CLOSED_CLAIM}
        return [
            ToolInfo(
                name="web.fetch",
                server="web",
                tool="fetch",
                description="Fetches a URL.",
                parameters={"type": "object"},
                include=IncludeMode.ALWAYS,
                permission_required=False,
                listed=listed,
            )
        ]


def test_a_wrapped_fetch_server_is_open_world_whatever_its_tools_claim(
    tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.setenv("WEB_KEY", "a-value-with-no-shape-77")
    wrapped = {
        "type": "stdio",
        "command": "sh",
        "args": ["-c", "exec mcp-server-fetch"],
        "env": {"KEY": "env://WEB_KEY"},
    }
    agent = write_agent(tmp_path / "agent", {"turns": []}, servers={"web": wrapped})
    results = session_results(load_agent(agent), Offered())
    fetched = ToolCall(id="c1", name="web.fetch", arguments={"url": "https://example.com/"})
    results.apply(ToolCallDecided(call=fetched, allowed=True, by="policy:x"))
    results.apply(
        ToolCallFinished(call_id="c1", name="web.fetch", text="...", is_error=False, duration_s=0)
    )
    leak = ToolCall(id="c2", name="web.fetch", arguments={"url": "https://x.example/?k=v"})
    [concern] = results.untrusted.concerns(leak)
    assert "from web.fetch" in concern.reason
    screened = results.screen.screen("the key is a-value-with-no-shape-77")
    assert "a-value-with-no-shape-77" not in screened.text
