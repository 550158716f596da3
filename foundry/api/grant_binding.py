"""Which agents a grant made through the API covers: those of a name, or one agent file."""

from __future__ import annotations

import fnmatch
import glob
from dataclasses import dataclass
from pathlib import Path

from foundry.agent.document import is_agent_path, read_agent
from foundry.agent.trust import trust_key
from foundry.runtime.approvals import Approvals, NotFound


class BindingError(ValueError):
    """A grant that cannot be bound as the body asks; `field` is the body field at fault."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class AgentBinding:
    """Agents whose name matches `agent_glob`; with `agent_path`, only the agent at that file
    (its resolved path, as trust keys agents), as `GrantRecord.covers_agent` tests it."""

    agent_glob: str
    agent_path: str | None = None


def bind_grant(
    approvals: Approvals, agent_glob: str | None, approval_id: str | None, agent_path: str | None
) -> AgentBinding:
    """The agents a new grant covers. Without an approval or a path: every agent whose name
    matches `agent_glob` (all of them without one). With one: that agent's file, and only while
    its name matches `agent_glob`, which must match the agent's name now; without a glob, that
    name (escaped, so that a name like `work*` names no other agent)."""
    if approval_id is None and agent_path is None:
        return AgentBinding(agent_glob or "*")
    name, identity = _bound_agent(approvals, approval_id, agent_path)
    if agent_glob is None:
        return AgentBinding(glob.escape(name), identity)
    if not fnmatch.fnmatchcase(name, agent_glob):
        raise BindingError(
            "agent",
            f"does not match {name!r}, the name of the agent the grant is bound to: leave "
            "`agent` out to use that name",
        )
    return AgentBinding(agent_glob, identity)


def _bound_agent(
    approvals: Approvals, approval_id: str | None, agent_path: str | None
) -> tuple[str, str]:
    """The name and file of the agent a grant is bound to: the approval's (which a path, when
    given too, must name), or the agent's at the path."""
    if approval_id is None:
        assert agent_path is not None
        return agent_at(agent_path)
    name, identity = approvals_agent(approvals, approval_id)
    if agent_path is not None and agent_identity(agent_path) != identity:
        raise BindingError(
            "agent_path", f"is not the file of the approval's agent, which is {identity}"
        )
    return name, identity


def approvals_agent(approvals: Approvals, approval_id: str) -> tuple[str, str]:
    """The name and file of the agent that asked for approval `approval_id`, as recorded
    when it asked: the client names the approval, never the file, so it cannot forge one."""
    try:
        approval = approvals.get(approval_id)
    except NotFound:
        raise BindingError("approval_id", "no approval has this id") from None
    if not approval.agent_path:
        raise BindingError(
            "approval_id",
            "this approval does not record its agent's file (it was made outside a session, "
            "or before approvals recorded it), so no grant can be bound to that agent: grant "
            "by name with `agent` alone",
        )
    return approval.agent_id, approval.agent_path


def agent_at(text: str) -> tuple[str, str]:
    """The name and file of the agent at the path `text`, read from it now."""
    identity = agent_identity(text)
    document = read_agent(Path(identity))
    if document.agent is None:
        raise BindingError(
            "agent_path", f"the agent at {identity} cannot be read; `foundry validate` says why"
        )
    return document.agent.metadata.name, identity


def agent_identity(text: str) -> str:
    """The agent at the absolute path `text` on this machine, as trust keys it: links and `..`
    resolved, a folder holding tsagent.yaml being that file. BindingError unless an agent is
    there now: a grant for a file that is not there yet would go to whoever puts one there."""
    path = Path(text)
    if not path.is_absolute():
        raise BindingError(
            "agent_path",
            "must be absolute: a relative path would start from the server's working folder",
        )
    try:
        identity = trust_key(path)
        found = is_agent_path(Path(identity))
    except (OSError, RuntimeError, ValueError) as error:
        raise BindingError("agent_path", f"cannot be resolved: {_why(error)}") from None
    if not found:
        raise BindingError(
            "agent_path",
            "names no agent on the machine that runs the API (resolved, it is no agent folder "
            "or YAML file): give an agent's path there, or bind the grant with `approval_id`",
        )
    return identity


def _why(error: Exception) -> str:
    """Why a path cannot be resolved, without the path (which may be long: 422s never echo
    their input)."""
    if isinstance(error, OSError):
        return error.strerror or "the file system refused it"
    if isinstance(error, RuntimeError):  # Python 3.11's Path.resolve() on a loop of links
        return "a loop of symbolic links"
    return "it holds a NUL character"
