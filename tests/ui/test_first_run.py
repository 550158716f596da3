"""The chat offers a capable model it finds to the supervisors waiting for one, in one step."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from foundry.ui.bridge import EngineBridge
from foundry.ui.first_run import ModelOfferController, offer_capable_model

from ..llm.fakes import FakeOllama
from ..runtime.test_model_offer import agent_with_waiting_architect
from .conftest import save_screenshot
from .test_session_window import open_window, rows, send

FOUND_S = 20_000  # ms: a hang guard for the offer to show, never a timing


@pytest.fixture
def ollama(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOllama]:
    """Ollama's HTTP API on loopback, where OLLAMA_HOST says it is; it lists llama3.2:1b and
    qwen3:0.6b."""
    server = FakeOllama()
    server.start()
    monkeypatch.setenv("OLLAMA_HOST", server.url)
    yield server
    server.stop()


@pytest.fixture
def settings(tmp_path: Path) -> QSettings:
    return QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)


def test_the_chat_offers_ollama_and_writes_it_to_the_supervisor(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path, ollama: FakeOllama, settings: QSettings
) -> None:
    agent = agent_with_waiting_architect(tmp_path)
    window, view = open_window(qtbot, bridge, agent)
    send(qtbot, view, "What time is it in Paris?")
    qtbot.waitUntil(lambda: any(kind == "assistant" for kind, _ in rows(view)), timeout=FOUND_S)
    offer = offer_capable_model(view, bridge, agent, settings)
    qtbot.waitUntil(offer.bar.isVisible, timeout=FOUND_S)
    text = offer.bar.text.text()
    assert f"Ollama at {ollama.url} is running with llama3.2:1b" in text
    assert "supervisor Conversation architect?" in text
    assert [offer.bar.models.itemText(i) for i in range(2)] == ["llama3.2:1b", "qwen3:0.6b"]
    window.resize(1280, 800)
    qtbot.wait(50)
    save_screenshot(window, tmp_path, "first-run-model-offer.png")
    offer.bar.models.setCurrentIndex(1)
    offer.bar.use.click()
    qtbot.waitUntil(lambda: "Done:" in offer.bar.text.text(), timeout=FOUND_S)
    assert offer.bar.text.text() == (
        "Done: Conversation architect runs on ollama:qwen3:0.6b from this agent's next chat "
        "(written to the supervisor agent architect)."
    )
    save_screenshot(window, tmp_path, "first-run-model-offer-done.png")
    written = json.loads((tmp_path / "architect" / "tsagent.json").read_text())
    assert written["settings"] == {"maxOutputTokens": 96, "model": "ollama:qwen3:0.6b"}
    assert written["providers"] == {"ollama": {"OLLAMA_HOST": ollama.url}}


def test_not_now_is_remembered_for_the_agent(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path, ollama: FakeOllama, settings: QSettings
) -> None:
    agent = agent_with_waiting_architect(tmp_path)
    _, view = open_window(qtbot, bridge, agent)
    first = offer_capable_model(view, bridge, agent, settings)
    qtbot.waitUntil(first.bar.isVisible, timeout=FOUND_S)
    first.bar.later.click()
    assert not first.bar.isVisible()
    again = ModelOfferController(first.bar, bridge, agent, settings)
    looked = again.look()
    assert _run(qtbot, looked) is None
    assert not first.bar.isVisible()
    assert json.loads((tmp_path / "architect" / "tsagent.json").read_text())["settings"] == {
        "maxOutputTokens": 96
    }


def test_no_offer_without_a_server(
    qtbot: QtBot,
    bridge: EngineBridge,
    tmp_path: Path,
    settings: QSettings,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import socket

    with socket.socket() as probe:  # a loopback port nothing listens on
        probe.bind(("127.0.0.1", 0))
        monkeypatch.setenv("OLLAMA_HOST", f"http://127.0.0.1:{probe.getsockname()[1]}")
    agent = agent_with_waiting_architect(tmp_path)
    _, view = open_window(qtbot, bridge, agent)
    bar = offer_capable_model(view, bridge, agent, settings).bar
    controller = ModelOfferController(bar, bridge, agent, settings)
    assert _run(qtbot, controller.look()) is None
    assert not controller.bar.isVisible()


def _run(qtbot: QtBot, coroutine: object) -> object:
    """Run a coroutine on the GUI's loop while Qt processes events; its result."""
    import asyncio

    task = asyncio.ensure_future(coroutine)  # type: ignore[arg-type]
    qtbot.waitUntil(task.done, timeout=FOUND_S)
    return task.result()
