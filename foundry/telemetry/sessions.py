"""A chat's or a gateway's events as GenAI spans: `invoke_agent` per turn, `chat` per model call,
`execute_tool` per tool call and `run_guardrail` per supervision decision, fed one event at a
time (live) or all at once (a stored session)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from opentelemetry.trace import Span, SpanKind

from foundry.session.events import (
    ApprovalRequested,
    ApprovalResolved,
    ErrorOccurred,
    Event,
    MessageAdded,
    ModelCallFinished,
    SessionRestarted,
    SessionStarted,
    SupervisorDecided,
    ToolCallDecided,
    ToolCallFinished,
    ToolConcernRaised,
    TurnFinished,
    TurnStarted,
)
from foundry.telemetry import decisions
from foundry.telemetry.builder import Attributes, SpanBuilder, before

TOOL_TYPE = "extension"  # MCP servers' tools run by the agent's side (the conventions' values)


@dataclass
class _Tool:
    span: Span
    decided_at: datetime


@dataclass
class _Turn:
    span: Span
    started_at: datetime
    user_message: str = ""
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass
class _Waiting:
    """A call sent to a person, until the decision on it: when it was asked and answered."""

    requested: ApprovalRequested
    asked_at: datetime
    resolved_at: datetime | None = None
    resolution: Attributes = field(default_factory=dict)


class SessionSpans(SpanBuilder):
    """The spans of one chat or gateway session; `feed` its events in order, then `finish`."""

    agent = "agent"
    model = ""
    gateway = False
    _turn: _Turn | None = None
    _last_turn: Span | None = None  # later background reviews stay in the turn's trace

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._tools: dict[str, _Tool] = {}
        self._waiting: dict[str, _Waiting] = {}  # by tool name: the next decision on it ends it
        self.handlers = {
            SessionStarted: self._session_started,
            TurnStarted: self._turn_started,
            MessageAdded: self._message,
            ModelCallFinished: self._model_call,
            ApprovalRequested: self._approval_requested,
            ApprovalResolved: self._approval_resolved,
            ToolCallDecided: self._tool_decided,
            ToolCallFinished: self._tool_finished,
            SupervisorDecided: self._supervisor_decided,
            ToolConcernRaised: self._concern,
            ErrorOccurred: self._error,
            TurnFinished: self._turn_finished,
            SessionRestarted: self._restarted,
        }

    def finish(self, at: datetime) -> None:
        """End what is still open (a turn cut short, a call never answered) at `at`."""
        self._end_calls(at)
        if self._turn is not None:
            self.end(self._turn.span, at, "unfinished")
        self._turn = None

    def common(self) -> Attributes:
        return {
            "gen_ai.conversation.id": self.session_id,
            "session.id": self.session_id,  # what Phoenix and Langfuse group sessions by
            "gen_ai.agent.name": self.agent,
        }

    def _parent(self) -> Span | None:
        return self._turn.span if self._turn is not None else None

    def _session_started(self, event: Event, body: SessionStarted) -> None:
        self.agent, self.model = body.agent_name, body.model
        self.gateway = body.model == "gateway"

    def _turn_started(self, event: Event, body: TurnStarted) -> None:
        attributes = {
            **self.common(),
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.request.model": _model_name(self.model),
            "gen_ai.provider.name": _provider(self.model),
            "openinference.span.kind": "AGENT",
        }
        span = self.start(f"invoke_agent {self.agent}", event.time, attributes)
        self._turn = _Turn(span, event.time)

    def _message(self, event: Event, body: MessageAdded) -> None:
        if self._turn is not None and body.message.role == "user" and not self._turn.user_message:
            self._turn.user_message = body.message.content or ""
            self.set(self._turn.span, _messages("input", "user", self._turn.user_message))

    def _model_call(self, event: Event, body: ModelCallFinished) -> None:
        attributes = {
            **self.common(),
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": _model_name(body.model),
            "gen_ai.provider.name": _provider(body.model),
            "gen_ai.usage.input_tokens": body.input_tokens,
            "gen_ai.usage.output_tokens": body.output_tokens,
            "gen_ai.response.finish_reasons": [body.stop_reason],
            "foundry.model.first_token_s": body.first_token_s,
            "openinference.span.kind": "LLM",
            "llm.model_name": _model_name(body.model),  # what Phoenix shows of a model call
            "llm.token_count.prompt": body.input_tokens,
            "llm.token_count.completion": body.output_tokens,
        }
        start = before(event.time, body.total_s)
        failed = "error" if body.stop_reason == "error" else None
        name = f"chat {_model_name(body.model)}"
        self.span(name, start, event.time, attributes, self._parent(), failed)
        if self._turn is not None:
            self._turn.input_tokens += body.input_tokens
            self._turn.output_tokens += body.output_tokens

    def _approval_requested(self, event: Event, body: ApprovalRequested) -> None:
        self._waiting[body.tool] = _Waiting(body, event.time)

    def _approval_resolved(self, event: Event, body: ApprovalResolved) -> None:
        for waiting in self._waiting.values():
            if waiting.requested.approval_id == body.approval_id:
                waiting.resolution = decisions.resolution(body)
                waiting.resolved_at = event.time

    def _tool_decided(self, event: Event, body: ToolCallDecided) -> None:
        waiting = self._waiting.pop(body.call.name, None)
        start = waiting.asked_at if waiting is not None else event.time
        attributes = {
            **self.common(),
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": body.call.name,
            "gen_ai.tool.call.id": body.call.id,
            "gen_ai.tool.type": TOOL_TYPE,
            "gen_ai.tool.call.arguments": body.call.arguments,
            "foundry.gateway": self.gateway,
            "openinference.span.kind": "TOOL",
            "foundry.decision.allowed": body.allowed,
            **decisions.decided_by(body.by),
        }
        kind = SpanKind.SERVER if self.gateway else SpanKind.INTERNAL
        span = self.start(f"execute_tool {body.call.name}", start, attributes, self._parent(), kind)
        self._tools[body.call.id] = _Tool(span, event.time)
        decision = {**self.common(), **decisions.tool_call_decision(body)}
        decided_from = event.time
        if waiting is not None:
            decided_from = self._escalated(waiting, event.time, span)
            decision.update(waiting.resolution)
        self.span(f"run_guardrail tool_call {body.by}", decided_from, event.time, decision, span)

    def _escalated(self, waiting: _Waiting, at: datetime, parent: Span | None) -> datetime:
        """The span of a call's wait for a person, from the ask to the answer (or `at`)."""
        attributes = {**self.common(), **decisions.escalation(waiting.requested)}
        attributes.update(waiting.resolution)
        ended = waiting.resolved_at or at
        name = f"run_guardrail tool_call {decisions.escalated_by(waiting.requested)}"
        self.span(name, waiting.asked_at, ended, attributes, parent)
        return ended

    def _tool_finished(self, event: Event, body: ToolCallFinished) -> None:
        tool = self._tools.pop(body.call_id, None)
        if tool is None:
            return
        result = {"gen_ai.tool.call.result": body.text, "foundry.tool.is_error": body.is_error}
        self.set(tool.span, result)
        end = tool.decided_at + timedelta(seconds=body.duration_s) if body.duration_s else None
        self.end(tool.span, end or event.time, "tool_error" if body.is_error else None)

    def _supervisor_decided(self, event: Event, body: SupervisorDecided) -> None:
        attributes = {**self.common(), **decisions.message_decision(body)}
        name = f"run_guardrail {attributes[decisions.TARGET]} {body.supervisor}"
        start = before(event.time, body.duration_s)
        self.span(name, start, event.time, attributes, self._parent() or self._last_turn)

    def _concern(self, event: Event, body: ToolConcernRaised) -> None:
        tool = self._tools.get(body.call_id or "")
        span = tool.span if tool is not None else self._parent()
        if span is not None:
            attributes = {"foundry.concern": body.concern, "gen_ai.tool.name": body.tool}
            self.note(span, "foundry.tool_concern", event, {**attributes, "reason": body.reason})

    def _error(self, event: Event, body: ErrorOccurred) -> None:
        span = self._parent()
        if span is not None:
            attributes = {"exception.message": body.message, "foundry.error.where": body.where}
            self.note(span, "exception", event, attributes)

    def _turn_finished(self, event: Event, body: TurnFinished) -> None:
        turn = self._turn
        if turn is None:
            return
        self.set(
            turn.span,
            {
                **_messages("output", "assistant", body.reply),
                "gen_ai.usage.input_tokens": turn.input_tokens,
                "gen_ai.usage.output_tokens": turn.output_tokens,
                "foundry.turn.ended_by": body.ended_by,
                "foundry.turn.model_calls": body.model_calls,
            },
        )
        self._end_calls(event.time)
        failed = body.ended_by if body.ended_by in ("error", "blocked", "max_turns") else None
        self.end(turn.span, event.time, failed)
        self._last_turn, self._turn = turn.span, None

    def _restarted(self, event: Event, body: SessionRestarted) -> None:
        self.model = body.model

    def _end_calls(self, at: datetime) -> None:
        """End the calls still open (waiting for a person, or never answered) at `at`."""
        for waiting in self._waiting.values():
            self._escalated(waiting, at, self._parent())
        for tool in self._tools.values():
            self.end(tool.span, at, "unfinished")
        self._waiting, self._tools = {}, {}


def _messages(direction: str, role: str, text: str) -> Attributes:
    """A turn's message as the GenAI conventions' messages and OpenInference's value."""
    message = [{"role": role, "parts": [{"type": "text", "content": text}]}]
    return {f"gen_ai.{direction}.messages": message, f"{direction}.value": text}


def _provider(reference: str) -> str | None:
    """`ollama` of `ollama:qwen2.5:7b`; None for a model named without its provider."""
    provider, _, model = reference.partition(":")
    return provider if model else None


def _model_name(reference: str) -> str:
    provider, _, model = reference.partition(":")
    return model or provider
