"""Spans made at the times events recorded, every attribute masked on its way out."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from foundry.session.events import Event
from foundry.supervision.outgoing import OutgoingMask
from foundry.supervision.redaction import redact_params

Attributes = dict[str, Any]
# the GenAI conventions' switch for what people typed and tools gave back (off by default)
CAPTURE_CONTENT = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
ARGUMENTS = "gen_ai.tool.call.arguments"
CONTENT = frozenset(  # attributes that carry messages or results as they were
    {
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "input.value",
        "output.value",
        "gen_ai.tool.call.result",
    }
)


def captures_content() -> bool:
    """Whether messages, results and whole arguments are exported (CAPTURE_CONTENT=true)."""
    return os.environ.get(CAPTURE_CONTENT, "").strip().lower() == "true"


def nanoseconds(moment: datetime) -> int:
    """An event's time as OpenTelemetry's nanoseconds since the epoch."""
    return int(moment.timestamp() * 1_000_000_000)


def before(moment: datetime, seconds: float | None) -> datetime:
    return moment - timedelta(seconds=max(seconds or 0.0, 0.0))


def as_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


class SpanBuilder:
    """Starts and ends the spans of one stored session (or task) with `tracer`; every string
    that goes into an attribute or a span event passes `mask` first. A subclass says which
    method makes the spans of each event type (`handlers`); `feed` the events in order, then
    `finish`. Unless content is captured (CAPTURE_CONTENT), messages and results are left out
    and a call's arguments are shown as the store's traces show them: content replaced by its
    size and hash."""

    def __init__(self, tracer: trace.Tracer, mask: OutgoingMask, session_id: str) -> None:
        self.tracer = tracer
        self.mask = mask
        self.content = captures_content()
        self.session_id = session_id
        self.spans = 0  # how many were started
        self.handlers: dict[type[Any], Callable[[Event, Any], None]] = {}

    def feed(self, event: Event) -> None:
        handler = self.handlers.get(type(event.body))
        if handler is not None:
            handler(event, event.body)

    def finish(self, at: datetime) -> None:
        """End what is still open at `at` (the last event's time, or now)."""

    def start(
        self,
        name: str,
        at: datetime,
        attributes: Attributes,
        parent: Span | None = None,
        kind: SpanKind = SpanKind.INTERNAL,
    ) -> Span:
        context = trace.set_span_in_context(parent) if parent is not None else None
        self.spans += 1
        return self.tracer.start_span(
            self.mask.text(name),
            context=context,
            kind=kind,
            attributes=self.masked(attributes),
            start_time=nanoseconds(at),
        )

    def span(
        self,
        name: str,
        start: datetime,
        end: datetime,
        attributes: Attributes,
        parent: Span | None = None,
        failed: str | None = None,
    ) -> Span:
        """A span whose start and end are both known already; `failed` sets an error status."""
        span = self.start(name, start, attributes, parent)
        self.end(span, max(end, start), failed)
        return span

    def end(self, span: Span, at: datetime, failed: str | None = None) -> None:
        if failed is not None:
            span.set_status(Status(StatusCode.ERROR, self.mask.text(failed)))
            span.set_attribute("error.type", self.mask.text(failed))
        span.end(end_time=nanoseconds(at))

    def note(self, span: Span, name: str, event: Event, attributes: Attributes) -> None:
        """A span event at `event`'s time."""
        span.add_event(name, self.masked(attributes), timestamp=nanoseconds(event.time))

    def set(self, span: Span, attributes: Attributes) -> None:
        span.set_attributes(self.masked(attributes))

    def masked(self, attributes: Attributes) -> Attributes:
        """`attributes` as OpenTelemetry takes them (strings, numbers, lists of them), every
        string masked; None left out, anything else as JSON."""
        shown: Attributes = {}
        for key, value in attributes.items():
            if not self.content and key in CONTENT:
                continue
            if not self.content and key == ARGUMENTS and isinstance(value, dict):
                value = redact_params(value)
            if value is None:
                continue
            if isinstance(value, bool | int | float):
                shown[key] = value
            elif isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
                shown[key] = [self.mask.text(v) for v in value]
            elif isinstance(value, str):
                shown[key] = self.mask.text(value)
            else:
                shown[key] = self.mask.text(as_json(self.mask.payload(value)))
        return shown
