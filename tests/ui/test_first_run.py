"""The chat offers a capable model it finds to the supervisors waiting for one, in one step."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from foundry.ui.bridge import EngineBridge
from foundry.ui.first_run import ModelOfferBar, ModelOfferController
from foundry.ui.session.view import SessionView

from ..llm.fakes import FakeOllama
from ..runtime.conftest import write_agent
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


def attached(view: SessionView) -> tuple[ModelOfferBar, ModelOfferController]:
    """The offer bar the window put on a new chat, and its controller."""
    [bar] = view.findChildren(ModelOfferBar)
    controller = bar.findChild(ModelOfferController)
    assert isinstance(controller, ModelOfferController)
    return bar, controller


def test_the_chat_offers_ollama_and_writes_it_to_the_supervisor(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path, ollama: FakeOllama
) -> None:
    agent = agent_with_waiting_architect(tmp_path)
    window, view = open_window(qtbot, bridge, agent)
    send(qtbot, view, "What time is it in Paris?")
    qtbot.waitUntil(lambda: any(kind == "assistant" for kind, _ in rows(view)), timeout=FOUND_S)
    bar, _ = attached(view)
    qtbot.waitUntil(bar.isVisible, timeout=FOUND_S)
    text = bar.text.text()
    assert f"Ollama at {ollama.url} is running with llama3.2:1b" in text
    assert "supervisor Conversation architect?" in text
    assert [bar.models.itemText(i) for i in range(2)] == ["llama3.2:1b", "qwen3:0.6b"]
    for size in ((1280, 800), (1440, 900)):
        window.resize(*size)
        qtbot.wait(50)
        save_screenshot(window, tmp_path, f"first-run-model-offer-{size[0]}.png")
    bar.models.setCurrentIndex(1)
    bar.use.click()
    qtbot.waitUntil(lambda: "Done:" in bar.text.text(), timeout=FOUND_S)
    assert bar.text.text() == (
        "Done: Conversation architect runs on ollama:qwen3:0.6b from this agent's next chat "
        "(written to the supervisor agent architect)."
    )
    save_screenshot(window, tmp_path, "first-run-model-offer-done.png")
    written = json.loads((tmp_path / "architect" / "tsagent.json").read_text())
    assert written["settings"] == {"maxOutputTokens": 96, "model": "ollama:qwen3:0.6b"}
    assert written["providers"] == {"ollama": {"OLLAMA_HOST": ollama.url}}
    bar.dismiss.click()
    assert not bar.isVisible()


def test_not_now_is_remembered_for_the_agent(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path, ollama: FakeOllama
) -> None:
    agent = agent_with_waiting_architect(tmp_path)
    _, view = open_window(qtbot, bridge, agent)
    bar, controller = attached(view)
    qtbot.waitUntil(bar.isVisible, timeout=FOUND_S)
    bar.later.click()
    assert not bar.isVisible()
    again = ModelOfferController(bar, bridge, agent, controller.settings)
    assert _run(qtbot, again.look()) is None
    assert not bar.isVisible()
    assert json.loads((tmp_path / "architect" / "tsagent.json").read_text())["settings"] == {
        "maxOutputTokens": 96
    }


def test_no_offer_without_a_server(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket

    with socket.socket() as probe:  # a loopback port nothing listens on
        probe.bind(("127.0.0.1", 0))
        monkeypatch.setenv("OLLAMA_HOST", f"http://127.0.0.1:{probe.getsockname()[1]}")
    agent = agent_with_waiting_architect(tmp_path)
    _, view = open_window(qtbot, bridge, agent)
    bar, controller = attached(view)
    assert _run(qtbot, controller.look()) is None
    assert not bar.isVisible()


def test_an_agent_without_waiting_supervisors_gets_no_offer(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path, ollama: FakeOllama
) -> None:
    agent = write_agent(tmp_path / "plain", {"turns": [{"text": "Hi."}]}, servers={})
    _, view = open_window(qtbot, bridge, agent)
    bar, controller = attached(view)
    assert _run(qtbot, controller.look()) is None
    assert not bar.isVisible()


def _run(qtbot: QtBot, coroutine: object) -> object:
    """Run a coroutine on the GUI's loop while Qt processes events; its result."""
    import asyncio

    task = asyncio.ensure_future(coroutine)  # type: ignore[arg-type]
    qtbot.waitUntil(task.done, timeout=FOUND_S)
    return task.result()
