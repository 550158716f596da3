"""Agents with a scripted model and the real time MCP server, and an engine on a fresh store."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from foundry.agent.document import read_agent
from foundry.agent.trust import TrustStore
from foundry.runtime.engine import Engine
from foundry.store import Store

TIME_SERVER = {
    "type": "stdio",
    "command": "python",
    "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"],
    "serverToolDefaults": {"permissionRequired": False, "include": "always"},
}

TOKYO_TURNS = {
    "turns": [
        {
            "text": "Let me check. ",
            "tool_calls": [
                {"name": "time.get_current_time", "arguments": {"timezone": "Asia/Tokyo"}}
            ],
        },
        {"text": "It is evening in Tokyo (Asia/Tokyo)."},
        {"text": "You are welcome."},
    ]
}


def write_agent(
    root: Path,
    turns: dict[str, Any],
    servers: dict[str, Any] | None = None,
    settings: dict[str, Any] | None = None,
    rules: dict[str, str] | None = None,
    supervisors: list[dict[str, Any]] | None = None,
    trusted: bool = True,
) -> Path:
    """A folder agent whose model is `scripted:turns.json` beside it, its commands trusted in
    the test's Foundry home (as the user would have trusted them) unless `trusted` is False."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "turns.json").write_text(json.dumps(turns))
    config = {
        "metadata": {"name": root.name},
        "settings": {"model": "scripted:turns.json", "toolPermission": "tool", **(settings or {})},
        "mcpServers": servers if servers is not None else {"time": TIME_SERVER},
        "supervisors": supervisors or [],
    }
    (root / "tsagent.json").write_text(json.dumps(config))
    (root / "prompt.md").write_text("You are a test agent.")
    for name, include in (rules or {}).items():
        (root / "rules").mkdir(exist_ok=True)
        header = json.dumps({"name": name, "include": include, "description": name})
        (root / "rules" / f"{name}.mdt").write_text(f"---\n{header}---\nRule {name} text.\n")
    if trusted:
        trust(root)
    return root


@contextlib.contextmanager
def engine_over(url: str, **options: Any) -> Iterator[Engine]:
    """An engine started on its own store at `url` (as another Foundry process would be); both
    closed after."""
    with Store.open(url) as store, Engine(store, **options) as started:
        yield started


def trust(agent: Path) -> None:
    """Trust the agent's commands in the test's Foundry home, as `foundry trust` would."""
    TrustStore.default().grant(read_agent(agent))


@pytest.fixture
def tokyo_agent(tmp_path: Path) -> Path:
    return write_agent(tmp_path / "tokyo", TOKYO_TURNS)


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    store = Store.open(f"sqlite:///{tmp_path / 'engine.sqlite3'}")
    with Engine(store, retry_delays_s=(0.05, 0.05)) as started:
        yield started
    store.close()
