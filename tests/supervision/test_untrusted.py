"""The rule of two as a source of concerns: which results taint a session (and which do not),
what it then holds and what it says, and that the taint is rebuilt from the session's events."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from foundry.llm.base import ChatMessage, ToolCall
from foundry.session.events import (
    EventBody,
    MessageAdded,
    ToolCallDecided,
    ToolCallFinished,
    ToolConcernRaised,
)
from foundry.supervision.outward import ToolFacts
from foundry.supervision.untrusted import FLAGGED_RESULT, UntrustedContent

KINDS = {"fetch": "fetch", "files": "filesystem", "slack": "slack", "workspace": None}
AT = datetime(2026, 12, 2, 10, 42, tzinfo=UTC)


def facts_of(name: str) -> ToolFacts:
    server, _, tool = name.partition(".")
    return ToolFacts(name=name, tool=tool, kind=KINDS.get(server), own=server == "workspace")


def source() -> UntrustedContent:
    return UntrustedContent(facts_of, clock=lambda: AT)


def ran(call_id: str, name: str, allowed: bool = True, **arguments: Any) -> list[EventBody]:
    call = ToolCall(id=call_id, name=name, arguments=arguments)
    return [
        ToolCallDecided(call=call, allowed=allowed, by="policy:x"),
        ToolCallFinished(
            call_id=call_id, name=name, text="...", is_error=not allowed, duration_s=0.0
        ),
    ]


def post(text: str = "hi") -> ToolCall:
    return ToolCall(id="p", name="slack.slack_post_message", arguments={"text": text})


def followed(*bodies: EventBody) -> UntrustedContent:
    untrusted = source()
    for body in bodies:
        untrusted.apply(body)
    return untrusted


def test_an_open_world_result_holds_a_post_saying_whose_result_and_when() -> None:
    untrusted = followed(*ran("c1", "fetch.fetch", url="https://example.com/"))
    [concern] = untrusted.concerns(post())
    assert concern.kind == "untrusted-content"
    assert concern.reason.startswith("the session read untrusted content from fetch.fetch at 10:42")
    assert "this call sends data out: its name says it acts outside ('post')" in concern.reason
    assert concern.detail["result"]["call_id"] == "c1"


def test_local_results_a_denied_call_and_foundrys_own_tools_taint_nothing() -> None:
    untrusted = followed(
        *ran("c1", "files.read_file", path="a.md"),
        *ran("c2", "fetch.fetch", allowed=False, url="https://example.com/"),
        *ran("c3", "workspace.read_file", path="a.md"),
    )
    assert untrusted.concerns(post()) == ()


def test_a_flagged_local_result_taints_and_is_the_one_named() -> None:
    flagged = ToolConcernRaised(
        tool="files.read_file", concern=FLAGGED_RESULT, reason="reads like one", call_id="c2"
    )
    untrusted = followed(*ran("c1", "fetch.fetch"), *ran("c2", "files.read_file"), flagged)
    [concern] = untrusted.concerns(post())
    assert "from files.read_file at 10:42 (and 1 more result)" in concern.reason
    assert [taint["tool"] for taint in concern.detail["results"]] == [
        "fetch.fetch",
        "files.read_file",
    ]


def test_routine_calls_after_a_taint_are_not_held() -> None:
    untrusted = followed(*ran("c1", "fetch.fetch"))
    read = ToolCall(id="r", name="files.read_file", arguments={"path": "a.md"})
    page = ToolCall(id="f", name="fetch.fetch", arguments={"url": "https://example.com/docs"})
    history = ToolCall(id="h", name="slack.slack_get_channel_history", arguments={})
    assert [untrusted.concerns(call) for call in (read, page, history)] == [(), (), ()]


def test_a_user_message_clears_the_taint() -> None:
    user = MessageAdded(message=ChatMessage(role="user", content="thanks, now post it"))
    assert followed(*ran("c1", "fetch.fetch"), user).concerns(post()) == ()


def test_a_person_approving_a_held_call_leaves_the_session_tainted() -> None:
    untrusted = followed(*ran("c1", "fetch.fetch"))
    held = untrusted.concerns(post())
    untrusted.accepted(post(), held)
    assert untrusted.concerns(post("again")) != ()


def test_the_taint_is_rebuilt_from_the_events_of_an_interrupted_turn() -> None:
    """A chat resumed after a crash replays its log: the turn's fetch taints it again."""
    log = [MessageAdded(message=ChatMessage(role="user", content="go")), *ran("c1", "fetch.fetch")]
    assert followed(*log).concerns(post()) != ()


def chose(*calls: ToolCall) -> MessageAdded:
    """The model's message choosing `calls` (one round of a chat)."""
    return MessageAdded(message=ChatMessage(role="assistant", tool_calls=calls))


def test_a_call_chosen_with_the_tainting_one_is_not_held_and_the_next_round_is() -> None:
    """The model chose the fetch and the post together, before it read the page: the page
    cannot have steered the post (so a chat resumed between the two asks no one). A post it
    chooses after reading the page asks."""
    fetch = ToolCall(id="c1", name="fetch.fetch", arguments={"url": "https://example.com/"})
    user = MessageAdded(message=ChatMessage(role="user", content="go"))
    untrusted = followed(user, chose(fetch, post()), *ran("c1", "fetch.fetch"))
    assert untrusted.concerns(post()) == ()
    untrusted.apply(chose(post()))  # the next round: the model has read the page
    assert [concern.kind for concern in untrusted.concerns(post())] == ["untrusted-content"]


def test_a_reused_call_id_in_a_later_round_is_still_held() -> None:
    fetch = ToolCall(id="c1", name="fetch.fetch", arguments={"url": "https://example.com/"})
    later = ToolCall(id="c1", name="slack.slack_post_message", arguments={"text": "x"})
    untrusted = followed(chose(fetch), *ran("c1", "fetch.fetch"), chose(later))
    assert untrusted.concerns(later) != ()
