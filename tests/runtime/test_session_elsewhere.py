"""A session whose turn another process is running is followed, never resumed twice: the turn
is claimed in the store, another engine on the same database follows its events, and a turn
whose process stopped can be taken over."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from foundry.runtime.engine import TURN_STALE_S, Engine, SessionRunningElsewhere
from foundry.runtime.runners import new_runner, runner_stopped, this_host
from foundry.session.events import Event, MessageAdded, TokenDelta, TurnFinished
from foundry.store import Store

from .conftest import write_agent

WORDS = " ".join(f"word{n}" for n in range(40))


def stored_replies(store: Store, session_id: str) -> list[str]:
    return [m.content for m in store.messages.list(session_id) if m.role == "assistant"]


def wait_for_a_token(engine: Engine, session_id: str) -> list[Event]:
    """The session's events once the other engine has stored a token of its reply."""
    for _ in range(400):
        history = engine.submit(engine.events(session_id)).result()
        if any(isinstance(event.body, TokenDelta) for event in history):
            return history
        time.sleep(0.05)
    raise AssertionError("the first engine never streamed a token")


def test_a_turn_running_in_another_process_is_followed_never_resumed_twice(
    tmp_path: Path,
) -> None:
    agent = write_agent(tmp_path / "slow", {"delay_s": 0.05, "turns": [{"text": WORDS}]}, {})
    database = f"sqlite:///{tmp_path / 'store.sqlite3'}"
    with (
        Store.open(database) as first_store,
        Store.open(database) as second_store,
        Engine(first_store) as first,
        Engine(second_store) as second,
    ):
        session_id = first.submit(first.open_session(agent)).result()
        running = first.submit(first.send(session_id, "Write forty words."))
        history = wait_for_a_token(second, session_id)
        chat = second.submit(second.reopen_session(session_id, history=history)).result()
        assert chat.needs_resume  # the user's message is stored, the reply is not yet
        assert second.submit(second.running_elsewhere(session_id)).result()
        assert not first.submit(first.running_elsewhere(session_id)).result()
        with pytest.raises(SessionRunningElsewhere, match="another Foundry process"):
            second.submit(second.resume(session_id)).result()
        with pytest.raises(SessionRunningElsewhere):
            second.submit(second.send(session_id, "And again.")).result()
        seen: list[Event] = []
        second.bus.subscribe(lambda event: seen.append(event))
        second.submit(second.follow(session_id, history[-1].seq)).result(60)
        result = running.result(60)
        assert result.reply == WORDS and not chat.needs_resume
        assert chat.messages == first.session(session_id).messages
        assert [e.body.kind for e in seen if isinstance(e.body, MessageAdded | TurnFinished)] == [
            "message",
            "turn_finished",
        ]
        assert stored_replies(second.store, session_id) == [WORDS]  # once
        assert not second.submit(second.running_elsewhere(session_id)).result()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(f"sqlite:///{tmp_path / 'store.sqlite3'}") as opened:
        yield opened


def test_a_turn_claim_has_one_winner_and_a_stopped_runner_can_be_taken_over(
    store: Store,
) -> None:
    session_id = store.sessions.create("agent").id
    assert store.sessions.claim_turn(session_id, "a", TURN_STALE_S) is None
    assert store.sessions.claim_turn(session_id, "a", TURN_STALE_S) is None  # its own, again
    assert store.sessions.claim_turn(session_id, "b", TURN_STALE_S) == "a"
    store.sessions.release_turn(session_id, "b")  # not b's to release
    assert store.sessions.runner_of(store.sessions.get(session_id), TURN_STALE_S) == "a"
    assert store.sessions.claim_turn(session_id, "b", stale_after_s=0.0) is None  # a stopped
    store.sessions.heartbeat(session_id, "a")  # a late heartbeat of a no longer counts
    assert store.sessions.runner_of(store.sessions.get(session_id), TURN_STALE_S) == "b"
    store.sessions.release_turn(session_id, "b")
    assert store.sessions.get(session_id).status == "active"
    assert store.sessions.runner_of(store.sessions.get(session_id), TURN_STALE_S) is None


def test_a_turn_whose_process_is_gone_is_taken_over_at_once(store: Store) -> None:
    finished = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    gone = f"{finished.stdout.strip()}.0000@{this_host()}"  # as a killed `foundry run` left it
    assert runner_stopped(gone) and not runner_stopped(new_runner())
    assert not runner_stopped(f"{finished.stdout.strip()}.0000@another-host")  # heartbeat only
    session_id = store.sessions.create("agent").id
    assert store.sessions.claim_turn(session_id, gone, TURN_STALE_S) is None
    assert store.sessions.claim_turn(session_id, "b", TURN_STALE_S) == gone
    assert store.sessions.claim_turn(session_id, "b", TURN_STALE_S, stopped="c") == gone
    assert store.sessions.claim_turn(session_id, "b", TURN_STALE_S, stopped=gone) is None
