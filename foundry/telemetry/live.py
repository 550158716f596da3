"""Live export: every event the engine publishes made into spans on a thread of its own, and sent
in batches by the SDK's BatchSpanProcessor, so the engine's loop never waits on the network.
On only when the environment names an OTLP endpoint."""

from __future__ import annotations

import logging
import os
import queue
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from foundry.session.events import Event

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SpanExporter

    from foundry.store import Store
    from foundry.telemetry.sessions import SessionSpans
    from foundry.telemetry.tasks import TaskSpans

log = logging.getLogger(__name__)
Subscribe = Callable[[Callable[[Event], None]], Callable[[], None]]
CLOSE = None  # put on the queue: no more events
ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")


class LiveExport:
    """Follows the engine's events (`subscribe`, the bus's) and exports their spans; `close`
    ends what is open, flushes and stops."""

    def __init__(self, store: Store, subscribe: Subscribe, exporter: SpanExporter) -> None:
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        from foundry.telemetry.export import resource

        self._store = store
        self.provider: TracerProvider = TracerProvider(resource=resource())
        self.provider.add_span_processor(BatchSpanProcessor(exporter))
        self._sessions: dict[str, SessionSpans | TaskSpans] = {}
        self._events: queue.SimpleQueue[Event | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="foundry-telemetry", daemon=True)
        self._thread.start()
        self._unsubscribe = subscribe(self._events.put)

    def close(self, timeout_s: float = 10.0) -> None:
        self._unsubscribe()
        self._events.put(CLOSE)
        self._thread.join(timeout_s)
        self.provider.shutdown()  # the batch processor sends what it holds

    def _run(self) -> None:
        while (event := self._events.get()) is not CLOSE:
            try:
                self._feed(event)
            except Exception:  # a span not made must not stop the export of the others
                log.exception("no span made of %s of %s", event.kind, event.session_id)
        for spans in self._sessions.values():
            spans.finish(datetime.now(UTC))

    def _feed(self, event: Event) -> None:
        from foundry.telemetry.export import stored_events, stored_mask, translator

        spans = self._sessions.get(event.session_id)
        if spans is None:
            mask = stored_mask(self._store, event.session_id)
            task = event.kind.startswith("task_")
            spans = translator(self.provider, mask, event.session_id, task)
            self._sessions[event.session_id] = spans
            if not task and event.kind != "session_started":  # reopened: its agent and model
                for started in stored_events(self._store, event.session_id, "session_started"):
                    spans.feed(started)
        spans.feed(event)
        if event.kind == "task_finished":
            spans.finish(event.time)
            del self._sessions[event.session_id]


def endpoint_configured() -> bool:
    """Whether the environment names an OTLP endpoint (live export is off otherwise)."""
    return any(os.environ.get(name) for name in ENDPOINT_VARIABLES)


def live_export(store: Store, subscribe: Subscribe) -> LiveExport | None:
    """The live export when the environment names an OTLP endpoint, else None (no network).
    Without one the SDK is not even imported: every engine start comes through here."""
    if not endpoint_configured():
        return None
    from foundry.telemetry.export import otlp_exporter

    return LiveExport(store, subscribe, otlp_exporter())
