"""The JSON shapes of the approvals API, and how store records become them."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, field_validator, model_validator

from foundry.agent.models import PolicyCondition
from foundry.store import ApprovalRecord, GrantRecord, TraceRecord
from foundry.store.tables import utc_now
from foundry.supervision.redaction import injection_risk, redact_params

MAX_GRANT = timedelta(days=3650)
SURROGATES = re.compile("[\ud800-\udfff]")
GO_DURATION = r"^(?:[0-9]+(?:\.[0-9]+)?[dhms])+$"
GO_DURATION_PART = re.compile(r"([0-9]+(?:\.[0-9]+)?)([dhms])")
UNIT_SECONDS = {"d": 86400, "h": 3600, "m": 60, "s": 1}


class View(BaseModel):
    """A response body. Text that cannot be sent as JSON (lone surrogates, which a model's tool
    call or a command-line argument can carry into the store) is shown with U+FFFD in its place,
    so one odd record never fails a whole list."""

    model_config = ConfigDict(frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _sendable_text(cls, data: Any) -> Any:
        return sendable(data)


def sendable(value: Any) -> Any:
    """`value` with every lone surrogate in its strings (keys included) replaced by U+FFFD."""
    if isinstance(value, str):
        return SURROGATES.sub("\ufffd", value)
    if isinstance(value, dict):
        return {sendable(key): sendable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [sendable(item) for item in value]
    return value


class HealthView(View):
    status: Literal["ok"] = "ok"


class ErrorView(View):
    detail: str


class ConflictView(ErrorView):
    """The approval was resolved already: how, by whom and when."""

    status: str
    resolved_by: str
    resolved_at: datetime | None


class ApprovalView(View):
    """An approval as a supervisor sees it; `params` are redacted unless content is exposed.

    Every text field is a string, never null (agent-mesh clients such as agent7's supervisor
    read them as strings, and one null stops their whole poll): empty means "none"."""

    id: str
    agent_id: str
    agent_path: str = Field(
        default="",
        description="the agent file that asked (its resolved path, as trust keys agents): two "
        "agents may share a name, never a file; empty when unknown. Shown whether content is "
        "exposed or not, as a grant's `agent_path` is: it is where the agent lives, named by "
        "whoever placed it, not text a model wrote",
    )
    tool: str
    params: dict[str, Any]
    policy_rule: str = Field(description="the policy rule that asked for approval; empty if none")
    status: str = Field(description="pending, approved, denied or timed_out")
    created_at: datetime
    remaining: str = Field(
        description="time left to decide, Go style (4m30s); empty once resolved or without expiry"
    )
    injection_risk: bool
    resolved_by: str = Field(default="", description="who resolved it; empty while pending")
    resolved_at: datetime | None = None
    reasoning: str = ""
    confidence: float | None = None


class TraceSummary(View):
    trace_id: str
    tool: str
    policy: str = Field(description="the decision taken: allow or deny")
    timestamp: datetime


class GrantView(View):
    id: str
    agent: str = Field(description="glob of the agents it covers")
    agent_path: str = Field(
        default="",
        description="the one agent file it covers (its resolved path), while that agent's name "
        "matches `agent`; empty: every agent whose name matches `agent`",
    )
    tools: str = Field(description="glob of the tools it covers")
    expires_at: datetime
    remaining: str
    granted_by: str
    params: list[dict[str, Any]] | None = Field(
        default=None, description="conditions on the parameters, if the grant is scoped"
    )


class ApprovalDetail(ApprovalView):
    """An approval with its context: the agent's last calls and the grants that cover it."""

    recent_traces: list[TraceSummary]
    active_grants: list[GrantView]


class TraceView(View):
    """How one tool call was decided; `policy`, `supervisor_*` and `approved_by` are the
    agent-mesh spellings. Text fields are strings, never null: empty means "none"."""

    trace_id: str
    agent_id: str
    tool: str
    decision: str = Field(description="allow or deny")
    policy: str = Field(description="the decision, as agent-mesh names it: allow or deny")
    resolved_level: str = Field(description="policy, grant, supervisor, human or timeout")
    resolved_by: str
    policy_rule: str
    approval_id: str
    reasoning: str
    supervisor_reasoning: str
    confidence: float | None
    supervisor_confidence: float | None
    approved_by: str = Field(description="who resolved the approval; empty without one")
    decided_ms: float | None
    timestamp: datetime


CLAIMED_NAME = (
    "who you are, as a label: recorded as api:<name> (printable characters, at most 200); a "
    "decision made through the API always counts as a human's"
)


class Resolution(BaseModel):
    """The optional body of approve and deny."""

    model_config = ConfigDict(extra="forbid")

    resolved_by: str | None = Field(
        default=None, min_length=1, max_length=200, description=CLAIMED_NAME
    )
    reasoning: str | None = Field(default=None, max_length=10_000)
    confidence: float | None = Field(default=None, ge=0.0, le=1.0, allow_inf_nan=False)


class NewGrant(BaseModel):
    """A grant to create: which tools, for which agents, until when (one of three forms).
    `approval_id` or `agent_path` binds it to one agent file, as the inbox's Approve + grant
    does; without either it covers every agent whose name matches `agent`."""

    model_config = ConfigDict(extra="forbid")

    tools: str = Field(min_length=1, max_length=200)
    agent: str = Field(
        default="*",
        min_length=1,
        max_length=200,
        description="glob of the agents' names; a bound grant's must match its agent's name, "
        "and is that name when left out",
    )
    approval_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description="bind the grant to the agent that asked for this approval: its name and "
        "its file, as the approval recorded them",
    )
    agent_path: str | None = Field(
        default=None,
        min_length=1,
        max_length=4096,
        description="bind the grant to the agent at this absolute path on the machine that "
        "runs the API (its folder or YAML file; links and `..` resolved): an agent must be "
        "there now. With `approval_id`, it must be that approval's agent file",
    )
    duration_seconds: float | None = Field(
        default=None, gt=0, le=MAX_GRANT.total_seconds(), allow_inf_nan=False
    )
    duration: str | None = Field(
        default=None,
        max_length=64,
        json_schema_extra={"pattern": GO_DURATION},
        description="agent-mesh's form, a Go-style duration: 45s, 30m, 1h30m, 2h, 7d",
    )
    expires_at: AwareDatetime | None = None
    granted_by: str | None = Field(
        default=None, min_length=1, max_length=200, description=CLAIMED_NAME
    )
    params: list[PolicyCondition] | None = Field(
        default=None, description="conditions on the call's parameters, all of which must hold"
    )

    @field_validator("duration")
    @classmethod
    def _go_duration(cls, duration: str | None) -> str | None:
        if duration is not None:
            go_duration_seconds(duration)
        return duration

    @model_validator(mode="after")
    def _one_expiry(self) -> NewGrant:
        given = [self.duration_seconds, self.duration, self.expires_at]
        if sum(value is not None for value in given) != 1:
            raise ValueError("give exactly one of duration_seconds, duration and expires_at")
        if self.expires_at is not None and not utc_now() < self.expires_at <= utc_now() + MAX_GRANT:
            raise ValueError("expires_at must be in the future and at most 10 years away")
        return self

    def agent_glob(self) -> str | None:
        """The glob of names the client gave, None when it gave none."""
        return self.agent if "agent" in self.model_fields_set else None

    def expiry(self, now: datetime) -> datetime:
        if self.expires_at is not None:
            return self.expires_at
        if self.duration is not None:
            return now + timedelta(seconds=go_duration_seconds(self.duration))
        return now + timedelta(seconds=self.duration_seconds or 0)


def go_duration_seconds(text: str) -> float:
    """The seconds of a Go-style duration (45s, 30m, 1h30m, 1.5h, 7d), more than zero and at
    most ten years; ValueError otherwise."""
    parts = GO_DURATION_PART.findall(text)
    if not parts or "".join(number + unit for number, unit in parts) != text:
        raise ValueError(f"duration {text!r} is not like 45s, 30m, 1h30m, 2h or 7d")
    seconds = sum(float(number) * UNIT_SECONDS[unit] for number, unit in parts)
    if not 0 < seconds <= MAX_GRANT.total_seconds():
        raise ValueError(f"duration {text!r} must be more than 0s and at most 3650d (10 years)")
    return seconds


def go_duration(left: timedelta) -> str:
    """A duration as Go prints it, to the nearest second: 45s, 4m30s, 1h0m0s."""
    total = max(0, round(left.total_seconds()))
    hours, rest = divmod(total, 3600)
    minutes, seconds = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes}m{seconds}s"
    if minutes:
        return f"{minutes}m{seconds}s"
    return f"{seconds}s"


def _approval_fields(record: ApprovalRecord, expose_content: bool, now: datetime) -> dict[str, Any]:
    return {
        "id": record.id,
        "agent_id": record.agent_id,
        "agent_path": record.agent_path or "",
        "tool": record.tool,
        "params": redact_params(record.params, expose_content),
        "policy_rule": record.policy_rule or "",
        "status": record.status,
        "created_at": record.created_at,
        "remaining": _remaining(record, now),
        "injection_risk": record.injection_risk or injection_risk(record.params),
        "resolved_by": record.resolved_by or "",
        "resolved_at": record.resolved_at,
        "reasoning": record.reasoning or "",
        "confidence": record.confidence,
    }


def _remaining(record: ApprovalRecord, now: datetime) -> str:
    if record.status != "pending" or record.expires_at is None:
        return ""
    return go_duration(record.expires_at - now)


def approval_view(record: ApprovalRecord, expose_content: bool, now: datetime) -> ApprovalView:
    return ApprovalView(**_approval_fields(record, expose_content, now))


def approval_detail(
    record: ApprovalRecord,
    expose_content: bool,
    now: datetime,
    traces: Sequence[TraceRecord],
    grants: Sequence[GrantRecord],
) -> ApprovalDetail:
    """The approval with the agent's traces and those of `grants` that cover its agent."""
    return ApprovalDetail(
        **_approval_fields(record, expose_content, now),
        recent_traces=[trace_summary(trace) for trace in traces],
        active_grants=[
            grant_view(grant, now)
            for grant in grants
            if grant.covers_agent(record.agent_id, record.agent_path)
        ],
    )


def trace_summary(trace: TraceRecord) -> TraceSummary:
    return TraceSummary(
        trace_id=trace.id, tool=trace.tool, policy=trace.decision, timestamp=trace.created_at
    )


def grant_view(grant: GrantRecord, now: datetime) -> GrantView:
    return GrantView(
        id=grant.id,
        agent=grant.agent_glob,
        agent_path=grant.agent_path or "",
        tools=grant.tool_glob,
        expires_at=grant.expires_at,
        remaining=go_duration(grant.expires_at - now),
        granted_by=grant.granted_by,
        params=grant.param_scope,
    )


def trace_view(trace: TraceRecord) -> TraceView:
    return TraceView(
        trace_id=trace.id,
        agent_id=trace.agent_id,
        tool=trace.tool,
        decision=trace.decision,
        policy=trace.decision,
        resolved_level=trace.resolved_level,
        resolved_by=trace.resolved_by,
        policy_rule=trace.policy_rule or "",
        approval_id=trace.approval_id or "",
        reasoning=trace.reasoning or "",
        supervisor_reasoning=trace.reasoning or "",
        confidence=trace.confidence,
        supervisor_confidence=trace.confidence,
        approved_by=trace.resolved_by if trace.approval_id else "",
        decided_ms=trace.decided_ms,
        timestamp=trace.created_at,
    )


def conflict_view(record: ApprovalRecord) -> ConflictView:
    return ConflictView(
        detail=f"approval {record.id} was already {record.status} by {record.resolved_by}",
        status=record.status,
        resolved_by=record.resolved_by or "",
        resolved_at=record.resolved_at,
    )
