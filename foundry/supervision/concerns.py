"""Concerns: why a tool call must go to a person whatever the rules and grants say.

The rules judge what a call says. Some dangers are not in the call but around it: the tool's
definition changed since a person trusted its server, its description reads like instructions to
the model, or the session has taken in untrusted content and the call sends data out. A source of
concerns looks at each call the policy does not deny; a call with a concern skips the allow rules,
the grants and the L1 supervisor and asks a person, who sees each concern (its reason and what it
rests on: a description, a diff, the result that was flagged). What a person approves unchanged is
handed back to the source that raised it (`accepted`): approving a changed definition pins it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from foundry.llm.base import ToolCall

ConcernKind = Literal[
    "definition-changed",  # the tool's definition is not the one pinned when it was trusted
    "new-tool",  # a tool its trusted server did not offer when it was trusted
    "flagged-description",  # the tool's description or schema holds instructions to the model
    "shadowing",  # its name or description shadows another server's tool
    "untrusted-content",  # the session took in untrusted content and the call sends data out
]

FLAGGED_RESULT = "flagged-result"  # a ToolConcernRaised about a result, not a held call
REMOVED_TOOL = "removed-tool"  # a ToolConcernRaised about a pinned tool no longer listed
HEADINGS = {
    "definition-changed": "The tool's definition changed since its server was trusted",
    "new-tool": "A new tool: its server did not offer it when it was trusted",
    "flagged-description": "The tool's description reads like instructions to the model",
    "shadowing": "The tool shadows another server's tool",
    "untrusted-content": "The session took in untrusted content before this call",
    FLAGGED_RESULT: "The result reads like a prompt injection",
    REMOVED_TOOL: "A tool its trusted server offered is gone",
}


def heading(kind: str) -> str:
    """A concern's kind as a person reads it, as a warning's heading."""
    return HEADINGS.get(kind, "Supervision has a concern about this tool")


class Concern(BaseModel):
    """One reason a person decides the call, as the approval shows it."""

    model_config = ConfigDict(frozen=True)

    kind: ConcernKind
    reason: str  # plain words: "its description changed since you trusted server 'calc'"
    # what the reason rests on, shown in the approval: `description`, `diff`, `result`, `tool`
    detail: dict[str, Any] = Field(default_factory=dict)

    def record(self) -> dict[str, Any]:
        """The concern as stored with the approval and its event (JSON)."""
        return self.model_dump(mode="json")


class ConcernSource(Protocol):
    """Something that may hold a call for a person (pinned definitions, the session's taint)."""

    def concerns(self, call: ToolCall) -> Sequence[Concern]:
        """The concerns about `call` (none: nothing to hold it for); cheap, on the loop."""
        ...

    def accepted(self, call: ToolCall, concerns: Sequence[Concern]) -> None:
        """A person approved `call`, unedited, having seen `concerns` (this source's among them)."""
        ...


def concerns_of(sources: Sequence[ConcernSource], call: ToolCall) -> tuple[Concern, ...]:
    """Every source's concerns about `call`, in the sources' order."""
    return tuple(concern for source in sources for concern in source.concerns(call))


def describe(concerns: Sequence[Concern]) -> str:
    """The concerns as one clause of a decision's reason."""
    return "; ".join(concern.reason for concern in concerns)
