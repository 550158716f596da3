"""The records the API tests start from: the token, pending approvals, past traces, agents."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

from foundry.store import ApprovalRecord, Store, TraceRecord
from foundry.store.tables import utc_now

TOKEN = "test-token-0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def pending(
    store: Store,
    tool: str = "filesystem.write_file",
    agent: str = "claude",
    params: dict[str, Any] | None = None,
    expires_in: timedelta | None = timedelta(minutes=5),
    policy_rule: str | None = "claude:rule-2",
    agent_path: str | None = None,
) -> ApprovalRecord:
    return store.approvals.create(
        ApprovalRecord(
            agent_id=agent,
            agent_path=agent_path,
            tool=tool,
            params=params if params is not None else {"path": "/home/user/project/main.go"},
            policy_rule=policy_rule,
            expires_at=utc_now() + expires_in if expires_in else None,
        )
    )


def agent_folder(folder: Path, name: str = "worker") -> Path:
    """A real agent folder (tsagent.json naming it `name`) holding src/ to work in."""
    (folder / "src").mkdir(parents=True)
    (folder / "tsagent.json").write_text(json.dumps({"metadata": {"name": name}}))
    return folder


def trace(store: Store, agent: str = "claude", tool: str = "filesystem.read_file") -> TraceRecord:
    return store.traces.add(
        TraceRecord(
            agent_id=agent, tool=tool, decision="allow", resolved_level="policy", resolved_by="p"
        )
    )
