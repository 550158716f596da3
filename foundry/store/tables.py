"""The tables of Foundry's store, as sqlmodel classes."""

from __future__ import annotations

import fnmatch
import uuid
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.types import TypeDecorator
from sqlmodel import Field, SQLModel


def utc_now() -> datetime:
    return datetime.now(UTC)


def new_id() -> str:
    return uuid.uuid4().hex


class UTCDateTime(TypeDecorator[datetime]):
    """Times stored in UTC and always read back with their time zone (SQLite drops it)."""

    impl = sa.DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: sa.Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("times given to the store must carry a time zone")
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: sa.Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _time(**kwargs: Any) -> Any:
    return Field(sa_type=UTCDateTime, **kwargs)


def _json(**kwargs: Any) -> Any:
    return Field(sa_type=sa.JSON, **kwargs)


class SessionRecord(SQLModel, table=True):
    """A chat session with an agent."""

    __tablename__ = "sessions"

    id: str = Field(default_factory=new_id, primary_key=True, max_length=64)
    agent_path: str
    agent_name: str = ""
    title: str = ""
    status: str = Field(default="active", max_length=32)
    settings_overrides: dict[str, Any] = _json(default_factory=dict)
    created_at: datetime = _time(default_factory=utc_now)
    updated_at: datetime = _time(default_factory=utc_now)


class MessageRecord(SQLModel, table=True):
    """One message of a session, in order."""

    __tablename__ = "messages"
    __table_args__ = (sa.UniqueConstraint("session_id", "seq", name="uq_messages_session_seq"),)

    id: int | None = Field(default=None, primary_key=True)
    session_id: str = Field(foreign_key="sessions.id", index=True, max_length=64)
    seq: int
    role: str = Field(max_length=32)
    content: str = ""
    data: dict[str, Any] = _json(default_factory=dict)
    created_at: datetime = _time(default_factory=utc_now)


class EventRecord(SQLModel, table=True):
    """One entry of the append-only event log; `seq` counts from 1 within each session."""

    __tablename__ = "events"
    __table_args__ = (sa.UniqueConstraint("session_id", "seq", name="uq_events_session_seq"),)

    id: int | None = Field(default=None, primary_key=True)
    session_id: str = Field(index=True, max_length=64)
    seq: int
    kind: str = Field(index=True, max_length=64)
    time: datetime = _time(default_factory=utc_now)
    payload: dict[str, Any] = _json(default_factory=dict)


class ApprovalRecord(SQLModel, table=True):
    """A tool call waiting for (or past) a decision that the policy did not take by itself."""

    __tablename__ = "approvals"

    id: str = Field(default_factory=lambda: uuid.uuid4().hex[:16], primary_key=True, max_length=64)
    session_id: str | None = Field(default=None, index=True, max_length=64)
    agent_id: str = Field(index=True)
    agent_path: str | None = None  # the agent's identity: its file's resolved path (trust_key)
    tool: str = Field(index=True)
    params: dict[str, Any] = _json(default_factory=dict)
    policy_rule: str | None = None
    level: str = Field(default="L2", max_length=16)
    status: str = Field(default="pending", index=True, max_length=16)
    injection_risk: bool = False
    supervisor_verdict: dict[str, Any] | None = _json(default=None)
    # why a person decides whatever the rules say (supervision/concerns.py), as Concern.record
    concerns: list[dict[str, Any]] | None = _json(default=None)
    created_at: datetime = _time(default_factory=utc_now)
    expires_at: datetime | None = _time(default=None)
    resolved_at: datetime | None = _time(default=None)
    resolved_by: str | None = None
    reasoning: str | None = None
    confidence: float | None = None
    # approved with parameters other than those the call asked for
    edited: bool = Field(default=False, sa_column_kwargs={"server_default": sa.false()})
    # the L1 supervisor's verdict given unseen while a person decided (shadow mode): decision,
    # confidence, reasoning, supervisor, seconds
    shadow_verdict: dict[str, Any] | None = _json(default=None)


class GrantRecord(SQLModel, table=True):
    """Standing permission for matching agents to call matching tools until it expires.

    `agent_path` binds it to one agent file (its resolved path, as trust keys agents): it then
    covers only that agent, and only while its name matches `agent_glob`. Without one (a grant
    made through the API by name alone, or before grants were bound) it covers every agent the
    glob names."""

    __tablename__ = "grants"

    id: str = Field(
        default_factory=lambda: "g_" + uuid.uuid4().hex[:12], primary_key=True, max_length=64
    )
    agent_glob: str = "*"
    agent_path: str | None = None
    tool_glob: str
    param_scope: list[dict[str, Any]] | None = _json(default=None)  # conditions on parameters
    path_scope: str | None = None  # a folder (relative: to the workspace) every path must be in
    granted_by: str
    created_at: datetime = _time(default_factory=utc_now)
    expires_at: datetime = _time()
    revoked_at: datetime | None = _time(default=None)

    def covers_agent(self, agent_id: str, agent_path: str | None) -> bool:
        """Whether the agent named `agent_id`, whose file is `agent_path` (None: unknown), is
        one this grant was made for (its tools and scopes aside)."""
        if not fnmatch.fnmatchcase(agent_id, self.agent_glob):
            return False
        return self.agent_path is None or self.agent_path == agent_path


class TraceRecord(SQLModel, table=True):
    """How one tool call was decided: by which level, by whom, why and how confidently."""

    __tablename__ = "traces"

    id: str = Field(default_factory=new_id, primary_key=True, max_length=64)
    session_id: str | None = Field(default=None, index=True, max_length=64)
    agent_id: str = Field(index=True)
    tool: str
    params: dict[str, Any] = _json(default_factory=dict)
    decision: str = Field(max_length=16)
    resolved_level: str = Field(max_length=16)
    resolved_by: str
    policy_rule: str | None = None
    approval_id: str | None = Field(default=None, index=True, max_length=64)
    reasoning: str | None = None
    confidence: float | None = None
    decided_ms: float | None = None
    created_at: datetime = _time(default_factory=utc_now, index=True)


class TaskRecord(SQLModel, table=True):
    """One run of a task file; its events are in the event log under the task's id."""

    __tablename__ = "tasks"

    id: str = Field(default_factory=new_id, primary_key=True, max_length=64)
    name: str
    task_file: str = Field(index=True)
    workspace: str
    status: str = Field(default="running", index=True, max_length=16)
    output: str = ""
    created_at: datetime = _time(default_factory=utc_now)
    updated_at: datetime = _time(default_factory=utc_now)


class MetricBinRecord(SQLModel, table=True):
    """The figures of one metric series in one time bin, for one agent ("" for every agent) and
    one label (a level, a model, a status): kept up to date as events are appended."""

    __tablename__ = "metric_bins"

    resolution: int = Field(primary_key=True)  # seconds a bin spans: 60, 3600 or 86400
    agent: str = Field(primary_key=True)
    series: str = Field(primary_key=True, max_length=32)
    bucket: int = Field(  # the bin's start, seconds since the epoch (UTC): past 2038 too
        primary_key=True, sa_type=sa.BigInteger
    )
    label: str = Field(primary_key=True)
    count: int = 0
    total: float = 0.0
    low: float = 0.0
    high: float = 0.0


class MetricSessionRecord(SQLModel, table=True):
    """A chat seen by the metrics: its agent and the task that consulted it, if any."""

    __tablename__ = "metric_sessions"

    session_id: str = Field(primary_key=True, max_length=64)
    agent: str = ""
    task_id: str = Field(default="", max_length=64)


class MetricTaskRecord(SQLModel, table=True):
    """A task's figures as its events stand (started_at is None until its task_started)."""

    __tablename__ = "metric_tasks"

    task_id: str = Field(primary_key=True, max_length=64)
    name: str = ""
    started_at: datetime | None = _time(default=None, index=True)
    status: str = Field(default="running", max_length=16)
    iterations: int = 0
    phase_seconds: dict[str, float] = _json(default_factory=dict)
    agents: list[str] = _json(default_factory=list)


class MetricsStateRecord(SQLModel, table=True):
    """The one row that says how far the metric aggregates are: `version` grows with every
    transaction that changes them (a cheap question for pollers); `complete` is false until the
    aggregates hold every event (after an upgrade, before `foundry metrics rebuild`)."""

    __tablename__ = "metrics_state"

    id: int = Field(default=1, primary_key=True)
    version: int = 0
    events: int = 0  # metric events folded in
    tasks: int = 0  # tasks started (the dashboards read the list of tasks when it changes)
    complete: bool = True


class StoreChangeRecord(SQLModel, table=True):
    """A counter per kind of record other processes follow (`approvals`), bumped in every
    transaction that changes them: see foundry/store/changes.py."""

    __tablename__ = "store_changes"

    topic: str = Field(primary_key=True, max_length=32)
    version: int = Field(default=0, sa_type=sa.BigInteger)
