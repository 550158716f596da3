"""A number typed out of its field's range is kept at the nearest end and said, never cut to
its first digits (a rule's priority of 1500 became 150 without a word)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from foundry.agent.document import read_agent
from foundry.agent.templates import create_agent, new_agent
from foundry.ui.clamped_spin import ClampedSpinBox
from foundry.ui.editor import AgentEditor

pytestmark = pytest.mark.usefixtures("gui_loop")


def typed_into(qtbot: QtBot, spin: ClampedSpinBox, text: str) -> list[tuple[int, int]]:
    """`text` typed over the field's value, then Enter; the clamps said."""
    said: list[tuple[int, int]] = []
    spin.clamped.connect(lambda typed, kept: said.append((typed, kept)))
    spin.setFocus()
    spin.selectAll()
    qtbot.keyClicks(spin, text)
    qtbot.keyClick(spin, Qt.Key.Key_Return)
    return said


@pytest.fixture
def spin(qtbot: QtBot) -> ClampedSpinBox:
    field = ClampedSpinBox(0, 999, "Lower numbers come first")
    qtbot.addWidget(field)
    field.show()
    qtbot.waitExposed(field)
    return field


def test_a_value_above_the_range_is_kept_at_the_most_and_said(
    qtbot: QtBot, spin: ClampedSpinBox
) -> None:
    said = typed_into(qtbot, spin, "1500")

    assert spin.value() == 999
    assert said == [(1500, 999)]
    assert spin.last_clamp == "1500 is outside 0 to 999: kept 999, the most it can be."


def test_a_value_in_range_is_taken_as_typed_without_a_word(
    qtbot: QtBot, spin: ClampedSpinBox
) -> None:
    said = typed_into(qtbot, spin, "150")

    assert spin.value() == 150 and said == [] and spin.last_clamp == ""


def test_the_field_names_its_range_in_its_tip(spin: ClampedSpinBox) -> None:
    assert spin.toolTip() == "Lower numbers come first (0 to 999)"
    assert ClampedSpinBox(1, 10, "Turns (1 to 10)").toolTip() == "Turns (1 to 10)"


def test_a_rules_priority_of_1500_is_kept_at_999_and_said_in_the_editor(
    qtbot: QtBot, tmp_path: Path
) -> None:
    path = tmp_path / "demo"
    create_agent(path, new_agent("Demo", "Clamped values"))
    editor = AgentEditor()
    qtbot.addWidget(editor)
    editor.resize(1280, 800)
    editor.show()
    qtbot.waitExposed(editor)
    editor.load(read_agent(path))
    editor.show_section("Rules")
    editor.rules.new.click()
    priority = editor.rules.priority
    assert isinstance(priority, ClampedSpinBox)

    said = typed_into(qtbot, priority, "1500")

    assert priority.value() == 999 and said == [(1500, 999)]
    editor.close()


def test_a_supervisors_wait_of_5000_s_is_kept_at_3600_and_said(qtbot: QtBot) -> None:
    from foundry.ui.editor.supervisors_section import AgentSupervisorForm

    form = AgentSupervisorForm()
    qtbot.addWidget(form)
    form.show()
    qtbot.waitExposed(form)
    assert isinstance(form.timeout, ClampedSpinBox)

    said = typed_into(qtbot, form.timeout, "5000")

    assert form.timeout.value() == 3600 and said == [(5000, 3600)]
    assert "(0 to 3600 s;" in form.timeout.toolTip()
