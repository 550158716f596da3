"""Stored sessions and tasks turned into spans, and those spans sent to an OTLP/HTTP endpoint
configured the SDK's way (OTEL_EXPORTER_OTLP_ENDPOINT, _TRACES_ENDPOINT, _HEADERS, ...)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import foundry
import foundry.orchestration.events
from foundry.session.events import Event, event_body
from foundry.store import NotFound, Store
from foundry.supervision.outgoing import OutgoingMask
from foundry.telemetry.sessions import SessionSpans
from foundry.telemetry.tasks import TaskSpans

SCOPE = "foundry"


class ExportFailed(Exception):
    """The endpoint did not take the spans (unreachable, refused, or an error answer)."""


@dataclass(frozen=True)
class Sent:
    spans: int
    endpoint: str


def resource() -> Resource:
    """Foundry as the service, unless OTEL_SERVICE_NAME names another (the SDK reads it and
    OTEL_RESOURCE_ATTRIBUTES itself)."""
    named = {} if os.environ.get("OTEL_SERVICE_NAME") else {"service.name": "foundry"}
    return Resource.create({**named, "service.version": foundry.__version__})


def translator(
    provider: TracerProvider, mask: OutgoingMask, session_id: str, task: bool
) -> SessionSpans | TaskSpans:
    tracer = provider.get_tracer(SCOPE, foundry.__version__)
    kind = TaskSpans if task else SessionSpans
    return kind(tracer, mask, session_id)


def stored_events(store: Store, session_id: str, *kinds: str) -> list[Event]:
    """The session's stored events (of `kinds` only, if given), typed."""
    return [
        Event(session_id=r.session_id, seq=r.seq, time=r.time, body=event_body(r.kind, r.payload))
        for r in store.events.list(session_id, kinds=kinds)
    ]


def stored_mask(store: Store, session_id: str) -> OutgoingMask:
    """The mask `foundry sessions export` uses: the session's agent's secrets; for a task,
    which has no agent of its own, the secrets' telling shapes."""
    try:
        record = store.sessions.get(session_id)
    except NotFound:
        return OutgoingMask()
    return OutgoingMask.for_agent(record.agent_path)


def is_task(events: Sequence[Event]) -> bool:
    return bool(events) and events[0].kind == "task_started"


def spans_of(store: Store, session_id: str) -> list[ReadableSpan]:
    """The spans of a stored session or task, made in memory; NotFound when it has no events."""
    events = stored_events(store, session_id)
    if not events:
        raise NotFound(f"no session or task with id {session_id!r} has events")
    collected = InMemorySpanExporter()
    provider = TracerProvider(resource=resource())
    provider.add_span_processor(SimpleSpanProcessor(collected))
    spans = translator(provider, stored_mask(store, session_id), session_id, is_task(events))
    for event in events:
        spans.feed(event)
    spans.finish(events[-1].time)
    provider.shutdown()
    return list(collected.get_finished_spans())


def otlp_exporter() -> SpanExporter:
    """The SDK's OTLP/HTTP span exporter, as the environment configures it."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter()


def exporter_endpoint(exporter: SpanExporter) -> str:
    """Where the exporter sends, as the SDK resolved it from the environment."""
    return str(getattr(exporter, "_endpoint", "the OTLP endpoint"))


def send(spans: Sequence[ReadableSpan], exporter: SpanExporter) -> Sent:
    """Send `spans` in one export; ExportFailed naming the endpoint when it does not take them."""
    endpoint = exporter_endpoint(exporter)
    try:
        result = exporter.export(spans)
    finally:
        exporter.shutdown()
    if result is not SpanExportResult.SUCCESS:
        raise ExportFailed(
            f"the OTLP endpoint {endpoint} did not take the {len(spans)} spans (is a collector "
            "listening there? set OTEL_EXPORTER_OTLP_ENDPOINT to the right address)"
        )
    return Sent(len(spans), endpoint)
