"""A provider's test result is shown under that provider only, as it was tested."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from foundry.ui.bridge import EngineBridge

from .test_editor import make_agent, open_editor
from .test_editor_providers import KEY, add_openai_compatible, models_server

pytestmark = pytest.mark.usefixtures("gui_loop")
__all__ = ["models_server"]  # the fixture, found by pytest here


def test_a_connected_result_stays_with_its_provider_and_its_settings(
    qtbot: QtBot,
    bridge: EngineBridge,
    tmp_path: Path,
    models_server: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FOUNDRY_TEST_KEY", KEY)
    editor = open_editor(qtbot, make_agent(tmp_path / "llm"), bridge)
    editor.show_section("Providers")
    section = editor.providers
    add_openai_compatible(editor, models_server, "FOUNDRY_TEST_KEY")
    section.test.click()
    qtbot.waitUntil(lambda: section.result.text().startswith("Connected"), timeout=15000)

    section.add_actions["ollama"].trigger()  # a new provider is shown: not the old result
    assert section.title.text() == "ollama"
    assert section.result.text() == "Not tested yet."
    assert section.models_model.stringList() == []

    rows = section.list_model.stringList()
    section.providers.setCurrentIndex(
        section.list_model.index(rows.index("openai  ·  OpenAI-compatible"))
    )
    assert section.title.text() == "openai"
    assert section.result.text() == "Not tested yet."  # (a result is not kept per provider)
    section.test.click()
    qtbot.waitUntil(lambda: section.result.text().startswith("Connected"), timeout=15000)
    section.base_url.setText(models_server + "/other")
    section.base_url.textEdited.emit(models_server + "/other")  # changed since the test
    assert section.result.text() == "Not tested yet."
