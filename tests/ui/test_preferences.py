"""Edit > Preferences (Ctrl+,): the theme (a real dark palette), the send key and the default
model, kept in Foundry's settings file; a model that is not a reference is refused, said."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from foundry.ui.bridge import EngineBridge
from foundry.ui.editor import AgentEditor, CreateAgentDialog
from foundry.ui.preferences import PreferencesDialog
from foundry.ui.session.send_key import send_key
from foundry.ui.settings import DEFAULT_MODEL_SETTING, default_model, foundry_settings
from foundry.ui.theme import THEME_SETTING, apply_theme, is_dark, theme_setting
from foundry.ui.window.main_window import MainWindow

from ..runtime.conftest import write_agent
from .conftest import save_screenshot, shown_main_window


@pytest.fixture(autouse=True)
def system_theme_after() -> Iterator[None]:
    """The app's look as the other tests expect it, whatever a test chose."""
    yield
    apply_theme("system")


def preferences_of(qtbot: QtBot, window: MainWindow) -> PreferencesDialog:
    edit = next(a.menu() for a in window.menuBar().actions() if a.text() == "&Edit")
    assert edit is not None
    action = next(a for a in edit.actions() if a.text() == "&Preferences…")
    assert action.shortcut().toString() == "Ctrl+,"
    action.trigger()
    dialog = window.findChild(PreferencesDialog)
    assert dialog is not None
    qtbot.waitExposed(dialog)
    return dialog


def choose(dialog: PreferencesDialog, theme: str, key: str, model: str) -> None:
    dialog.theme.setCurrentIndex(dialog.theme.findData(theme))
    dialog.send_key.setCurrentIndex(dialog.send_key.findData(key))
    dialog.model.setText(model)


def test_preferences_keep_the_theme_send_key_and_model_and_the_dark_theme_is_dark(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    agent = write_agent(tmp_path / "helper", {"turns": [{"text": "It is noon."}]}, servers={})
    window = shown_main_window(qtbot, bridge, (1280, 800))
    opening = asyncio.ensure_future(window.open_agent(agent))
    qtbot.waitUntil(opening.done, timeout=20000)
    chat = window.controllers[0]
    chat.view.input.setPlainText("What time is it?")
    chat.send()
    qtbot.waitUntil(
        lambda: (
            ("assistant", "It is noon.") in [(r.kind, r.text) for r in chat.view.conversation.rows]
        ),
        timeout=20000,
    )
    dialog = preferences_of(qtbot, window)
    assert dialog.theme.currentData() == "system" and dialog.send_key.currentData() == "enter"
    choose(dialog, "dark", "ctrl+enter", "ollama:qwen2.5:7b")

    dialog.accept()

    settings = foundry_settings()
    assert theme_setting(settings) == "dark" and send_key(settings) == "ctrl+enter"
    assert default_model(settings) == "ollama:qwen2.5:7b"
    assert "Ctrl+Enter sends" in chat.view.input.placeholderText()  # the open chat says it
    palette = QApplication.palette()
    assert is_dark(palette)
    assert palette.color(QPalette.ColorRole.Base).lightness() < 64
    assert QApplication.style().name().lower() == "fusion"
    assert window.statusBar().currentMessage() == "Preferences saved."
    qtbot.waitUntil(lambda: is_dark(window.palette()))  # the open window follows
    again = preferences_of(qtbot, window)  # opens on what was saved
    assert again.theme.currentData() == "dark" and again.model.text() == "ollama:qwen2.5:7b"
    save_screenshot(window, tmp_path, "window-dark.png")
    save_screenshot(again, tmp_path, "preferences-dark.png")
    again.reject()
    window.edit_agent()  # the editor's hints, read in the dark
    editor = window.tabs.currentWidget()
    assert isinstance(editor, AgentEditor)
    editor.show_section("Policy")
    qtbot.waitUntil(lambda: is_dark(editor.policy.palette()))
    save_screenshot(window, tmp_path, "editor-dark.png")
    window.close()


def test_a_model_that_is_not_a_reference_keeps_the_dialog_open_and_stores_nothing(
    qtbot: QtBot, bridge: EngineBridge
) -> None:
    window = shown_main_window(qtbot, bridge, (1280, 800))
    dialog = preferences_of(qtbot, window)
    choose(dialog, "dark", "ctrl+enter", "qwen2.5")

    dialog.accept()

    assert dialog.isVisible()
    assert "'qwen2.5' is not a model reference: write provider:model" in dialog.error.text()
    assert foundry_settings().value(THEME_SETTING) is None
    assert not is_dark()
    dialog.model.setText("")  # empty: the built-in model
    dialog.accept()
    assert not dialog.isVisible() and default_model() == ""
    window.close()


def test_a_chat_with_an_agent_that_names_no_model_runs_the_default_model(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    agent = write_agent(
        tmp_path / "plain", {"turns": [{"text": "From the default."}]}, settings={"model": None}
    )
    foundry_settings().setValue(DEFAULT_MODEL_SETTING, "scripted:turns.json")
    window = shown_main_window(qtbot, bridge, (1280, 800))
    opening = asyncio.ensure_future(window.open_agent(agent))
    qtbot.waitUntil(opening.done, timeout=20000)
    chat = window.controllers[0]

    assert "scripted:turns.json (the default)" in window.agent_panel.text()
    chat.view.input.setPlainText("Hello?")
    chat.send()
    qtbot.waitUntil(
        lambda: (
            ("assistant", "From the default.")
            in [(r.kind, r.text) for r in chat.view.conversation.rows]
        ),
        timeout=20000,
    )
    window.close()


def test_a_new_agent_is_given_the_default_model(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    foundry_settings().setValue(DEFAULT_MODEL_SETTING, "ollama:qwen2.5:7b")
    window = shown_main_window(qtbot, bridge, (1280, 800))
    window.create_agent()
    dialog = window.findChild(CreateAgentDialog)
    assert dialog is not None
    dialog.name.setText("Planner")
    dialog.location.setText(str(tmp_path / "planner"))

    dialog.submit()

    config = tmp_path / "planner" / "tsagent.json"
    qtbot.waitUntil(config.exists, timeout=10000)
    assert json.loads(config.read_text())["settings"]["model"] == "ollama:qwen2.5:7b"
    window.close()


def test_in_the_app_a_bare_qsettings_is_foundrys_settings_file(qapp: QApplication) -> None:
    """What the chat reads with QSettings() (its send key) is what Preferences wrote."""
    from PySide6.QtCore import QSettings

    from foundry.ui.settings import APPLICATION, ORGANIZATION, use_foundry_settings

    names = (qapp.organizationName(), qapp.applicationName())
    qapp.setOrganizationName(ORGANIZATION)
    qapp.setApplicationName(APPLICATION)
    try:
        use_foundry_settings()
        assert QSettings().fileName() == foundry_settings().fileName()
    finally:
        QSettings.setDefaultFormat(QSettings.Format.NativeFormat)
        qapp.setOrganizationName(names[0])
        qapp.setApplicationName(names[1])


def test_the_models_found_are_offered_as_the_model_is_typed(qtbot: QtBot) -> None:
    dialog = PreferencesDialog(foundry_settings())
    qtbot.addWidget(dialog)

    dialog.offer_models(["ollama:llama3.2", "ollama:qwen2.5:7b"])

    completer = dialog.model.completer()
    assert completer is not None
    assert completer.model().data(completer.model().index(1, 0)) == "ollama:qwen2.5:7b"
    assert dialog.found.text() == "Found: ollama:llama3.2, ollama:qwen2.5:7b (type to choose)"


def test_preferences_say_when_no_model_server_answers(
    qtbot: QtBot, bridge: EngineBridge, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as closed:  # a loopback port nothing listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    monkeypatch.setenv("OLLAMA_HOST", f"http://127.0.0.1:{port}")
    window = shown_main_window(qtbot, bridge, (1280, 800))

    dialog = preferences_of(qtbot, window)

    qtbot.waitUntil(lambda: "Looking for" not in dialog.found.text(), timeout=10000)
    assert dialog.found.text().startswith("No model server answered")
    dialog.reject()
    window.close()
