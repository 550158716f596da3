"""`foundry sessions export ID --otlp`: a recorded session's spans POSTed to a real OTLP/HTTP
receiver on loopback (decoded with opentelemetry-proto's classes), and a clear error naming the
endpoint when nothing listens there."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from foundry.cli import main
from foundry.store import Store
from tests.runtime.conftest import write_agent

from .conftest import POLICY, UTC
from .receiver import Receiver

TURNS = {"turns": [{"tool_calls": [UTC]}, {"text": "It is noon in UTC."}]}


@pytest.fixture
def recorded(tmp_path: Path) -> str:
    """A supervised run recorded by `foundry run` in the test's Foundry home; its session id."""
    agent = write_agent(tmp_path / "clock", TURNS, supervisors=[POLICY])
    assert main(["run", str(agent), "-m", "time?", "--json"]) == 0
    with Store.open() as store:
        [session] = store.sessions.list()
    return session.id


def test_the_spans_reach_the_endpoint_the_environment_names(
    recorded: str,
    receiver: Receiver,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-team=clocks")
    capsys.readouterr()
    assert main(["sessions", "export", recorded, "--otlp"]) == 0

    [(path, request)] = receiver.requests
    assert path == "/v1/traces"
    assert receiver.headers[0]["x-team"] == "clocks"  # the SDK read the headers it is given
    [resource_spans] = request.resource_spans
    service = {a.key: a.value.string_value for a in resource_spans.resource.attributes}
    assert service["service.name"] == "foundry"
    spans = [span for scope in resource_spans.scope_spans for span in scope.spans]
    names = sorted(span.name for span in spans)
    assert names == [
        "chat turns.json",
        "chat turns.json",
        "execute_tool time.get_current_time",
        "invoke_agent clock",
        "run_guardrail tool_call policy:time-is-fine",
    ]
    [decision] = [span for span in spans if span.name.startswith("run_guardrail")]
    shown = {a.key: a.value.string_value for a in decision.attributes}
    assert shown["gen_ai.security.verdict.type"] == "allow"
    assert shown["gen_ai.conversation.id"] == recorded
    out = capsys.readouterr().out
    assert out == f"exported 5 spans of {recorded} to {receiver.url}/v1/traces\n"


def test_an_unreachable_endpoint_is_named_in_one_line_and_fails_the_command(
    recorded: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as probe:  # a loopback port nothing listens on once it is closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    endpoint = f"http://127.0.0.1:{port}/v1/traces"
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", endpoint)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "2")
    capsys.readouterr()
    assert main(["sessions", "export", recorded, "--otlp"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    [line] = captured.err.splitlines()
    assert line.startswith(f"foundry: the OTLP endpoint {endpoint} did not take the 5 spans")


def test_an_unknown_session_is_said_so(
    receiver: Receiver, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url)
    assert main(["sessions", "export", "nope", "--otlp"]) == 1
    assert "no session or task with id 'nope'" in capsys.readouterr().err
    assert receiver.requests == []
