"""A `foundry run` killed by SIGKILL at many points of a turn loses no event and resumes."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from foundry.runtime.engine import Engine
from foundry.session.events import MessageAdded, TurnFinished, UnknownEvent, event_body
from foundry.store import Store

from ..killing import count, database_of, run_and_kill
from .conftest import write_agent

KILL_POINTS = list(range(2, 66, 3))  # 22 points spread over the whole turn (about 70 events)
FINAL_REPLY = (
    "It is evening in Tokyo (Asia/Tokyo), nine hours ahead of UTC, and the city is busy: "
    "trains are full, restaurants are opening their doors and the lights are coming on."
)
TURNS = {
    "delay_s": 0.01,
    "turns": [
        {
            "text": "Let me look at a clock for Tokyo before I answer you properly, because "
            "guessing the time in another city is a mistake I would rather not make today. ",
            "tool_calls": [
                {"name": "time.get_current_time", "arguments": {"timezone": "Asia/Tokyo"}}
            ],
        },
        {"text": FINAL_REPLY},
    ],
}


def last_seq(database: Path) -> int:
    return count(database, "SELECT max(seq) FROM events")


@pytest.mark.parametrize("kill_at", KILL_POINTS)
def test_kill_at_any_point_loses_nothing_and_resumes(tmp_path: Path, kill_at: int) -> None:
    agent = write_agent(tmp_path / "agent", TURNS)
    home = tmp_path / "home"
    argv = ["run", str(agent), "-m", "Time in Tokyo?"]
    killed = run_and_kill(argv, home, lambda database: last_seq(database) >= kill_at)
    assert killed == -signal.SIGKILL, "the run ended before the kill"

    store = Store.open(f"sqlite:///{database_of(home)}")
    [session] = store.sessions.list()
    persisted = store.events.list(session.id)
    assert [e.seq for e in persisted] == list(range(1, len(persisted) + 1))
    bodies = [event_body(e.kind, e.payload) for e in persisted]
    assert not any(isinstance(body, UnknownEvent) for body in bodies)
    messages = [body.message for body in bodies if isinstance(body, MessageAdded)]
    assert [m.content for m in store.messages.list(session.id)] == [m.content for m in messages]

    with Engine(store) as engine:
        chat = engine.submit(engine.reopen_session(session.id)).result(30)
        if chat.messages:
            result = engine.submit(engine.resume(session.id)).result(60)
        else:  # killed before the user's message was stored: the turn never began
            result = engine.submit(engine.send(session.id, "Time in Tokyo?")).result(60)
        after = engine.submit(engine.events(session.id)).result()
    assert result.reply == FINAL_REPLY
    assert [(e.seq, e.kind, e.payload) for e in persisted] == [
        (e.seq, e.kind, e.payload) for e in store.events.list(session.id)[: len(persisted)]
    ]
    assert [e.seq for e in after] == list(range(1, len(after) + 1))
    finished = [e.body for e in after if isinstance(e.body, TurnFinished)]
    assert finished[-1].reply == FINAL_REPLY
    store.close()
