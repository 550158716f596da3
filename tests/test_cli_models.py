"""`foundry models`: the servers found, and a capable model for the waiting supervisors."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from foundry.cli import main

from .llm.fakes import FakeOllama
from .runtime.test_model_offer import agent_with_waiting_architect


@pytest.fixture
def ollama(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOllama]:
    server = FakeOllama()  # lists llama3.2:1b and qwen3:0.6b
    server.start()
    monkeypatch.setenv("OLLAMA_HOST", server.url)
    yield server
    server.stop()


@pytest.fixture
def no_ollama(monkeypatch: pytest.MonkeyPatch) -> str:
    with socket.socket() as probe:  # a loopback port nothing listens on
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}"
    monkeypatch.setenv("OLLAMA_HOST", url)
    return url


def architect_settings(root: Path) -> dict[str, object]:
    config = json.loads((root / "architect" / "tsagent.json").read_text())
    return {"model": config["settings"].get("model"), "providers": config.get("providers")}


def test_find_lists_the_servers_models(
    ollama: FakeOllama, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["models", "find"]) == 0
    assert capsys.readouterr().out == f"Ollama at {ollama.url}: llama3.2:1b, qwen3:0.6b\n"


def test_find_says_what_to_do_when_nothing_answers(
    no_ollama: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["models", "find"]) == 1
    error = capsys.readouterr().err
    assert f"no model server answered (Ollama looked for at {no_ollama})" in error
    assert "ollama pull llama3.2" in error


def test_use_writes_the_found_model_to_the_waiting_supervisors(
    tmp_path: Path, ollama: FakeOllama, capsys: pytest.CaptureFixture[str]
) -> None:
    agent = agent_with_waiting_architect(tmp_path)
    assert main(["models", "use", str(agent)]) == 0
    assert capsys.readouterr().out.startswith(
        "Conversation architect: ollama:llama3.2:1b from the next session (written to "
    )
    assert architect_settings(tmp_path) == {
        "model": "ollama:llama3.2:1b",
        "providers": {"ollama": {"OLLAMA_HOST": ollama.url}},
    }
    assert main(["models", "use", str(agent)]) == 0  # nothing waits any more
    assert capsys.readouterr().out == f"{agent}: no supervisor waits for a capable model\n"


def test_use_writes_the_model_given_without_looking(
    tmp_path: Path, no_ollama: str, capsys: pytest.CaptureFixture[str]
) -> None:
    agent = agent_with_waiting_architect(tmp_path)
    assert main(["models", "use", str(agent), "ollama:qwen3:4b"]) == 0
    assert architect_settings(tmp_path) == {"model": "ollama:qwen3:4b", "providers": {"ollama": {}}}


def test_use_without_a_server_changes_nothing(
    tmp_path: Path, no_ollama: str, capsys: pytest.CaptureFixture[str]
) -> None:
    agent = agent_with_waiting_architect(tmp_path)
    assert main(["models", "use", str(agent)]) == 1
    assert "no model server answered" in capsys.readouterr().err
    assert architect_settings(tmp_path) == {"model": None, "providers": None}


def test_use_refuses_the_embedded_model_in_one_line(
    tmp_path: Path, no_ollama: str, capsys: pytest.CaptureFixture[str]
) -> None:
    agent = agent_with_waiting_architect(tmp_path)
    assert main(["models", "use", str(agent), "embedded:smollm2"]) != 0
    error = capsys.readouterr().err
    assert "small embedded model, not a capable one" in error and "Traceback" not in error
