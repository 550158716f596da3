"""Resolving approvals and tracing decisions: who a resolver is, which level counts the decision,
and that every trace keeps only the redacted form of a call's parameters."""

from __future__ import annotations

import ast
import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import pytest

from foundry.agent.models import PolicyConfig
from foundry.cli.supervision import cli_user
from foundry.llm.base import ToolCall
from foundry.metrics.series import resolution_level
from foundry.session.events import EventBody
from foundry.session.gate import GateDecision
from foundry.store import ApprovalRecord, Store, TraceRecord
from foundry.supervision.hierarchy import SupervisedGate
from foundry.supervision.inbox import HumanInbox
from foundry.supervision.resolution import api_resolver, human_resolver, resolve_approval

FOUNDRY = Path(__file__).resolve().parents[2] / "foundry"
SECRET = "card 4111 1111 1111 1111, PIN 2468; tell no one"
# What the engine puts in the inbox when a message supervisor asks for a human review
# (runtime/engine.py, _human_review): the message itself is the parameters' content.
REVIEW = ToolCall(
    id="review-request",
    name="supervision.review_request",
    arguments={"content": SECRET, "reason": "the guardian saw a card number"},
)
RESERVED_NAMES = ["agent:supervisor", "timeout", "human:gui:ana", "policy:reads", "grant:g_1"]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(f"sqlite:///{tmp_path / 'resolution.sqlite3'}") as opened:
        yield opened


async def ignore(body: EventBody) -> None:
    return None


def approval(store: Store, params: dict[str, Any] | None = None) -> ApprovalRecord:
    return store.approvals.create(
        ApprovalRecord(
            agent_id="claude", tool="mail.send", params=params or {"to": "x@example.com"}
        )
    )


def assert_redacted(trace: TraceRecord) -> None:
    content = trace.params["content"]
    assert isinstance(content, dict), f"the trace holds the content itself: {content!r}"
    assert content["content_length"] == len(SECRET.encode())
    assert len(content["content_sha256"]) == 64
    assert SECRET not in json.dumps(trace.params)


# -- who resolves ---------------------------------------------------------------------------------


def test_a_human_resolver_names_the_channel_and_the_login(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("getpass.getuser", lambda: "ana")
    assert human_resolver("gui") == "human:gui:ana"
    assert cli_user() == "human:cli:ana"


@pytest.mark.parametrize("error", [KeyError("uid"), OSError("no login")])
def test_without_a_login_name_the_resolver_is_unknown(
    monkeypatch: pytest.MonkeyPatch, error: Exception
) -> None:
    def no_login() -> str:
        raise error

    monkeypatch.setattr("getpass.getuser", no_login)
    assert human_resolver("gui") == "human:gui:unknown"


@pytest.mark.parametrize("claimed", RESERVED_NAMES)
def test_an_api_client_cannot_take_a_name_that_counts_as_another_level(claimed: str) -> None:
    resolver = api_resolver(claimed, "http:127.0.0.1")

    assert resolver == f"api:{claimed}"
    assert resolution_level(resolver) == "human"  # how the dashboards count it


@pytest.mark.parametrize(
    ("claimed", "recorded"),
    [
        (None, "api:http:127.0.0.1"),
        ("", "api:http:127.0.0.1"),
        (" \t\n\x1b ", "api:http:127.0.0.1"),
        ("ana\n2026-01-01 approved by root", "ana2026-01-01 approved by root"),
        ("\x1b[31mana\x1b[0m", "[31mana[0m"),
        ("ana\u202e\u200b\u2028", "ana"),
        ("agent7 supervisor", "agent7 supervisor"),
    ],
)
def test_a_claimed_name_keeps_only_printable_characters(claimed: str | None, recorded: str) -> None:
    expected = recorded if recorded.startswith("api:") else f"api:{recorded}"
    assert api_resolver(claimed, "http:127.0.0.1") == expected


def test_a_claimed_name_is_bounded() -> None:
    assert api_resolver("x" * 5000, "http:127.0.0.1") == "api:" + "x" * 200


def test_the_level_of_a_resolution_comes_from_the_caller_not_the_name(store: Store) -> None:
    first, second = approval(store), approval(store)

    resolve_approval(store, first.id, "approved", "agent:supervisor", "looks fine")
    resolve_approval(store, second.id, "denied", "human:cli:ana", level="human")

    levels = {trace.approval_id: trace.resolved_level for trace in store.traces.list()}
    assert levels == {first.id: "human", second.id: "human"}


# -- every trace redacted -------------------------------------------------------------------------


@pytest.mark.parametrize("outcome", ["deny", "allow"])
async def test_a_timed_out_approval_is_traced_without_its_content(
    store: Store, outcome: Literal["allow", "deny"]
) -> None:
    inbox = HumanInbox(store, "claude", "s1", ignore, timeout_s=0.05, on_timeout=outcome)

    decision = await inbox.decide(REVIEW, level="supervisor", reason="card number")

    assert decision.allowed is (outcome == "allow")
    [trace] = store.traces.list("claude")
    assert (trace.resolved_level, trace.resolved_by, trace.decision) == (
        "timeout",
        "timeout",
        outcome,
    )
    assert (trace.session_id, trace.tool) == ("s1", "supervision.review_request")
    assert trace.params["reason"] == "the guardian saw a card number"
    assert_redacted(trace)


async def test_an_answer_at_the_terminal_is_traced_like_any_resolution(store: Store) -> None:
    async def person_here(call: ToolCall) -> GateDecision:
        return GateDecision(allowed=True, by="human:terminal", reason="my own card")

    inbox = HumanInbox(store, "claude", "s1", ignore, timeout_s=30, ask=person_here)

    decision = await inbox.decide(REVIEW, level="supervisor", reason="card number")

    assert (decision.allowed, decision.by) == (True, "human:terminal")
    [trace] = store.traces.list("claude")
    assert (trace.resolved_level, trace.resolved_by, trace.decision) == (
        "human",
        "human:terminal",
        "allow",
    )
    assert trace.approval_id == store.approvals.list()[0].id
    assert_redacted(trace)


async def test_a_resolution_traces_the_edited_params_redacted(store: Store) -> None:
    pending = approval(store, {"to": "x@example.com", "body": "hi"})

    resolve_approval(
        store, pending.id, "approved", "human:gui:ana", params={"to": "x", "body": SECRET}
    )

    [trace] = store.traces.list()
    assert trace.params["to"] == "x"
    assert trace.params["body"]["content_length"] == len(SECRET.encode())
    assert SECRET not in json.dumps(trace.params)


async def test_the_gate_traces_redacted_params_even_when_content_is_exposed(
    store: Store, tmp_path: Path
) -> None:
    config = PolicyConfig.model_validate(
        {"rules": [{"name": "mail", "tool": "mail.*", "action": "allow"}], "loopDetection": False}
    )
    gate = SupervisedGate(store, config, "claude", "s1", tmp_path, ignore, expose_content=True)

    await gate.review(ToolCall(id="c1", name="mail.send", arguments={"content": SECRET}), True)

    [trace] = store.traces.list("claude")
    assert_redacted(trace)


def test_traces_are_built_in_one_place() -> None:
    builders = {
        path.relative_to(FOUNDRY).as_posix()
        for path in FOUNDRY.rglob("*.py")
        if "store" not in path.parts and _builds(path, "TraceRecord")
    }
    assert builders == {"supervision/tracing.py"}


def _builds(path: Path, name: str) -> bool:
    """Whether the file makes a `name` record, or a row of its table."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return any(
        (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name)
        or (
            isinstance(node, ast.Attribute)
            and node.attr == "__table__"
            and isinstance(node.value, ast.Name)
            and node.value.id == name
        )
        for node in ast.walk(tree)
    )


async def test_a_late_timeout_loses_to_the_resolver_that_came_first(store: Store) -> None:
    inbox = HumanInbox(store, "claude", "s1", ignore, timeout_s=0.2, poll_s=0.05)
    waiting = asyncio.create_task(inbox.decide(REVIEW, level="supervisor", reason="card"))
    while not store.approvals.list("pending"):
        await asyncio.sleep(0.01)
    resolve_approval(store, store.approvals.list("pending")[0].id, "denied", "human:gui:ana")

    decision = await waiting

    assert (decision.allowed, decision.by) == (False, "human:gui:ana")
    assert [t.resolved_level for t in store.traces.list("claude")] == ["human"]
