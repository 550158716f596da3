"""An approved call whose parameters a person edited, decided again before it runs.

A person approves the call they were shown; an edit makes another call, which the rules have not
seen. So the edited call is decided again by the same policy (the L0 rules, its paths judged
where the tool's server runs) and the injection check, wherever the edit was made (the inbox, the
CLI, another Foundry sharing the store): the resolution comes back to the waiting gate, which
asks here. A deny rule stands: the call does not run. A rule that would ask a person (or the
supervisor) is satisfied, since a person has just approved this very call. Text that reads like
a prompt injection, which the call as asked did not carry, is refused: no one was shown it
flagged. The edited call does not count again towards rate limits or loop detection: it is the
same call, made once.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from foundry.supervision.injection import find_injection
from foundry.supervision.policy import PolicyEngine

EDITED_INJECTION_RULE = "edited-parameters-read-like-an-injection"


class EditRefusal(BaseModel, frozen=True):
    """Why an approved edit does not run: the rule that denies it (or the injection check) and
    the reason, in words the agent, the trace and the audit read."""

    rule: str
    reason: str

    @property
    def by(self) -> str:
        return f"policy:{self.rule}"


class EditJudge:
    """Decides the edited calls of one agent by its policy engine (the gate's own)."""

    def __init__(self, engine: PolicyEngine, agent_id: str) -> None:
        self._engine = engine
        self._agent = agent_id

    def refusal(
        self, tool: str, asked: dict[str, Any], edited: dict[str, Any]
    ) -> EditRefusal | None:
        """Why the call `asked` with these params, approved as `edited`, must not run; None
        when it may (blocking: it resolves paths on the filesystem)."""
        decision = self._engine.fresh().decide(self._agent, tool, edited)
        if decision.action == "deny":
            by_rule = f" by rule {decision.rule}" if decision.rule else ""
            reason = f"denied{by_rule} after editing: {decision.reason}"
            return EditRefusal(rule=decision.rule or "default-deny", reason=reason)
        added = find_injection(edited)
        if added is None or find_injection(asked) is not None:
            return None
        reason = (
            "denied after editing: the edited parameters read like a prompt injection "
            f"({added.describe()}), which the call as asked did not"
        )
        return EditRefusal(rule=EDITED_INJECTION_RULE, reason=reason)
