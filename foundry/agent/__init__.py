"""The agent definition: pydantic models, the folder and YAML formats, validation, templates."""

from foundry.agent.checks import check_agent, validate_agent
from foundry.agent.document import (
    AgentDocument,
    AgentFormat,
    format_for_path,
    load_agent,
    read_agent,
    save_agent,
)
from foundry.agent.models import (
    Agent,
    AgentMetadata,
    AgentSettings,
    AgentSupervisorEntry,
    IncludeMode,
    Reference,
    Rule,
    SupervisionPermission,
    ToolPermission,
)
from foundry.agent.problems import AgentError, AgentProblem

__all__ = [
    "Agent",
    "AgentDocument",
    "AgentError",
    "AgentFormat",
    "AgentMetadata",
    "AgentProblem",
    "AgentSettings",
    "AgentSupervisorEntry",
    "IncludeMode",
    "Reference",
    "Rule",
    "SupervisionPermission",
    "ToolPermission",
    "check_agent",
    "format_for_path",
    "load_agent",
    "read_agent",
    "save_agent",
    "validate_agent",
]
