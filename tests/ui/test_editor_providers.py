"""The editor's providers section against a real OpenAI-style /models endpoint on loopback."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from foundry.ui.bridge import EngineBridge
from foundry.ui.editor import AgentEditor

from .conftest import save_screenshot, shown_main_window
from .test_editor import make_agent, open_editor, save

pytestmark = pytest.mark.usefixtures("gui_loop")
KEY = "sk-test-not-a-real-key"


class ModelsHandler(BaseHTTPRequestHandler):
    """GET /v1/models as OpenAI answers it; 401 without the right bearer key."""

    def do_GET(self) -> None:
        if self.headers.get("Authorization") != f"Bearer {KEY}":
            self._send(401, {"error": {"message": "Incorrect API key provided"}})
        elif self.path == "/v1/models":
            self._send(200, {"object": "list", "data": [{"id": "tiny-1"}, {"id": "tiny-2"}]})
        else:
            self._send(404, {"error": {"message": f"no route {self.path}"}})

    def _send(self, status: int, body: dict[str, object]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        return None


@pytest.fixture
def models_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), ModelsHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()
    thread.join(5)


@pytest.fixture
def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])  # nothing listens there once it is closed


def add_openai_compatible(editor: AgentEditor, base_url: str, variable: str) -> None:
    section = editor.providers
    section.add_actions["openai"].trigger()
    section.base_url.setText(base_url)
    section.base_url.textEdited.emit(base_url)
    section.key_variable.setText(variable)
    section.key_variable.textEdited.emit(variable)


def test_test_connection_lists_the_models_and_one_becomes_the_agents_model(
    qtbot: QtBot,
    bridge: EngineBridge,
    tmp_path: Path,
    models_server: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FOUNDRY_TEST_KEY", KEY)
    path = make_agent(tmp_path / "llm")
    editor = open_editor(qtbot, path, bridge)
    editor.show_section("Providers")
    section = editor.providers
    assert section.list_model.stringList() == ["embedded  ·  Embedded (in Foundry)"]
    add_openai_compatible(editor, models_server, "FOUNDRY_TEST_KEY")
    assert section.title.text() == "openai"
    section.test.click()
    qtbot.waitUntil(lambda: section.result.text().startswith("Connected"), timeout=15000)
    assert section.result.text().startswith(f"Connected to {models_server} in ")
    assert section.result.text().endswith(": 2 models.")
    assert section.models_model.stringList() == ["tiny-1", "tiny-2"]
    section.models.setCurrentIndex(section.models_model.index(1))
    section.use.click()
    assert editor.settings.model.text() == "openai:tiny-2"
    save_screenshot(editor, tmp_path, "editor-providers.png")
    save(qtbot, editor)
    saved = json.loads((path / "tsagent.json").read_text())
    assert saved["providers"]["openai"] == {
        "BASE_URL": models_server,
        "API_KEY": "env://FOUNDRY_TEST_KEY",
    }
    assert saved["settings"]["model"] == "openai:tiny-2"
    assert KEY not in (path / "tsagent.json").read_text()


def test_a_refused_key_and_a_closed_port_are_explained(
    qtbot: QtBot,
    tmp_path: Path,
    models_server: str,
    closed_port: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FOUNDRY_TEST_KEY", "wrong")
    editor = open_editor(qtbot, make_agent(tmp_path / "down"))  # no engine: a worker thread
    editor.show_section("Providers")
    section = editor.providers
    add_openai_compatible(editor, models_server, "FOUNDRY_TEST_KEY")
    section.test.click()
    qtbot.waitUntil(lambda: section.result.text().startswith("Could not"), timeout=15000)
    assert "API key was refused" in section.result.text()
    assert "Incorrect API key provided" in section.result.text()
    url = f"http://127.0.0.1:{closed_port}/v1"
    section.base_url.setText(url)
    section.base_url.textEdited.emit(url)
    section.test.click()
    qtbot.waitUntil(lambda: section.result.text().startswith("Could not"), timeout=15000)
    assert section.result.text().startswith(
        f"Could not connect: cannot reach {url}: is the server running?"
    )
    assert section.models_model.stringList() == []
    assert section.test.isEnabled() and not section.progress.isVisible()
    save_screenshot(editor, tmp_path, "editor-providers-error.png")


def test_a_key_typed_in_clear_is_refused_and_never_written(
    qtbot: QtBot, tmp_path: Path, models_server: str
) -> None:
    path = make_agent(tmp_path / "secret")
    editor = open_editor(qtbot, path)
    add_openai_compatible(editor, models_server, KEY)
    assert "not the key itself" in editor.providers.result.text()
    save(qtbot, editor)
    assert KEY not in (path / "tsagent.json").read_text()


def test_a_renamed_provider_renames_the_model_that_uses_it(qtbot: QtBot, tmp_path: Path) -> None:
    editor = open_editor(qtbot, make_agent(tmp_path / "rename"))
    section = editor.providers
    section.add_actions["openai"].trigger()
    section.add_actions["openai"].trigger()  # openai is taken: the second is "local"
    assert section.title.text() == "local"
    assert editor.controller.working is not None
    editor.controller.edit(
        ("settings", "model"), lambda agent: setattr(agent.settings, "model", "local:m")
    )
    section.name.setText("lab")
    section.name.editingFinished.emit()
    working = editor.controller.working
    assert list(working.providers) == ["openai", "lab"]
    assert working.settings.model == "lab:m"
    assert editor.settings.model.text() == "lab:m"
    editor.undo_action.trigger()
    assert list(editor.controller.working.providers) == ["openai", "local"]


def test_the_providers_list_shows_whole_names_in_the_main_window(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    from foundry.agent.document import read_agent

    window = shown_main_window(qtbot, bridge, (1280, 800))
    editor = window.agent_created(read_agent(make_agent(tmp_path / "listed")))
    editor.show_section("Providers")
    listing = editor.providers.providers
    qtbot.waitUntil(lambda: listing.model().rowCount() > 0 and listing.viewport().width() > 0)

    assert not listing.horizontalScrollBar().isVisible()  # names wrap, never cut behind it
    first = listing.model().index(0, 0)
    assert listing.visualRect(first).right() <= listing.viewport().width()
    save_screenshot(window, tmp_path, "providers-in-window.png")
