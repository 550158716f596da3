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
GO_UNITS = "ns|us|\u00b5s|\u03bcs|ms|s|m|h"
GO_DURATION = rf"^(?:[0-9]*\.?[0-9]*(?:{GO_UNITS}))+$"
GO_DURATION_PART = re.compile(rf"([0-9]*\.?[0-9]*)({GO_UNITS})")
UNIT_SECONDS = {
    "ns": 1e-9,
    "us": 1e-6,
    "\u00b5s": 1e-6,
    "\u03bcs": 1e-6,
    "ms": 1e-3,
    "s": 1,
    "m": 60,
    "h": 3600,
}


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
    """An error as agent-mesh words it (`approval not found`)."""

    error: str


class ApprovalView(View):
    """An approval as a supervisor sees it; `params` are redacted unless content is exposed.

    As agent-mesh sends it: a field that is empty (no one resolved it yet, no reasoning, no
    injection risk) is left out, never null (agent-mesh clients such as agent7's supervisor read
    text fields as strings, and one null stops their whole poll)."""

    id: str
    agent_id: str
    agent_path: str | None = Field(
        default=None,
        description="Foundry's own: the agent file that asked (its resolved path, as trust keys "
        "agents): two agents may share a name, never a file; left out when unknown. Shown "
        "whether content is exposed or not, as a grant's `agent_path` is: it is where the agent "
        "lives, named by whoever placed it, not text a model wrote",
    )
    tool: str
    params: dict[str, Any]
    policy_rule: str = Field(description="the policy rule that asked for approval; empty if none")
    status: str = Field(description="pending, approved, denied or timeout (agent-mesh's names)")
    created_at: datetime
    remaining: str | None = Field(
        default=None,
        description="time left to decide, Go style (4m30s); left out once resolved or without "
        "expiry",
    )
    resolved_by: str | None = Field(default=None, description="who resolved it; left out before")
    resolved_at: datetime | None = None
    reasoning: str | None = None
    confidence: float | None = None
    injection_risk: bool | None = Field(default=None, description="true, or left out")


class TraceView(View):
    """How one tool call was decided, in agent-mesh's trace fields (`policy` is allow, deny or
    human_approval; `approval_*` and `supervisor_*` when an approval was resolved), and Foundry's
    own: `decision`, `resolved_level` (policy, grant, supervisor, human or timeout), `resolved_by`
    and `decided_ms`. Empty fields are left out, as agent-mesh leaves them out."""

    trace_id: str
    session_id: str | None = None
    agent_id: str
    tool: str
    params: dict[str, Any]
    policy: str
    policy_rule: str
    timestamp: datetime
    approval_id: str | None = None
    approval_status: str | None = Field(default=None, description="approved, denied or timeout")
    approved_by: str | None = None
    approval_ms: int | None = None
    supervisor_reasoning: str | None = None
    supervisor_confidence: float | None = None
    decision: str = Field(description="Foundry's own: allow or deny")
    resolved_level: str = Field(description="Foundry's own: the level that decided")
    resolved_by: str = Field(description="Foundry's own: who decided")
    reasoning: str | None = None
    confidence: float | None = None
    decided_ms: float | None = None


class GrantView(View):
    id: str
    agent: str = Field(description="glob of the agents it covers")
    agent_path: str | None = Field(
        default=None,
        description="Foundry's own: the one agent file it covers (its resolved path), while that "
        "agent's name matches `agent`; left out: every agent whose name matches `agent`",
    )
    tools: str = Field(description="glob of the tools it covers")
    expires_at: datetime
    remaining: str
    granted_by: str
    params: list[dict[str, Any]] | None = Field(
        default=None, description="Foundry's own: conditions on the parameters, if it is scoped"
    )


class ApprovalDetail(ApprovalView):
    """An approval with its context: the agent's last calls and the grants that cover it (each
    left out when there are none, as agent-mesh does)."""

    recent_traces: list[TraceView] | None = None
    active_grants: list[GrantView] | None = None


class ActedView(View):
    """What approve, deny and revoking a grant answer, as agent-mesh does."""

    status: str
    id: str


class VersionView(View):
    version: str
    commit: str
    date: str


CLAIMED_NAME = (
    "who you are, as a label: recorded as api:<name> (printable characters, at most 200); a "
    "decision made through the API always counts as a human's"
)


EDITS = frozenset({"params", "arguments"})  # fields that would change what runs


class Resolution(BaseModel):
    """The optional body of approve and deny, read as agent-mesh reads it: fields it does not
    know are ignored (edited `params` are refused), and an empty or numeric `resolved_by` is as
    if left out (the resolver is then named after the caller). Types are strict: `"0.5"`,
    `true` and `false` are not a confidence, a number is not a reasoning."""

    model_config = ConfigDict(extra="ignore", strict=True)

    resolved_by: str | None = Field(default=None, max_length=200, description=CLAIMED_NAME)
    reasoning: str | None = Field(default=None, max_length=10_000)
    confidence: float | None = Field(default=None, ge=0.0, le=1.0, allow_inf_nan=False)

    @model_validator(mode="before")
    @classmethod
    def _no_edits(cls, data: Any) -> Any:
        """Refuse edited parameters rather than ignore them: ignored, the call would run as it
        was asked, not as the client meant to approve it."""
        if isinstance(data, dict) and EDITS & data.keys():
            raise ValueError(
                "the API approves a call as it was asked: edit parameters in Foundry's inbox"
            )
        return data

    @field_validator("resolved_by", mode="before")
    @classmethod
    def _unnamed(cls, value: Any) -> Any:
        number = isinstance(value, int | float) and not isinstance(value, bool)
        return None if number or value == "" else value


class NewGrant(BaseModel):
    """A grant to create: which tools, for which agents, until when (one of three forms).
    `approval_id` or `agent_path` binds it to one agent file, as the inbox's Approve + grant
    does; without either it covers every agent whose name matches `agent`, which must then be
    given (as agent-mesh requires it). Fields it does not know are ignored, as agent-mesh does;
    types are strict ("3600" is not a number of seconds)."""

    model_config = ConfigDict(extra="ignore")

    tools: str = Field(min_length=1, max_length=200, strict=True)
    agent: str = Field(
        default="*",
        strict=True,
        min_length=1,
        max_length=200,
        description="glob of the agents' names; a bound grant's must match its agent's name, "
        "and is that name when left out",
    )
    approval_id: str | None = Field(
        default=None,
        strict=True,
        min_length=1,
        max_length=200,
        description="bind the grant to the agent that asked for this approval: its name and "
        "its file, as the approval recorded them",
    )
    agent_path: str | None = Field(
        default=None,
        strict=True,
        min_length=1,
        max_length=4096,
        description="bind the grant to the agent at this absolute path on the machine that "
        "runs the API (its folder or YAML file; links and `..` resolved): an agent must be "
        "there now. With `approval_id`, it must be that approval's agent file",
    )
    duration_seconds: float | None = Field(
        default=None, gt=0, le=MAX_GRANT.total_seconds(), allow_inf_nan=False, strict=True
    )
    duration: str | None = Field(
        default=None,
        strict=True,
        max_length=64,
        json_schema_extra={"pattern": GO_DURATION},
        description="agent-mesh's form, a Go duration (time.ParseDuration): 500ms, 45s, 30m, "
        "1h30m, 168h",
    )
    expires_at: AwareDatetime | None = None
    granted_by: str | None = Field(
        default=None, strict=True, min_length=1, max_length=200, description=CLAIMED_NAME
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
        unbound = self.approval_id is None and self.agent_path is None
        if unbound and "agent" not in self.model_fields_set:
            raise ValueError("give `agent`, a glob of the agents' names (* for every agent)")
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
    """The seconds of a duration as Go's time.ParseDuration reads it (500ms, 45s, 1.5h, 1h30m;
    units ns, us, ms, s, m, h: no days, as in Go), more than zero and at most ten years;
    ValueError otherwise."""
    parts = GO_DURATION_PART.findall(text)
    if not parts or "".join(number + unit for number, unit in parts) != text:
        raise ValueError(
            f"duration {text!r} is not a Go duration like 500ms, 45s, 30m, 1h30m or 168h "
            "(units ns, us, ms, s, m, h; no d)"
        )
    if any(number in ("", ".") for number, _ in parts):
        raise ValueError(f"duration {text!r} has a unit without a number")
    seconds = sum(float(number) * UNIT_SECONDS[unit] for number, unit in parts)
    if not 0 < seconds <= MAX_GRANT.total_seconds():
        raise ValueError(f"duration {text!r} must be more than 0s and at most 87600h (10 years)")
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


WIRE_STATUS = {"timed_out": "timeout"}  # agent-mesh's names for Foundry's statuses
STORE_STATUS = {wire: stored for stored, wire in WIRE_STATUS.items()}


def wire_status(status: str) -> str:
    """An approval's status as agent-mesh names it (timeout for timed_out)."""
    return WIRE_STATUS.get(status, status)


def _approval_fields(record: ApprovalRecord, expose_content: bool, now: datetime) -> dict[str, Any]:
    return {
        "id": record.id,
        "agent_id": record.agent_id,
        "agent_path": record.agent_path or None,
        "tool": record.tool,
        "params": redact_params(record.params, expose_content),
        "policy_rule": record.policy_rule or "",
        "status": wire_status(record.status),
        "created_at": record.created_at,
        "remaining": _remaining(record, now),
        "injection_risk": record.injection_risk or injection_risk(record.params) or None,
        "resolved_by": record.resolved_by or None,
        "resolved_at": record.resolved_at,
        "reasoning": record.reasoning or None,
        "confidence": record.confidence or None,
    }


def _remaining(record: ApprovalRecord, now: datetime) -> str | None:
    if record.status != "pending" or record.expires_at is None:
        return None
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
    covering = [
        grant_view(grant, now)
        for grant in grants
        if grant.covers_agent(record.agent_id, record.agent_path)
    ]
    return ApprovalDetail(
        **_approval_fields(record, expose_content, now),
        recent_traces=[trace_view(trace, expose_content) for trace in traces] or None,
        active_grants=covering or None,
    )


def grant_view(grant: GrantRecord, now: datetime) -> GrantView:
    return GrantView(
        id=grant.id,
        agent=grant.agent_glob,
        agent_path=grant.agent_path or None,
        tools=grant.tool_glob,
        expires_at=grant.expires_at,
        remaining=go_duration(grant.expires_at - now),
        granted_by=grant.granted_by,
        params=grant.param_scope,
    )


def trace_view(trace: TraceRecord, expose_content: bool) -> TraceView:
    """A trace in agent-mesh's fields and Foundry's; a decision on an approval is agent-mesh's
    `human_approval`, whoever resolved it, with the approval's outcome and resolver."""
    approval = trace.approval_id is not None
    return TraceView(
        trace_id=trace.id,
        session_id=trace.session_id,
        agent_id=trace.agent_id,
        tool=trace.tool,
        params=redact_params(trace.params, expose_content),
        policy="human_approval" if approval else trace.decision,
        policy_rule=trace.policy_rule or "",
        timestamp=trace.created_at,
        approval_id=trace.approval_id,
        approval_status=_approval_status(trace) if approval else None,
        approved_by=trace.resolved_by if approval else None,
        approval_ms=round(trace.decided_ms) if approval and trace.decided_ms is not None else None,
        supervisor_reasoning=trace.reasoning or None,
        supervisor_confidence=trace.confidence or None,
        decision=trace.decision,
        resolved_level=trace.resolved_level,
        resolved_by=trace.resolved_by,
        reasoning=trace.reasoning or None,
        confidence=trace.confidence,
        decided_ms=trace.decided_ms,
    )


def _approval_status(trace: TraceRecord) -> str | None:
    if trace.decision not in ("allow", "deny"):  # sent on to a person: not an outcome
        return None
    if trace.resolved_level == "timeout":
        return "timeout"
    return "approved" if trace.decision == "allow" else "denied"
