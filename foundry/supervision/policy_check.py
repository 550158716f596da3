"""The policy dry run: how the hierarchy would decide given or recorded tool calls, and changes.

Each call is routed as the gate would route it (L0 rules, injection signals, the grants active
now, the L1 supervisor) without creating approvals, tracing or running anything. Calls are
decided in order, as one session would see them, so rate limits and loop detection count too.
A call is judged with its tool's definition as the live gate has it (its input schema and its
server's annotations), given on the call's line or in a tools/list listing (`tools_listed`).
A recorded call is decided at the moment it was recorded (`at`) and counted with the other calls
of its own session, as that session's gate counted them: a replay sees the loops and rate
limits that happened then, not calls made back to back.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from foundry.agent.models import PolicyConfig
from foundry.llm.base import ToolCall
from foundry.session.events import (
    ApprovalRequested,
    EventBody,
    ToolCallDecided,
    ToolServerChanged,
    event_body,
)
from foundry.store import Store
from foundry.supervision.hierarchy import RouteLevel, RouteOutcome, SupervisedGate
from foundry.supervision.l1 import L1Supervisor
from foundry.supervision.paths import ServerPlaces
from foundry.supervision.policy import LOOP_REPEATS, PolicyEngine, ToolDefinition

HUMAN_PREFIXES = ("human:", "api:", "timeout")
RECENT_SESSIONS = 500  # the sessions looked through for an agent's recorded calls
Schemas = Mapping[str, Mapping[str, Any]]  # each tool's input schema, by its name
Definitions = Mapping[str, ToolDefinition]  # what a trusted server listed of each tool, by name


class PolicyCheckError(Exception):
    """The calls to check could not be read; the message names the file and line."""


class CallToCheck(BaseModel):
    """One tool call to decide; `was` is how it was decided when it was recorded (a what-if),
    `was_by` and `was_reason` who decided it then and why; `at` when it was decided (None: now)
    and `session` the session whose gate counted it (None: one session for all such calls)."""

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)

    id: str
    agent: str = "agent"
    tool: str = Field(min_length=1)
    params: dict[str, Any] = Field(default_factory=dict)
    was: RouteOutcome | None = None
    was_by: str | None = None
    was_reason: str = ""
    at: datetime | None = None
    session: str | None = None
    # the tool's definition as its server listed it, when the call's line gives it
    annotations: dict[str, Any] | None = None
    input_schema: dict[str, Any] | None = Field(default=None, alias="inputSchema")

    def definition(self) -> ToolDefinition | None:
        """The definition the call's line gives (a server's listing: annotations count)."""
        if self.annotations is None and self.input_schema is None:
            return None
        listed = {"inputSchema": self.input_schema, "annotations": self.annotations or {}}
        return ToolDefinition.listed(listed)


class CheckedCall(BaseModel, frozen=True):
    """How the policy decides one call now, and whether that differs from the recorded decision."""

    id: str
    tool: str
    level: RouteLevel
    outcome: RouteOutcome
    rule: str | None
    reason: str
    was: RouteOutcome | None = None
    was_by: str | None = None
    was_reason: str = ""
    # its repeats were told by all its arguments, not only those its tool's schema declares
    # (as the live gate does): the schema is not known here
    loop_keyed_on_all: bool = False

    @property
    def changed(self) -> bool:
        return self.was is not None and self.was != self.outcome


class PolicyChecker:
    """Decides calls under one policy: one gate per agent name, sharing the store's grants.
    `agent_path` is the agent's file (`trust_key`), whose grants then apply as they do live;
    without it only grants by name do."""

    def __init__(
        self,
        store: Store,
        config: PolicyConfig,
        workspace: Path,
        server_folders: ServerPlaces | None = None,
        supervisor: L1Supervisor | None = None,
        compiled: PolicyEngine | None = None,
        tool_schemas: Schemas | None = None,
        agent_path: str | None = None,
        tool_definitions: Definitions | None = None,
    ) -> None:
        self._store = store
        self._definitions = dict(tool_definitions or {})
        self._agent_path = agent_path
        self._config = config
        self._compiled = compiled
        self._workspace = workspace
        self._server_folders = server_folders
        self._supervisor = supervisor
        self._schemas = tool_schemas or {}
        self._gates: dict[tuple[str, str | None], SupervisedGate] = {}
        self._now = time.time()  # the moment the call being decided is decided at

    async def check(self, call: CallToCheck) -> CheckedCall:
        tool_call = ToolCall(id=call.id, name=call.tool, arguments=call.params)
        given = call.definition()
        if given is not None:  # the line's own definition, for this and later calls of the tool
            self._definitions[call.tool] = given
        self._now = call.at.timestamp() if call.at is not None else time.time()
        route = await self._gate(call.agent, call.session).route(tool_call)
        return CheckedCall(
            id=call.id,
            tool=call.tool,
            level=route.level,
            outcome=route.outcome,
            rule=route.policy.rule,
            reason=route.reason,
            was=call.was,
            was_by=call.was_by,
            was_reason=call.was_reason,
            loop_keyed_on_all=self._config.loop_detection and self._schema(call.tool) is None,
        )

    def _clock(self) -> float:
        """The rate limits' and loop detection's clock: the time of the call being decided."""
        return self._now

    def _definition(self, name: str) -> ToolDefinition | None:
        """The tool's definition as given, else its recorded input schema alone."""
        given = self._definitions.get(name)
        if given is not None and given.input_schema is not None:
            return given
        schema = self._schemas.get(name)
        if given is None:
            return None if schema is None else ToolDefinition(input_schema=dict(schema))
        return given.model_copy(update={"input_schema": None if schema is None else dict(schema)})

    def _schema(self, name: str) -> Mapping[str, Any] | None:
        definition = self._definition(name)
        return None if definition is None else definition.input_schema

    def _gate(self, agent: str, session: str | None) -> SupervisedGate:
        """The gate of the agent in one session: each session's calls are counted apart."""
        key = (agent, session)
        if key not in self._gates:
            self._gates[key] = SupervisedGate(
                self._store,
                self._config,
                agent_id=agent,
                agent_path=self._agent_path,
                session_id="policy-check",
                project_root=self._workspace,
                notify=_ignore,
                supervisor=self._supervisor,
                server_folders=self._server_folders,
                policy_engine=self._engine(),
                tool_definitions=self._definition,
            )
        return self._gates[key]

    def _engine(self) -> PolicyEngine:
        if self._compiled is not None:
            return self._compiled.fresh(self._clock)
        return PolicyEngine(
            self._config, self._workspace, self._clock, server_folders=self._server_folders
        )


async def _ignore(body: EventBody) -> None:
    """A dry run tells nobody: nothing it decides is an event."""


# -- where the calls come from --------------------------------------------------------------------


def calls_from_file(path: Path, default_agent: str) -> list[CallToCheck]:
    """`--calls`: JSON lines of {"id", "agent", "tool", "params"}, and optionally "at" (when
    the call is made, ISO 8601: the rate limits and loop detection count by it)."""
    calls = []
    for number, data in _json_lines(path):
        data.setdefault("id", str(number))
        data.setdefault("agent", default_agent)
        data.pop("was", None)  # a what-if compares with what was recorded, not with a claim
        calls.append(_call(data, path, number))
    return calls


def tools_listed(path: Path, server: str | None = None) -> dict[str, ToolDefinition]:
    """`--tools [SERVER=]FILE`: a server's tools/list result (`{"tools": [...]}`, or the list),
    each tool's definition by the name a call gives it: `SERVER.NAME`, or without SERVER the
    entry's name as written (`github.get_issue`). Every tool listed counts as a trusted
    server's: its annotations count as the live gate counts them."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
        raise PolicyCheckError(f"{path}: cannot be read as JSON ({error})") from None
    entries = document.get("tools") if isinstance(document, dict) else document
    if not isinstance(entries, list):
        raise PolicyCheckError(f"{path}: not a tools/list result (no list of tools)")
    listed: dict[str, ToolDefinition] = {}
    for number, entry in enumerate(entries, start=1):
        name = entry.get("name") if isinstance(entry, dict) else None
        if not isinstance(name, str) or not name:
            raise PolicyCheckError(f"{path}: tool {number} has no name")
        listed[f"{server}.{name}" if server else name] = ToolDefinition.listed(entry)
    return listed


def calls_from_audit(path: Path) -> list[CallToCheck]:
    """`--audit`: the lines of `foundry audit export`, compared with what was decided then."""
    calls = []
    for number, line in _json_lines(path):
        if "params" not in line:
            raise PolicyCheckError(
                f"{path}:{number}: no params (exported by an older Foundry; export again)"
            )
        data = {
            "id": str(line.get("trace_id") or number),
            "agent": line.get("agent") or "agent",
            "tool": line.get("tool"),
            "params": line.get("params"),
            "was": recorded_outcome(line.get("decision"), line.get("resolved_by")),
            "was_by": line.get("resolved_by"),
            "was_reason": line.get("reasoning") or "",
            "at": line.get("time"),
            "session": line.get("session_id"),
        }
        calls.append(_call(data, path, number))
    return calls


def calls_from_session(store: Store, session_id: str) -> list[CallToCheck]:
    """`--session`: every tool call the session's gate decided, with what it decided and when:
    a call a person decided at the moment it was put to them (its decision is recorded once
    they answered)."""
    agent = store.sessions.get(session_id).agent_name or "agent"
    asked: dict[str, datetime] = {}  # when the last call of each tool was put to a person
    calls = []
    kinds = ("tool_call_decided", "approval_requested")
    for record in store.events.list(session_id, kinds=kinds):
        body = event_body(record.kind, record.payload)
        if isinstance(body, ApprovalRequested):
            asked[body.tool] = record.time
            continue
        assert isinstance(body, ToolCallDecided)
        was = recorded_outcome("allow" if body.allowed else "deny", body.by)
        at = asked.pop(body.call.name, record.time) if was == "human" else record.time
        calls.append(
            CallToCheck(
                id=body.call.id,
                agent=agent,
                tool=body.call.name,
                params=body.call.arguments,
                was=was,
                was_by=body.by,
                was_reason=body.reason,
                at=at,
                session=session_id,
            )
        )
    return calls


def recorded_schemas(store: Store, session_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
    """The input schema of each tool the sessions' servers offered, as recorded when they
    started (the last one given wins); sessions recorded before Foundry kept them have none."""
    schemas: dict[str, dict[str, Any]] = {}
    for session_id in session_ids:
        for record in store.events.list(session_id, kinds=("tool_server",)):
            body = event_body(record.kind, record.payload)
            if isinstance(body, ToolServerChanged):
                schemas |= body.tools
    return schemas


def recorded_outcome(decision: Any, resolved_by: Any) -> RouteOutcome | None:
    """What was decided, with a person's decision counted as "human" (a person was asked)."""
    if isinstance(resolved_by, str) and resolved_by.startswith(HUMAN_PREFIXES):
        return "human"
    if decision in ("allow", "deny"):
        return "allow" if decision == "allow" else "deny"
    return None


def _json_lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise PolicyCheckError(f"{path}: cannot be read ({error})") from None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except (json.JSONDecodeError, RecursionError) as error:
            raise PolicyCheckError(f"{path}:{number}: invalid JSON: {error}") from None
        if not isinstance(data, dict):
            raise PolicyCheckError(f"{path}:{number}: must be a JSON object")
        yield number, data


def _call(data: dict[str, Any], path: Path, number: int) -> CallToCheck:
    try:
        return CallToCheck.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "the line"
        raise PolicyCheckError(f"{path}:{number}: {field}: {first['msg']}") from None


# -- how the results are shown --------------------------------------------------------------------


def result_line(result: CheckedCall) -> str:
    rule = f" [{result.rule}]" if result.rule else ""
    by = f" by {result.was_by}" if result.was_by else ""
    change = f" (was {result.was}{by})" if result.changed else ""
    decided = (
        "a person decides" if result.outcome == "human" else f"{result.outcome} at {result.level}"
    )
    decided += f"{rule}{change}"
    return f"{result.id}: {result.tool} -> {decided}: {result.reason}"


def result_json(result: CheckedCall) -> str:
    data = result.model_dump(include={"id", "tool", "level", "outcome", "rule", "reason"})
    if result.was is not None:
        data |= {"was": result.was, "changed": result.changed}
    return json.dumps(data, ensure_ascii=False)


def loop_key_note(results: Iterable[CheckedCall]) -> str | None:
    """How the loop detection keyed calls differently from the live gate, if it could matter:
    for each tool called often enough to loop whose schema is not known."""
    calls = Counter(result.tool for result in results if result.loop_keyed_on_all)
    tools = sorted(tool for tool, count in calls.items() if count >= LOOP_REPEATS)
    if not tools:
        return None
    return (
        f"Loop detection keyed on all the arguments of {', '.join(tools)}: their tool schemas "
        "are not known here, so a field a tool ignores counts as a new call (the live gate "
        "keys on the parameters a tool's schema declares)."
    )


def summary(results: Iterable[CheckedCall]) -> str:
    results = list(results)
    counts = {
        outcome: sum(r.outcome == outcome for r in results)
        for outcome in ("allow", "deny", "human")
    }
    text = (
        f"{len(results)} calls: {counts['allow']} allowed, {counts['deny']} denied, "
        f"{counts['human']} to a person"
    )
    if any(r.was is not None for r in results):
        text += f"; {sum(r.changed for r in results)} would be decided differently now"
    return text


# -- what-ifs for the editor's try panel ----------------------------------------------------------


def offer_problem(
    tool: str, servers: Iterable[str], listed: Mapping[str, Iterable[str]]
) -> str | None:
    """Why no server of the agent offers `tool` (`server.tool`), or None when one may: its
    `servers` by name, and the tools of each whose list is known (`listed`, by server)."""
    servers = sorted(servers)
    server, dot, name = tool.partition(".")
    named = ", ".join(servers) if servers else "none"
    if not dot or not name:
        return f"'{tool}' names no server: write server.tool (this agent's servers: {named})."
    if server not in servers:
        return (
            f"No server of this agent is named '{server}' (its servers: {named}): its chats "
            "cannot make this call."
        )
    offered = sorted(listed.get(server, ()))
    if offered and name not in offered:
        return f"The server '{server}' does not offer '{name}'; it offers {', '.join(offered)}."
    return None


async def check_calls(checker: PolicyChecker, calls: Iterable[CallToCheck]) -> list[CheckedCall]:
    """Decide `calls` in order, as one session would see them."""
    return [await checker.check(call) for call in calls]


def what_if(
    store: Store,
    compiled: PolicyEngine,
    config: PolicyConfig,
    workspace: Path,
    calls: list[CallToCheck],
    server_folders: ServerPlaces | None = None,
    tool_schemas: Schemas | None = None,
    agent_path: str | None = None,
) -> list[CheckedCall]:
    """Decide `calls` under `config` (compiled once into `compiled`, nothing counted from one
    what-if to the next) on this thread, in an event loop of its own, without the L1
    supervisor's model (its verdict is what a trial would wait for): for a worker thread."""
    checker = PolicyChecker(
        store,
        config,
        workspace,
        server_folders,
        compiled=compiled,
        tool_schemas=tool_schemas,
        agent_path=agent_path,
    )
    return asyncio.run(check_calls(checker, calls))


def recorded_calls(store: Store, agent_path: Path, limit: int) -> list[CallToCheck]:
    """The last `limit` tool calls decided in the sessions of the agent at `agent_path`, oldest
    first, each with what was decided then."""
    calls: list[CallToCheck] = []
    for session_id in agent_sessions(store, agent_path):
        calls[:0] = calls_from_session(store, session_id)
        if len(calls) >= limit:
            break
    return calls[-limit:] if limit else []


def agent_sessions(store: Store, agent_path: Path) -> list[str]:
    """The ids of the agent's recent sessions, newest first."""
    wanted = str(agent_path.resolve())
    return [
        record.id
        for record in store.sessions.list(limit=RECENT_SESSIONS)
        if record.agent_path == wanted
    ]
