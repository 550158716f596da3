"""A supervised chat recorded on a real engine (scripted model, the real time server, a policy):
one call the policy allows, one it denies, one a person approves in the inbox."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan

from foundry.runtime.engine import Engine
from foundry.store import Store
from foundry.supervision.resolution import resolve_approval
from foundry.telemetry.builder import CAPTURE_CONTENT
from tests.runtime.conftest import write_agent

from .receiver import Receiver, receiving

TOKYO = {"name": "time.get_current_time", "arguments": {"timezone": "Asia/Tokyo"}}
UTC = {"name": "time.get_current_time", "arguments": {"timezone": "UTC"}}
CONVERT = {
    "name": "time.convert_time",
    "arguments": {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"},
}
POLICY = {
    "type": "policy",
    "id": "tool-policy",
    "config": {
        "rules": [
            {
                "name": "tokyo-asks",
                "tool": "time.get_current_time",
                "when": {"all": [{"param": "timezone", "op": "==", "value": "Asia/Tokyo"}]},
                "action": "human",
            },
            {"name": "time-is-fine", "tool": "time.get_current_time", "action": "allow"},
            {"name": "no-conversions", "tool": "time.convert_time", "action": "deny"},
        ],
        "loopDetection": False,
    },
}
SUPERVISED_TURNS = {
    "turns": [
        {"text": "Checking. ", "tool_calls": [UTC]},
        {"tool_calls": [CONVERT]},
        {"tool_calls": [TOKYO]},
        {"text": "It is noon in UTC and evening in Tokyo."},
    ]
}


@dataclass
class Recorded:
    session_id: str
    store: Store


@pytest.fixture(autouse=True)
def content_captured(monkeypatch: pytest.MonkeyPatch) -> None:
    """Messages, results and whole arguments exported, as the user opts in to: what these
    tests look at (test_content_left_out.py checks the default, which leaves them out)."""
    monkeypatch.setenv(CAPTURE_CONTENT, "true")


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    store = Store.open(f"sqlite:///{tmp_path / 'telemetry.sqlite3'}")
    with Engine(store, retry_delays_s=(0.05,)) as started:
        yield started
    store.close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    """A real OTLP/HTTP endpoint on loopback (receiver.py)."""
    with receiving() as server:
        yield server


def approve_when_asked(store: Store, by: str = "human:inbox:ana") -> threading.Thread:
    """A person who approves the first call that reaches the inbox."""

    def approve() -> None:
        deadline = time.monotonic() + 30
        while not (pending := store.approvals.list(status="pending")):
            if time.monotonic() > deadline:
                return
            time.sleep(0.02)
        resolve_approval(store, pending[0].id, "approved", by, "Tokyo is fine")

    person = threading.Thread(target=approve)
    person.start()
    return person


def supervised_chat(engine: Engine, root: Path, turns: dict[str, Any] | None = None) -> str:
    """The chat of the module's docstring, recorded; its session id."""
    agent = write_agent(root, turns or SUPERVISED_TURNS, supervisors=[POLICY])
    session_id = engine.submit(engine.open_session(agent)).result(30)
    person = approve_when_asked(engine.store)
    try:
        engine.submit(engine.send(session_id, "What time is it in UTC and Tokyo?")).result(60)
    finally:
        person.join()
    return session_id


def named(spans: list[ReadableSpan], name: str) -> list[ReadableSpan]:
    return [span for span in spans if span.name == name]


def attributes(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def children(spans: list[ReadableSpan], parent: ReadableSpan) -> list[ReadableSpan]:
    assert parent.context is not None
    return [s for s in spans if s.parent is not None and s.parent.span_id == parent.context.span_id]
