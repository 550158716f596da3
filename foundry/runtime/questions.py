"""The questions an agent's calls put to a person, and the rules that would have settled the
needless ones (supervision/needless.py), read from the store and the agent's own policy.

Every method blocks on the database and the filesystem, and decides calls again: call it off
the GUI thread and off an event loop (a worker thread, `asyncio.to_thread`).
"""

from __future__ import annotations

from pathlib import Path

from foundry.agent.document import AgentDocument, load_agent
from foundry.agent.models import PolicyConfig
from foundry.agent.trust import trust_key
from foundry.store import ApprovalRecord, Store
from foundry.supervision.hierarchy import policy_entry_config
from foundry.supervision.needless import NeedlessReport, needless_report, question_counts
from foundry.supervision.paths import server_folders
from foundry.supervision.policy import PolicyEngine
from foundry.supervision.policy_check import (
    CallToCheck,
    CheckedCall,
    agent_sessions,
    recorded_calls,
    recorded_schemas,
    what_if,
)

RECENT_QUESTIONS = 2_000  # the newest approvals looked at, of all agents
RECENT_CALLS = 2_000  # the newest recorded calls of an agent, for the calls rules denied


class QuestionsAsked:
    """The needless-question reports of the agents whose calls are in one store."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def agent_files(self) -> list[Path]:
        """The agent files whose calls asked a person lately, the most recent first."""
        seen: dict[str, None] = {}
        for approval in self._recent():
            if approval.agent_path:
                seen.setdefault(approval.agent_path)
        return [Path(path) for path in seen]

    def report(self, agent_path: Path) -> NeedlessReport:
        """The agent's questions, and the rules its policy could take (none when it has no
        policy supervisor). Raises AgentError when the agent's files do not load."""
        document = load_agent(agent_path)
        key = trust_key(document.path)
        approvals = [a for a in self._recent() if a.agent_path == key]
        config = _policy_of(document)
        if config is None:
            return NeedlessReport(counts=question_counts(approvals), proposals=[])
        workspace = document.base_dir.resolve()
        assert document.agent is not None
        folders = server_folders(document.agent.mcp_servers, workspace)
        schemas = recorded_schemas(
            self._store, reversed(agent_sessions(self._store, document.path))
        )

        def decide(policy: PolicyConfig, calls: list[CallToCheck]) -> list[CheckedCall]:
            compiled = PolicyEngine(policy, workspace, server_folders=folders)
            return what_if(self._store, compiled, policy, workspace, calls, folders, schemas, key)

        return needless_report(
            approvals, config, workspace, decide, folders, self._denied_calls(document.path)
        )

    @classmethod
    def report_of_own_store(cls, agent_path: Path) -> NeedlessReport:
        """The report over Foundry's store, opened for this report alone (an editor without
        an engine) and closed again."""
        with Store.open() as store:
            return cls(store).report(agent_path)

    def _recent(self) -> list[ApprovalRecord]:
        return self._store.approvals.list(limit=RECENT_QUESTIONS)

    def _denied_calls(self, agent_path: Path) -> list[CallToCheck]:
        calls = recorded_calls(self._store, agent_path, RECENT_CALLS)
        return [call for call in calls if call.was == "deny"]


def _policy_of(document: AgentDocument) -> PolicyConfig | None:
    assert document.agent is not None
    return policy_entry_config(document.agent.supervisors)
