"""packaging/otlp_receiver.py, the standard-library receiver check-linux.sh sends the packaged
app's export to: run as its own process, it counts the spans the SDK's real OTLP/HTTP exporter
POSTs, compressed or not, and names what is sent anywhere else."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from foundry.telemetry.export import ExportFailed, send

RECEIVER = Path(__file__).resolve().parents[2] / "packaging" / "otlp_receiver.py"


class RunningReceiver:
    def __init__(self, process: subprocess.Popen[str], port: int) -> None:
        self.process = process
        self.url = f"http://127.0.0.1:{port}"

    def lines(self) -> list[str]:
        """Everything it printed, once it is stopped."""
        self.process.terminate()
        output, _ = self.process.communicate(timeout=30)
        return output.splitlines()


@pytest.fixture
def receiver(tmp_path: Path) -> Iterator[RunningReceiver]:
    port_file = tmp_path / "port"
    process = subprocess.Popen(
        [sys.executable, str(RECEIVER), str(port_file)], stdout=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 30
        while not port_file.exists():
            assert process.poll() is None and time.monotonic() < deadline, "it did not listen"
            time.sleep(0.05)
        yield RunningReceiver(process, int(port_file.read_text()))
    finally:
        process.kill()
        process.communicate()


def spans_of_two_scopes() -> list[ReadableSpan]:
    """Three spans, a parent and its child from one tracer and one from another."""
    collected = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(collected))
    with provider.get_tracer("foundry").start_as_current_span("invoke_agent clock"):
        provider.get_tracer("foundry").start_span("chat turns.json").end()
    provider.get_tracer("another").start_span("execute_tool time").end()
    provider.shutdown()
    return list(collected.get_finished_spans())


@pytest.mark.parametrize("compression", list(Compression))
def test_it_counts_every_span_the_exporter_posts(
    receiver: RunningReceiver, compression: Compression
) -> None:
    exporter = OTLPSpanExporter(endpoint=f"{receiver.url}/v1/traces", compression=compression)
    sent = send(spans_of_two_scopes(), exporter)
    [line] = receiver.lines()
    assert sent.spans == 3
    assert line.startswith("POST /v1/traces ") and line.endswith(" bytes 3 spans")


def test_a_post_elsewhere_is_refused_and_named(receiver: RunningReceiver) -> None:
    exporter = OTLPSpanExporter(endpoint=f"{receiver.url}/v1/logs")
    with pytest.raises(ExportFailed):
        send(spans_of_two_scopes(), exporter)
    [line] = receiver.lines()
    assert line.startswith("POST /v1/logs ") and line.endswith("bytes, not /v1/traces")
