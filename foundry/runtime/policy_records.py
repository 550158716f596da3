"""What the editor's Try panel reads of an agent's stored sessions: the calls they decided, the
schemas their servers offered, and those calls decided again under an edited policy.

Every method blocks on the database: call it off the GUI thread (a worker thread).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from foundry.agent.models import PolicyConfig
from foundry.store import Store
from foundry.supervision.paths import ServerPlaces
from foundry.supervision.policy import PolicyEngine
from foundry.supervision.policy_check import (
    CallToCheck,
    CheckedCall,
    Schemas,
    agent_sessions,
    recorded_calls,
    recorded_schemas,
    what_if,
)


class PolicyRecords:
    """An agent's recorded calls and tools, over one store (the engine's, or one of its own)."""

    def __init__(self, store: Store, owned: bool = False) -> None:
        self._store = store
        self._owned = owned

    @classmethod
    def opened(cls) -> PolicyRecords:
        """Over Foundry's store, opened for the caller alone (an editor without an engine):
        `close` closes it."""
        return cls(Store.open(), owned=True)

    def calls(self, agent_path: Path, limit: int) -> list[CallToCheck]:
        """The last `limit` tool calls decided in the agent's sessions, oldest first."""
        return recorded_calls(self._store, agent_path, limit)

    def schemas(self, agent_path: Path) -> dict[str, dict[str, Any]]:
        """The input schema of each tool the agent's servers offered in its recent sessions
        (the newest session's wins)."""
        return recorded_schemas(self._store, reversed(agent_sessions(self._store, agent_path)))

    def what_if(
        self,
        compiled: PolicyEngine,
        config: PolicyConfig,
        workspace: Path,
        calls: list[CallToCheck],
        server_folders: ServerPlaces | None = None,
        tool_schemas: Schemas | None = None,
        agent_path: str | None = None,
    ) -> list[CheckedCall]:
        """`calls` decided under `config`, with the grants of the agent at `agent_path` (see
        policy_check.what_if)."""
        return what_if(
            self._store,
            compiled,
            config,
            workspace,
            calls,
            server_folders,
            tool_schemas,
            agent_path,
        )

    def close(self) -> None:
        """Close the store if it was opened for this (the engine's stays open)."""
        if self._owned:
            self._store.close()
