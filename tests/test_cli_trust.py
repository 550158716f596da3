"""Consent on the command line: nothing an agent names runs until its commands are trusted."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
import yaml

from foundry.cli import main
from foundry.cli import trust as cli_trust
from foundry.runtime.engine import Engine
from foundry.store import Store
from tests.runtime.conftest import TIME_SERVER, write_agent

REPLY = {"turns": [{"text": "Hello."}]}


def marker_agent(root: Path, marker: Path) -> Path:
    """An agent whose one 'server' only proves it ran, by writing `marker`."""
    server = {"type": "stdio", "command": "python", "args": ["-c", f"open({str(marker)!r}, 'w')"]}
    return write_agent(root, REPLY, servers={"mark": server}, trusted=False)


def test_run_refuses_an_untrusted_agent_and_runs_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    marker = tmp_path / "agent" / "ran"  # its server may write in its workspace only
    agent = marker_agent(tmp_path / "agent", marker)
    assert main(["run", str(agent), "-m", "hi"]) == 2
    error = capsys.readouterr().err
    assert "not trusted" in error and "mark: python -c" in error and "foundry trust" in error
    assert not marker.exists()


def test_trust_flag_runs_it_once_without_remembering(tmp_path: Path) -> None:
    marker = tmp_path / "agent" / "ran"  # its server may write in its workspace only
    agent = marker_agent(tmp_path / "agent", marker)
    assert main(["run", "--trust", str(agent), "-m", "hi"]) == 0
    assert marker.exists()
    marker.unlink()
    assert main(["run", str(agent), "-m", "hi"]) == 2
    assert not marker.exists()


def test_trust_command_remembers_and_revoke_forgets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    marker = tmp_path / "agent" / "ran"  # its server may write in its workspace only
    agent = marker_agent(tmp_path / "agent", marker)
    assert main(["trust", str(agent)]) == 2  # no terminal to ask on, and no --yes
    assert main(["trust", "--yes", str(agent)]) == 0
    assert main(["trust", "--list"]) == 0
    assert "mark: python -c" in capsys.readouterr().out
    assert main(["run", str(agent), "-m", "hi"]) == 0 and marker.exists()
    marker.unlink()
    assert main(["trust", "--revoke", str(agent)]) == 0
    assert main(["run", str(agent), "-m", "hi"]) == 2 and not marker.exists()


@pytest.mark.parametrize(("answer", "code"), [("y\n", 0), ("n\n", 2), ("\n", 2)])
def test_a_terminal_is_asked_yes_or_no(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, answer: str, code: int
) -> None:
    marker = tmp_path / "agent" / "ran"  # its server may write in its workspace only
    agent = marker_agent(tmp_path / "agent", marker)
    monkeypatch.setattr(cli_trust, "_interactive", lambda: True)
    monkeypatch.setattr(sys, "stdin", io.StringIO(answer))
    assert main(["run", str(agent), "-m", "hi"]) == code
    assert marker.exists() == (code == 0)


def test_validate_and_convert_never_run_anything(tmp_path: Path) -> None:
    marker = tmp_path / "agent" / "ran"  # its server may write in its workspace only
    agent = marker_agent(tmp_path / "agent", marker)
    assert main(["validate", str(agent)]) == 0
    assert main(["convert", str(agent), str(tmp_path / "copy.yaml")]) == 0
    assert main(["validate", str(tmp_path / "copy.yaml")]) == 0
    assert not marker.exists()


def test_task_run_refuses_a_task_whose_agent_is_untrusted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    marker = tmp_path / "agent" / "ran"  # its server may write in its workspace only
    marker_agent(tmp_path / "agents" / "coder", marker)
    task = tmp_path / "task.yaml"
    spec = {"name": "t", "goal": "Say hello.", "criteria": ["says hello"]}
    task.write_text(yaml.safe_dump({**spec, "operators": ["agents/coder"]}))
    assert main(["task", "run", str(task)]) == 2
    assert "not trusted" in capsys.readouterr().err and not marker.exists()


def test_chat_session_reopening_asks_for_the_agent_it_was_started_with(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "agent" / "ran"  # its server may write in its workspace only
    agent = marker_agent(tmp_path / "agent", marker)
    assert main(["run", "--trust", str(agent), "-m", "hi", "--json"]) == 0
    marker.unlink()
    with Store.open() as store:
        [session] = store.sessions.list()
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    assert main(["chat", "--session", session.id]) == 2
    assert not marker.exists()


def test_the_engine_refuses_before_recording_anything(tmp_path: Path) -> None:
    marker = tmp_path / "agent" / "ran"  # its server may write in its workspace only
    agent = marker_agent(tmp_path / "agent", marker)
    store = Store.open(f"sqlite:///{tmp_path / 'db.sqlite3'}")
    with Engine(store) as engine, pytest.raises(LookupError, match="not trusted"):
        engine.submit(engine.open_session(agent)).result()
    assert not store.sessions.list() and not marker.exists()
    store.close()


def test_the_engine_holds_untrusted_servers_until_trusted(tmp_path: Path) -> None:
    agent = write_agent(tmp_path / "agent", REPLY, servers={"time": TIME_SERVER}, trusted=False)
    store = Store.open(f"sqlite:///{tmp_path / 'db.sqlite3'}")
    with Engine(store) as engine:
        session_id = engine.submit(engine.open_session(agent, hold_untrusted=True)).result()
        host = engine._live(session_id).host
        assert host.held == ["time"] and not host.tools()
        [status] = host.statuses()
        assert status.state == "stopped" and "not trusted" in (status.error or "")
        engine.submit(host.restart("time")).result(60)  # a restart is no way around it
        assert host.held == ["time"] and not host.tools()
        engine.submit(engine.start_held_servers(session_id, trust=True)).result(60)
        assert [tool.name for tool in host.tools()][:1] == ["time.get_current_time"]
        assert engine.submit(engine.trust_check(session_id)).result().trusted
    store.close()
