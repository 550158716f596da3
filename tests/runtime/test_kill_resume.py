"""A `foundry run` killed by SIGKILL at many points of a turn loses no event and resumes."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import pytest

from foundry.runtime.engine import Engine
from foundry.session.events import MessageAdded, TurnFinished, UnknownEvent, event_body
from foundry.store import Store

from ..killing import count, database_of, edited, run_and_kill
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
    argv = ["run", "--trust", str(agent), "-m", "Time in Tokyo?"]
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


# A stdio MCP server whose one tool appends its `tag` to a file: each line is one run.
COUNTING_SERVER = """
import sys
from pathlib import Path
from mcp.server.mcpserver import MCPServer

server = MCPServer("counting")
runs = Path(sys.argv[1])


@server.tool()
def touch(tag: str) -> str:
    with runs.open("a") as lines:
        lines.write(tag + "\\n")
    return "touched " + tag


server.run()
"""
TWO_CALLS = {
    "turns": [
        {
            "text": "Touching both.",
            "tool_calls": [
                {"id": "call_a", "name": "count.touch", "arguments": {"tag": "call_a"}},
                {"id": "call_b", "name": "count.touch", "arguments": {"tag": "call_b"}},
            ],
        },
        {"text": "Both touched."},
    ]
}
TWO_CALLS_EVENTS = 22  # the events of the turn (23 with the server stop): a kill after each


def counting_agent(root: Path) -> tuple[Path, Path]:
    """An agent with the counting server; the file its runs are appended to."""
    root.mkdir(parents=True)
    (root / "counting_server.py").write_text(COUNTING_SERVER)
    (root / "runs").mkdir()
    runs = root / "runs" / "runs.txt"
    server = {
        "type": "stdio",
        "command": sys.executable,
        "args": [str(root / "counting_server.py"), str(runs)],
        "serverToolDefaults": {"permissionRequired": False, "include": "always"},
        "confinement": {"write": ["../runs"]},  # outside its workspace: declared, so trusted
    }
    return write_agent(root / "agent", TWO_CALLS, servers={"count": server}), runs


@pytest.mark.parametrize("kill_at", range(1, TWO_CALLS_EVENTS))
def test_kill_at_every_boundary_runs_each_tool_call_at_most_once(
    tmp_path: Path, kill_at: int
) -> None:
    agent, runs = counting_agent(tmp_path / "counting")
    home = tmp_path / "home"
    argv = ["run", "--trust", str(agent), "-m", "Touch both."]
    killed = run_and_kill(argv, home, lambda database: last_seq(database) >= kill_at)
    assert killed == -signal.SIGKILL, "the run ended before the kill"

    store = Store.open(f"sqlite:///{database_of(home)}")
    [session] = store.sessions.list()
    with Engine(store) as engine:
        chat = engine.submit(engine.reopen_session(session.id)).result(30)
        if chat.messages:
            result = engine.submit(engine.resume(session.id)).result(60)
        else:  # killed before the user's message was stored: the turn never began
            result = engine.submit(engine.send(session.id, "Touch both.")).result(60)
        messages = engine.submit(engine.reopen_session(session.id)).result(30).messages
    store.close()

    assert result.reply == "Both touched."
    lines = runs.read_text().split() if runs.exists() else []
    assert all(lines.count(tag) <= 1 for tag in ("call_a", "call_b")), lines
    answers = [m.tool_call_id for m in messages if m.role == "tool"]
    assert sorted(answers) == ["call_a", "call_b"]


def cut_log(database: Path, kind: str, nth: int) -> None:
    """The log as a kill right after the `nth` event of `kind` would leave it, whatever the
    group commits did (how many token events a reply made varies with the machine's load)."""
    with edited(database) as connection:
        seqs = connection.execute("SELECT seq FROM events WHERE kind = ? ORDER BY seq", (kind,))
        keep = [seq for (seq,) in seqs][nth - 1]
        kept = connection.execute(
            "SELECT count(*) FROM events WHERE seq <= ? AND kind = 'message'", (keep,)
        ).fetchone()[0]
        connection.execute("DELETE FROM events WHERE seq > ?", (keep,))
        connection.execute("DELETE FROM messages WHERE seq > ?", (kept,))


@pytest.mark.parametrize(
    ("cut_after", "expected"),
    [
        (("tool_call_decided", 2), ["interrupted", "interrupted"]),  # neither result stored
        (("tool_call_finished", 1), ["touched call_a", "interrupted"]),  # not call_a's message
    ],
)
def test_resume_uses_stored_results_and_reports_interrupted_calls(
    tmp_path: Path, cut_after: tuple[str, int], expected: list[str]
) -> None:
    agent, runs = counting_agent(tmp_path / "counting")
    home = tmp_path / "home"
    argv = ["run", "--trust", str(agent), "-m", "Touch both."]
    finished = run_and_kill(argv, home, lambda _: False)
    assert finished == 0
    cut_log(database_of(home), *cut_after)

    store = Store.open(f"sqlite:///{database_of(home)}")
    [session] = store.sessions.list()
    with Engine(store) as engine:
        chat = engine.submit(engine.reopen_session(session.id)).result(30)
        result = engine.submit(engine.resume(session.id)).result(60)
        tool_messages = [m.content for m in chat.messages if m.role == "tool"]
    store.close()

    assert result.reply == "Both touched."
    assert runs.read_text().split() == ["call_a", "call_b"]  # the first run's only
    said = ["interrupted" if "was interrupted" in text else text for text in tool_messages]
    assert said == expected
