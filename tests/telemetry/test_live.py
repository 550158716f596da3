"""Live export is on only when the environment names an OTLP endpoint: otherwise nothing follows
the engine's events and nothing is sent anywhere."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from foundry.runtime.bus import EventBus
from foundry.runtime.engine import Engine
from foundry.store import Store
from foundry.telemetry.export import spans_of
from foundry.telemetry.live import LiveExport, live_export

from .conftest import supervised_chat
from .receiver import Receiver

ENDPOINTS = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
REPO = Path(__file__).resolve().parents[2]
# Started and stopped in a fresh interpreter, the engine prints what of the export it imported
# (the mcp SDK imports opentelemetry's API itself, so only the SDK, exporter and our export count).
ENGINE_START = """
import sys
from foundry.runtime.engine import Engine
from foundry.store import Store
with Store.open(sys.argv[1]) as store, Engine(store):
    pass
export = ("opentelemetry.sdk", "opentelemetry.exporter", "foundry.telemetry.export")
print(" ".join(sorted(name for name in sys.modules if name.startswith(export))))
"""


def _subscribers(bus: EventBus) -> int:
    return len(bus._subscribers)


def test_without_an_endpoint_nothing_follows_the_events(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ENDPOINTS:
        monkeypatch.delenv(name, raising=False)
    bus = EventBus()
    with Store.open(f"sqlite:///{tmp_path / 'x.sqlite3'}") as store:
        assert live_export(store, bus.subscribe) is None
    assert _subscribers(bus) == 0


def test_an_engine_started_with_an_endpoint_sends_its_turns_before_it_stops(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, receiver: Receiver
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url)
    with (
        Store.open(f"sqlite:///{tmp_path / 'live.sqlite3'}") as store,
        Engine(store) as engine,
    ):
        session_id = supervised_chat(engine, tmp_path / "clock")
    # stopping the engine sent the last batch: every span is there, none left behind
    names = sorted(span.name for span in receiver.spans())
    with Store.open(f"sqlite:///{tmp_path / 'live.sqlite3'}") as store:
        assert names == sorted(span.name for span in spans_of(store, session_id))
    assert {path for path, _ in receiver.requests} == {"/v1/traces"}
    assert "invoke_agent clock" in names and len(names) == 12


@pytest.mark.parametrize("variable", ENDPOINTS)
def test_either_endpoint_variable_turns_it_on_and_closing_unsubscribes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    for name in ENDPOINTS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(variable, "http://127.0.0.1:9/v1/traces")
    bus = EventBus()
    with Store.open(f"sqlite:///{tmp_path / 'x.sqlite3'}") as store:
        live = live_export(store, bus.subscribe)
        assert isinstance(live, LiveExport) and _subscribers(bus) == 1
        live.close()  # nothing was made, so nothing is sent to the port nobody listens on
    assert _subscribers(bus) == 0


def _modules_an_engine_start_imports(tmp_path: Path, endpoint: str | None) -> set[str]:
    env = {name: value for name, value in os.environ.items() if not name.startswith("OTEL_")}
    if endpoint:
        env["OTEL_EXPORTER_OTLP_ENDPOINT"] = endpoint
    url = f"sqlite:///{tmp_path / 'start.sqlite3'}"
    started = subprocess.run(
        [sys.executable, "-c", ENGINE_START, url],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert started.returncode == 0, started.stderr
    return set(started.stdout.split())


def test_an_engine_started_without_an_endpoint_does_not_import_the_sdk(tmp_path: Path) -> None:
    assert _modules_an_engine_start_imports(tmp_path, None) == set()


def test_an_engine_started_with_an_endpoint_imports_the_sdk_and_exporter(tmp_path: Path) -> None:
    imported = _modules_an_engine_start_imports(tmp_path, "http://127.0.0.1:9")
    assert {"foundry.telemetry.export", "opentelemetry.sdk.trace"} <= imported
    assert "opentelemetry.exporter.otlp.proto.http.trace_exporter" in imported
