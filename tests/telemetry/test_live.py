"""Live export is on only when the environment names an OTLP endpoint: otherwise nothing follows
the engine's events and nothing is sent anywhere."""

from __future__ import annotations

from pathlib import Path

import pytest

from foundry.runtime.bus import EventBus
from foundry.store import Store
from foundry.telemetry.live import LiveExport, live_export

ENDPOINTS = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")


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
