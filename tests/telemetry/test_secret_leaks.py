"""Attacks on secrets through the exported spans: a password and a token in a tool's arguments, a
token echoed in its result, the value of the agent's `env://` reference given to the model, and a
private key in the streamed reply. None may reach an exported span (name, attributes, events,
status), sent live or from the store; what only looks like a secret stays readable."""

from __future__ import annotations

import json
from pathlib import Path

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from foundry.runtime.engine import Engine
from foundry.telemetry.export import spans_of
from foundry.telemetry.live import LiveExport
from tests.runtime.conftest import write_agent
from tests.supervision.test_secret_leaks import (
    ALLOW_ALL,
    DOTENV_SECRET,
    ECHO,
    KEY_BODY,
    PRIVATE_KEY,
    SERVER,
    TOKEN,
)

PASSWORD = "pw-9f8e7d"
LEAKS = {"token": TOKEN, "password": PASSWORD, "env:// value": DOTENV_SECRET, "key": KEY_BODY}


def _agent_with_secrets(root: Path) -> Path:
    """The model sends a token, a password and the agent's `.env` secret to a server that echoes
    them, reads the vault that answers with that secret, and replies with a private key."""
    say = {
        "name": "up.say",
        "arguments": {"text": f"deploy with {TOKEN} as {DOTENV_SECRET}", "password": PASSWORD},
    }
    turns = {
        "turns": [
            {"tool_calls": [say, {"name": "vault.read", "arguments": {}}]},
            {"text": f"Done. The deploy key: {PRIVATE_KEY}"},
        ]
    }
    defaults = {"permissionRequired": False}
    servers = {
        "up": {"command": "python", "args": [ECHO], "serverToolDefaults": defaults},
        "vault": {
            "command": "python",
            "args": [SERVER, "read", "env:API_TOKEN"],
            "env": {"API_TOKEN": "env://API_TOKEN"},
            "serverToolDefaults": defaults,
        },
    }
    root.mkdir(parents=True)
    (root / ".env").write_text(f"API_TOKEN={DOTENV_SECRET}\n")
    return write_agent(root, turns, servers=servers, supervisors=[ALLOW_ALL])


def _everything_of(spans: list[ReadableSpan]) -> str:
    """Every span as the SDK serialises it: name, attributes, events, status, resource."""
    return "\n".join(span.to_json() for span in spans)


def test_no_secret_reaches_an_exported_span(engine: Engine, tmp_path: Path) -> None:
    agent = _agent_with_secrets(tmp_path / "deployer")
    collected = InMemorySpanExporter()
    live = LiveExport(engine.store, engine.bus.subscribe, collected)
    try:
        session_id = engine.submit(engine.open_session(agent)).result(30)
        engine.submit(engine.send(session_id, "deploy")).result(60)
    finally:
        live.close()
    stored = json.dumps([event.payload for event in engine.store.events.list(session_id)])
    assert TOKEN in stored and DOTENV_SECRET in stored and PASSWORD in stored  # the attack is real

    for how, spans in (("live", collected.get_finished_spans()), ("past", None)):
        exported = _everything_of(list(spans or spans_of(engine.store, session_id)))
        assert "execute_tool up.say" in exported and "invoke_agent deployer" in exported, how
        for what, secret in LEAKS.items():
            assert secret not in exported, f"the {what} leaked in the {how} export"
        assert "deploy with" in exported and "Done. The deploy key" in exported, how  # kept
        assert "my secret is" in exported, how  # the vault's answer, its secret masked
