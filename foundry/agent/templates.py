"""New agents: what `foundry create-agent` and the editor's "New agent" start from."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from foundry.agent.default_policy import default_policy
from foundry.agent.document import (
    AgentDocument,
    format_for_path,
    new_agent_path_problem,
    save_agent,
)
from foundry.agent.models import Agent, AgentMetadata, AgentSettings, PolicySupervisorEntry
from foundry.agent.problems import AgentError

DEFAULT_SYSTEM_PROMPT = (
    "You are a helpful AI assistant that can use tools to help accomplish tasks."
)


POLICY_ENTRY_ID = "tool-policy"


def new_agent(
    name: str, description: str = "", system_prompt: str | None = None, policy: bool = True
) -> Agent:
    """An agent with every setting written out, so the file shows what can be tuned; with
    `policy`, its tool calls pass the default policy (see agent/default_policy.py)."""
    now = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    settings = AgentSettings.model_validate(AgentSettings().model_dump(exclude_none=True))
    return Agent(
        metadata=AgentMetadata(
            name=name, description=description, version="1.0.0", created=now, last_accessed=now
        ),
        settings=settings,
        system_prompt=DEFAULT_SYSTEM_PROMPT if system_prompt is None else system_prompt,
        rules=[],
        references=[],
        providers={},
        mcp_servers={},
        supervisors=[default_policy_entry()] if policy else [],
    )


def default_policy_entry() -> PolicySupervisorEntry:
    """The supervisors-list entry that puts an agent's tool calls under the default policy."""
    return PolicySupervisorEntry(
        type="policy", id=POLICY_ENTRY_ID, name="Tool approvals", config=default_policy()
    )


def create_agent(path: Path, agent: Agent) -> AgentDocument:
    """Write a new agent at `path` (a folder, or a `.yaml` file); never replaces an existing one."""
    problem = new_agent_path_problem(path)
    if problem:
        raise AgentError([problem])
    document = AgentDocument(path=path, format=format_for_path(path), agent=agent)
    return save_agent(document)
