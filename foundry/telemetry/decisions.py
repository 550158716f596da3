"""Supervision decisions as the attributes of the GenAI guardrail draft: the verdict a guardrail
returned kept apart from the action Foundry enforced, and who decided at which level.

The draft (open-telemetry/semantic-conventions-genai, "run guardrail span and security finding")
names its spans `run_guardrail {target}` and its attributes `gen_ai.security.*`; it is not
released, so the names follow its latest text and may change with it."""

from __future__ import annotations

from typing import Any

from foundry.metrics.terms import resolution_level
from foundry.session.events import (
    ApprovalRequested,
    ApprovalResolved,
    SupervisorDecided,
    ToolCallDecided,
)

OPERATION = "run_guardrail"
GUARDRAIL_NAME = "gen_ai.security.guardrail.name"
TARGET = "gen_ai.security.target.type"
VERDICT = "gen_ai.security.verdict.type"
VERDICT_REASON = "gen_ai.security.verdict.reason"
ACTION = "gen_ai.security.action.type"
POLICY_RULE = "gen_ai.security.policy.rule.id"

# the trust level of each decider (foundry.metrics.terms.resolution_level's names)
LEVEL_OF_DECIDER = {
    "policy": "L0",
    "grant": "L0",
    "supervisor": "L1",
    "human": "L2",
    "timeout": "L2",
}
WITHDRAWN = "withdrawn"  # the turn stopped while the call waited for a person
ESCALATED_BY = {"L0": "policy", "L1": "supervisor"}  # an approval's level: who sent it on
MESSAGE_VERDICTS = {
    "allow": "allow",
    "modify": "modify",
    "block": "deny",
    "human_review": "escalate",
}
MESSAGE_ACTIONS = {
    "allow": "allow",
    "modify": "modify",
    "block": "block",
    "human_review": "escalate",
}


def decider(by: str) -> tuple[str, str]:
    """(kind, level) of the one who decided: policy, grant, supervisor, human or timeout."""
    if by == WITHDRAWN:
        return WITHDRAWN, "L2"
    kind = resolution_level(by)  # as the dashboards count it: `api:NAME` is a person's
    return kind, LEVEL_OF_DECIDER[kind]


def decided_by(by: str) -> dict[str, Any]:
    """Who decided, its kind and its level, as Foundry's attributes."""
    kind, level = decider(by)
    return {
        "foundry.decision.by": by,
        "foundry.decision.kind": kind,
        "foundry.decision.level": level,
    }


def tool_call_decision(body: ToolCallDecided) -> dict[str, Any]:
    """A tool call's decision: allowed or denied, and enforced so (the call runs or not)."""
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": OPERATION,
        "openinference.span.kind": "GUARDRAIL",
        GUARDRAIL_NAME: body.by,
        TARGET: "tool_call",
        VERDICT: "allow" if body.allowed else "deny",
        ACTION: "allow" if body.allowed else "block",
        VERDICT_REASON: body.reason,
        **decided_by(body.by),
    }
    if decider(body.by)[0] == "policy" and ":" in body.by:
        attributes[POLICY_RULE] = body.by.split(":", 1)[1]
    if body.confidence is not None:
        attributes["foundry.decision.confidence"] = body.confidence
    return attributes


def escalation(body: ApprovalRequested) -> dict[str, Any]:
    """A call sent to a person: the supervision's verdict is to escalate, and so it waits."""
    return {
        "gen_ai.operation.name": OPERATION,
        "openinference.span.kind": "GUARDRAIL",
        GUARDRAIL_NAME: escalated_by(body),
        TARGET: "tool_call",
        VERDICT: "escalate",
        ACTION: "escalate",
        VERDICT_REASON: body.reason,
        "foundry.decision.level": body.level,
        "foundry.approval.id": body.approval_id,
        "foundry.approval.concerns": len(body.concerns),
    }


def escalated_by(body: ApprovalRequested) -> str:
    return ESCALATED_BY.get(body.level, body.level)


def resolution(body: ApprovalResolved) -> dict[str, Any]:
    """How the wait for a person ended: the answer, who gave it, and how long it took."""
    return {
        "foundry.approval.status": body.status,
        "foundry.approval.resolved_by": body.resolved_by,
        "foundry.approval.waited_s": body.waited_s,
        "foundry.approval.reasoning": body.reasoning,
    }


def message_decision(body: SupervisorDecided) -> dict[str, Any]:
    """A message supervisor's decision; one that reviewed in the background only observed."""
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": OPERATION,
        "openinference.span.kind": "GUARDRAIL",
        GUARDRAIL_NAME: body.supervisor,
        TARGET: "llm_input" if body.direction == "request" else "llm_output",
        VERDICT: MESSAGE_VERDICTS[body.action],
        ACTION: "none" if body.background else MESSAGE_ACTIONS[body.action],
        VERDICT_REASON: "; ".join(body.reasons),
        "foundry.decision.by": f"supervisor:{body.supervisor_id}",
        "foundry.decision.kind": "supervisor",
        "foundry.decision.level": "message",
        "foundry.supervisor.id": body.supervisor_id,
        "foundry.supervisor.message_index": body.message_index,
        "foundry.supervisor.background": body.background,
        "foundry.supervisor.fallback": body.fallback,
        "foundry.supervisor.changes": list(body.changes),
    }
    if body.confidence is not None:
        attributes["foundry.decision.confidence"] = body.confidence
    return attributes
