"""The typed events of a chat session: what the event log stores and the bus publishes."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from foundry.llm.base import ChatMessage, ToolCall


class EventBody(BaseModel):
    """What happened; `kind` names the event type in the log."""

    model_config = ConfigDict(frozen=True)

    kind: str


class SessionStarted(EventBody):
    kind: Literal["session_started"] = "session_started"
    agent_path: str
    agent_name: str
    model: str
    settings_overrides: dict[str, Any] = Field(default_factory=dict)


class MessageAdded(EventBody):
    kind: Literal["message"] = "message"
    message: ChatMessage


class TurnStarted(EventBody):
    kind: Literal["turn_started"] = "turn_started"


class TokenDelta(EventBody):
    kind: Literal["token"] = "token"
    text: str


class ContextEntry(BaseModel):
    model_config = ConfigDict(frozen=True)

    item: Literal["rule", "reference", "tool"]
    name: str
    reason: Literal["always", "manual", "mention", "agent"]
    score: float | None = None


class ContextSelected(EventBody):
    """The rules, references and tools in play for one model request, and why."""

    kind: Literal["context_selected"] = "context_selected"
    entries: tuple[ContextEntry, ...]


class ContextChanged(EventBody):
    """An item was put into or taken out of the session's context (by a mention, a user, ...)."""

    kind: Literal["context_changed"] = "context_changed"
    item: Literal["rule", "reference", "tool"]
    name: str
    included: bool
    by: str


BY_THE_AGENT = "agent"  # who changed the context or saved an item, when the agent did it itself


class ItemBefore(BaseModel):
    """What a saved rule or reference was before the save (`value` None: there was none)."""

    value: dict[str, Any] | None


class ContextItemSaved(EventBody):
    """A rule or reference of the session was created, changed (`value` is the item as saved)
    or deleted (`value` is None). It changes the session's own copy of the agent, never its
    files; a reopened session replays it. `before` (not in logs older than undo) is what the
    save replaced, and `undoes` the number of the save it took back."""

    kind: Literal["context_item_saved"] = "context_item_saved"
    item: Literal["rule", "reference"]
    name: str
    value: dict[str, Any] | None
    by: str
    before: ItemBefore | None = None
    undoes: int | None = None

    @property
    def in_files(self) -> bool:
        """Saved to the agent's files too (a supervisor's change is to this chat's copy only)."""
        return not self.by.startswith("supervisor:")

    @property
    def undoable(self) -> bool:
        """The agent's own save, with what it replaced (older logs lack it)."""
        return self.by == BY_THE_AGENT and self.before is not None

    def sentence(self) -> str:
        """What the save did, for the chat: "The agent created the rule “tables” in its files."."""
        named = f"the {self.item} “{self.name}”"
        if self.undoes is not None:
            return f"Undone: {named} is back as it was before the agent saved it, in its files too."
        if self.value is None:
            done = "deleted"
        elif self.before is None:
            done = "saved"
        else:
            done = "created" if self.before.value is None else "changed"
        if not self.in_files:
            who = self.by.removeprefix("supervisor:")
            return f"{who.capitalize()} {done} {named} for this chat (its files are as they were)."
        if self.by == BY_THE_AGENT:
            return f"The agent {done} {named} in its files."
        return f"You {done} {named} in the agent's files."


class ToolSettingSaved(EventBody):
    """The agent set an include mode through tsagent's `tools` server: the setting of one tool
    of `server` (with `tool` None, of its tools by default) as saved in the agent's files
    (`value`) and what it replaced (`before`; None: nothing was set), `undoes` as for items."""

    kind: Literal["tool_setting_saved"] = "tool_setting_saved"
    server: str
    tool: str | None
    value: dict[str, Any] | None
    before: dict[str, Any] | None
    by: str
    undoes: int | None = None

    @property
    def in_files(self) -> bool:
        return True

    @property
    def undoable(self) -> bool:
        return self.by == BY_THE_AGENT

    def sentence(self) -> str:
        """What the save did, for the chat."""
        named = (
            f"the tool “{self.server}.{self.tool}”"
            if self.tool
            else f"the tools of “{self.server}” by default"
        )
        if self.undoes is not None:
            return f"Undone: {named} are set as before the agent's change, in its files too."
        mode = (self.value or {}).get("include")
        return f"The agent set {named} to be included “{mode}” in its files."


AgentSave = ContextItemSaved | ToolSettingSaved  # what the agent saves to its own files


class ModelCallFinished(EventBody):
    kind: Literal["model_call"] = "model_call"
    model: str
    input_tokens: int
    output_tokens: int
    first_token_s: float | None
    total_s: float
    stop_reason: str


class ToolCallDecided(EventBody):
    """The approval gate's decision on a tool call, and who made it."""

    kind: Literal["tool_call_decided"] = "tool_call_decided"
    call: ToolCall
    allowed: bool
    by: str
    reason: str = ""
    confidence: float | None = None  # the L1 supervisor's (0-1), when it decided


class ToolCallFinished(EventBody):
    kind: Literal["tool_call_finished"] = "tool_call_finished"
    call_id: str
    name: str
    text: str
    is_error: bool
    duration_s: float


class TurnFinished(EventBody):
    kind: Literal["turn_finished"] = "turn_finished"
    reply: str
    model_calls: int
    ended_by: Literal["reply", "max_turns", "cancelled", "error", "blocked"]


class ErrorOccurred(EventBody):
    kind: Literal["error"] = "error"
    message: str
    retryable: bool = False
    where: str = ""


class ToolServerChanged(EventBody):
    kind: Literal["tool_server"] = "tool_server"
    name: str
    state: str
    error: str | None = None
    # the input schema of each tool it offers (by `server.tool`): what a later dry run of the
    # policy keys its loop detection on, as the live gate did
    tools: dict[str, dict[str, Any]] = Field(default_factory=dict)


class ToolConcernRaised(EventBody):
    """Supervision found something wrong about a tool or what it gave back, apart from any one
    decision: a definition changed since it was pinned, a new tool, a flagged description, two
    tools that shadow each other, a result that reads like an injection. `concern` is a
    supervision Concern's kind (concerns.py) or `flagged-result`; `detail` what it rests on."""

    kind: Literal["tool_concern"] = "tool_concern"
    tool: str  # the tool's `server.tool` name
    concern: str
    reason: str
    detail: dict[str, Any] = Field(default_factory=dict)
    call_id: str | None = None  # the call whose result was flagged


class ApprovalRequested(EventBody):
    """A tool call waits for a human (L2) in the approval inbox."""

    kind: Literal["approval_requested"] = "approval_requested"
    approval_id: str
    tool: str
    level: str
    reason: str
    expires_at: datetime | None = None
    concerns: list[dict[str, Any]] = Field(default_factory=list)  # as ApprovalRecord.concerns


class ApprovalResolved(EventBody):
    """An approval decided (or timed out). `edited`: approved with other parameters than the
    call asked for; `flagged`: the call came with an injection signal or a concern. `shadow` is
    the verdict the L1 supervisor gave unseen (shadow mode: approve, deny or escalate) when it
    came before the resolution; one that comes later is its own ShadowVerdictGiven."""

    kind: Literal["approval_resolved"] = "approval_resolved"
    approval_id: str
    status: str
    resolved_by: str
    reasoning: str = ""
    waited_s: float = 0.0
    tool: str = ""
    edited: bool = False
    flagged: bool = False
    shadow: Literal["approve", "deny", "escalate"] | None = None
    shadow_confidence: float | None = None


class ShadowVerdictGiven(EventBody):
    """The L1 supervisor's verdict on a call a person decides, given unseen (shadow mode): it
    changes nothing. `person` is the approval's status when a person had already decided it
    (else the ApprovalResolved that follows carries this verdict); `duration_s` and the tokens
    are what it cost."""

    kind: Literal["shadow_verdict"] = "shadow_verdict"
    approval_id: str
    tool: str
    supervisor: str
    decision: Literal["approve", "deny", "escalate"]
    confidence: float | None = None
    reasoning: str = ""
    duration_s: float = 0.0
    person: str | None = None
    edited: bool = False


class SupervisorStarted(EventBody):
    """A message supervisor began reviewing the message at `message_index`. `holds` says
    whether the message waits for it; a review that does not hold runs after the reply."""

    kind: Literal["supervisor_started"] = "supervisor_started"
    supervisor_id: str
    supervisor: str
    direction: Literal["request", "response"]
    message_index: int
    holds: bool


class SupervisorDeferred(EventBody):
    """A context supervisor did not finish within its budget before a request (or has not
    been fast enough before): the request keeps the lexical selection, and the supervisor's
    review runs after the reply, so that its changes count from the next turn."""

    kind: Literal["supervisor_deferred"] = "supervisor_deferred"
    supervisor_id: str
    supervisor: str
    direction: Literal["request", "response"]
    message_index: int
    reason: str


class SupervisorOff(EventBody):
    """A supervisor left off for this session (its model is too small for it: needsCapableModel),
    said once, on the first request: why, and what turns it on."""

    kind: Literal["supervisor_off"] = "supervisor_off"
    supervisor_id: str
    supervisor: str
    reason: str


class SupervisorDecided(EventBody):
    """A message supervisor's decision on the message at `message_index` of the session.

    `background` is set when the message did not wait for it (the supervisor can only observe
    or change the context of later turns); `duration_s` is how long the review took."""

    kind: Literal["supervisor_decided"] = "supervisor_decided"
    supervisor_id: str
    supervisor: str
    direction: Literal["request", "response"]
    message_index: int
    action: Literal["allow", "modify", "block", "human_review"]
    reasons: tuple[str, ...] = ()
    confidence: float | None = None
    changes: tuple[str, ...] = ()
    fallback: bool = False
    background: bool = False
    duration_s: float | None = None


class MessageRevised(EventBody):
    """A supervisor rewrote a message; the model sees the new text from now on."""

    kind: Literal["message_revised"] = "message_revised"
    message_index: int
    content: str
    by: str


class AgentApplied(EventBody):
    """The agent's file was saved while the session was open: what the session took at once
    (`applied`, from its next step) and what waits until it restarts (`pending`)."""

    kind: Literal["agent_applied"] = "agent_applied"
    agent_path: str
    applied: tuple[str, ...] = ()
    pending: tuple[str, ...] = ()

    def describe(self, how_to_restart: str) -> str:
        """What the save changed in the session, in a sentence or two; `how_to_restart` says
        how the pending parts are taken (a button in the app, a command in a terminal)."""
        parts = ["The agent was saved."]
        if self.applied:
            parts.append(f"This chat follows its {_listed(self.applied)} from the next step.")
        if self.pending:
            parts.append(
                f"Not in this chat until it restarts: the saved {_listed(self.pending)} "
                f"({how_to_restart})."
            )
        return " ".join(parts)


def _listed(parts: tuple[str, ...]) -> str:
    """("its prompt", "its rules") as "prompt and rules"."""
    words = [part.removeprefix("its ") for part in parts]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


class SessionRestarted(EventBody):
    """The session runs its agent as saved from here on (servers, model, supervisors started
    again; its history kept), with `model`."""

    kind: Literal["session_restarted"] = "session_restarted"
    model: str


class UnknownEvent(EventBody):
    """An event of a kind this version does not know (written by a newer Foundry): kept as is."""

    model_config = ConfigDict(frozen=True, extra="allow")


EVENT_TYPES: dict[str, type[EventBody]] = {
    cls.model_fields["kind"].default: cls
    for cls in (
        SessionStarted,
        MessageAdded,
        TurnStarted,
        TokenDelta,
        ContextSelected,
        ContextChanged,
        ContextItemSaved,
        ToolSettingSaved,
        ModelCallFinished,
        ToolCallDecided,
        ToolCallFinished,
        TurnFinished,
        ErrorOccurred,
        ToolServerChanged,
        ToolConcernRaised,
        ApprovalRequested,
        ApprovalResolved,
        ShadowVerdictGiven,
        SupervisorStarted,
        SupervisorDeferred,
        SupervisorOff,
        SupervisorDecided,
        MessageRevised,
        AgentApplied,
        SessionRestarted,
    )
}


def register_events(*classes: type[EventBody]) -> None:
    """Make event kinds defined outside this module (tasks, orchestration) readable from the log."""
    for cls in classes:
        EVENT_TYPES[cls.model_fields["kind"].default] = cls


class Event(BaseModel):
    """An event as stored: its session, its number in that session, its time and its body."""

    model_config = ConfigDict(frozen=True)

    session_id: str
    seq: int
    time: datetime
    body: EventBody

    @property
    def kind(self) -> str:
        return self.body.kind


def event_payload(body: EventBody) -> dict[str, Any]:
    return body.model_dump(mode="json", exclude={"kind"})


def event_body(kind: str, payload: dict[str, Any]) -> EventBody:
    model = EVENT_TYPES.get(kind)
    if model is None:
        return UnknownEvent(kind=kind, **payload)
    return model.model_validate({**payload, "kind": kind})
