"""Task runs in the main window: started from a file, followed live, stopped, reopened."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

from pytestqt.qtbot import QtBot

from foundry.orchestration.events import TaskFinished, TaskResumed
from foundry.session.events import Event
from foundry.ui.bridge import EngineBridge
from foundry.ui.session.view import SessionView
from foundry.ui.tasks import TaskView
from foundry.ui.tasks.controller import TaskController
from foundry.ui.tasks.progress import TaskProgress
from foundry.ui.window.main_window import MainWindow

from ..orchestration.conftest import GREET_CODE, agent, task_file, write
from .conftest import save_screenshot

DONE = {"text": "Done: greetings.py has `greet`. STATUS: done"}


def window_with(qtbot: QtBot, bridge: EngineBridge) -> MainWindow:
    window = MainWindow(bridge)
    qtbot.addWidget(window)
    window.resize(1280, 760)
    window.show()
    return window


def column(model, number: int) -> list[str]:  # type: ignore[no-untyped-def]
    return [model.item(row, number).text() for row in range(model.rowCount())]


def test_a_task_runs_live_in_its_tab(qtbot: QtBot, bridge: EngineBridge, tmp_path: Path) -> None:
    agent(
        tmp_path / "agents" / "coder",
        [
            {"tool_calls": [write("greetings.py", "def wave():\n    pass\n")], "delay_s": 0.02},
            DONE,
            {"tool_calls": [write("greetings.py", GREET_CODE)], "delay_s": 0.02},
            DONE,
        ],
    )
    path = task_file(tmp_path, limits={"interrogationRounds": 0, "stepTimeouts": [20]})
    window = window_with(qtbot, bridge)
    starting = asyncio.ensure_future(window.task_runs.run(path))
    qtbot.waitUntil(lambda: isinstance(window.tabs.currentWidget(), TaskView), timeout=10000)
    view = window.tabs.currentWidget()
    assert isinstance(view, TaskView)
    qtbot.waitUntil(lambda: view.progress.summary.status == "succeeded", timeout=20000)
    qtbot.waitUntil(lambda: not view.stop.isEnabled(), timeout=2000)
    assert starting.done() and window.tabs.tabText(window.tabs.currentIndex()) == "Task: greeting"

    phases = column(view.progress.phases, 0)
    assert [p for p in phases if not p.strip().startswith("→")] == [
        "✓ agent execution",
        "✗ validation",
        "✓ agent execution",
        "✓ validation",
    ]
    assert "→ next: fix" in phases[2]
    assert column(view.progress.criteria, 1) == ["92"] and column(view.progress.criteria, 2) == [
        "pass"
    ]
    assert column(view.progress.agents, 0) == ["operator"] and column(view.progress.agents, 2) == [
        "2"
    ]
    assert "greetings.py" in view.output.toPlainText()
    assert "succeeded" in view.status.text() and "iteration 2" in view.status.text()
    view.criteria.setCurrentIndex(view.progress.criteria.index(0, 0))
    evidence = view.evidence.toPlainText()
    assert "ast: def greet at greetings.py:1" in evidence and "says it is done" in evidence
    save_screenshot(window, tmp_path, "task-run.png")

    view.agents.doubleClicked.emit(view.progress.agents.index(0, 0))  # the operator's chat
    qtbot.waitUntil(lambda: isinstance(window.tabs.currentWidget(), SessionView), timeout=10000)
    chat = window.tabs.currentWidget()
    assert isinstance(chat, SessionView)
    qtbot.waitUntil(lambda: len(chat.conversation.rows) >= 6, timeout=5000)


def test_a_running_task_stops_and_its_run_reopens_from_the_store(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    agent(tmp_path / "agents" / "coder", [{"text": "word " * 400, "delay_s": 0.02}])
    path = task_file(tmp_path, limits={"stepTimeouts": [60]})
    window = window_with(qtbot, bridge)
    starting = asyncio.ensure_future(window.task_runs.run(path))
    qtbot.waitUntil(starting.done, timeout=10000)
    view = window.tabs.currentWidget()
    assert isinstance(view, TaskView)
    qtbot.waitUntil(lambda: view.progress.agents.rowCount() == 1, timeout=10000)
    assert view.stop.isEnabled() and not view.run_again.isEnabled()
    view.agents.doubleClicked.emit(view.progress.agents.index(0, 0))  # follow the operator at work
    qtbot.waitUntil(lambda: isinstance(window.tabs.currentWidget(), SessionView), timeout=10000)
    chat = window.tabs.currentWidget()
    assert isinstance(chat, SessionView)
    qtbot.waitUntil(lambda: any(row.streaming for row in chat.conversation.rows), timeout=5000)
    assert "answering now" in window.statusBar().currentMessage()
    window.tabs.setCurrentWidget(view)
    view.stop.click()
    qtbot.waitUntil(lambda: view.progress.summary.status == "stopped", timeout=10000)
    assert view.run_again.isEnabled() and "resume" in view.progress.summary.reason
    [run] = bridge.engine.submit(bridge.engine.task_runs()).result()
    assert run.status == "running"  # resumable: `Run Task` on the same file goes on from here

    window.close_tab(window.tabs.currentIndex())
    window.task_runs.choose_run()
    qtbot.waitUntil(
        lambda: window.findChild(object, "") is not None and _picker(window) is not None,
        timeout=5000,
    )
    picker = _picker(window)
    assert picker.table.rowCount() == 1 and picker.table.item(0, 1).text() == "running"
    picker.accept()
    qtbot.waitUntil(lambda: isinstance(window.tabs.currentWidget(), TaskView), timeout=5000)
    reopened = window.tabs.currentWidget()
    assert isinstance(reopened, TaskView)
    qtbot.waitUntil(lambda: reopened.progress.phases.rowCount() == 1, timeout=5000)
    assert column(reopened.progress.phases, 0)[0].endswith("agent execution")


def _picker(window: MainWindow):  # type: ignore[no-untyped-def]
    from foundry.ui.tasks.runs import TaskRunPicker

    found = window.findChildren(TaskRunPicker)
    return found[-1] if found else None


def test_a_task_file_with_problems_is_explained_and_nothing_runs(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    path = tmp_path / "task.yaml"
    path.write_text("name: broken\ngoal: g\ncriteria: []\noperators: [nowhere]\n")
    window = window_with(qtbot, bridge)
    result = asyncio.ensure_future(window.task_runs.run(path))
    qtbot.waitUntil(result.done, timeout=5000)
    assert result.result() is None
    box = window.task_runs.problems
    assert box is not None and box.isVisible()
    assert f"{path}:3: criteria:" in box.text() and "no agent at nowhere" in box.text()
    assert not bridge.engine.submit(bridge.engine.task_runs()).result()


def _event(seq: int, body) -> Event:  # type: ignore[no-untyped-def]
    return Event(session_id="t1", seq=seq, time=datetime.now(UTC), body=body)


def test_the_answer_renders_once_and_the_phases_keep_the_users_scroll(qtbot: QtBot) -> None:
    progress = TaskProgress()
    view = TaskView(progress, "a goal")
    qtbot.addWidget(view)
    view.resize(900, 300)
    view.show()
    for step in range(40):
        progress.apply(_event(step + 1, TaskResumed(from_step=step)))
    renders: list[str] = []
    view.output.setMarkdown = renders.append  # type: ignore[method-assign]
    progress.apply(_event(50, TaskFinished(status="succeeded", output="**done**", iterations=1)))
    for _ in range(4):
        view.refresh()
    assert renders == ["**done**"]

    bar = view.phases.verticalScrollBar()
    assert bar.maximum() > 0 and bar.value() == bar.maximum()  # followed the new rows
    bar.setValue(0)  # the user reads the first phases
    view.refresh()
    assert bar.value() == 0
    progress.apply(_event(51, TaskResumed(from_step=41)))
    assert bar.value() == bar.maximum()


def test_a_finished_tasks_timer_stops_and_a_resumed_one_restarts_it(
    qtbot: QtBot, bridge: EngineBridge, tmp_path: Path
) -> None:
    view = TaskView(TaskProgress(), "a goal")
    qtbot.addWidget(view)
    controller = TaskController(view, bridge, "t1", tmp_path / "task.yaml")
    controller._loaded = True  # no stored events: they come by hand
    controller._on_event(_event(1, TaskFinished(status="failed", output="", iterations=1)))
    qtbot.waitUntil(lambda: not controller._timer.isActive(), timeout=2000)
    controller._on_event(_event(2, TaskResumed(from_step=1)))
    assert controller._timer.isActive()
    controller.close()
