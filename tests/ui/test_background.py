"""BackgroundTasks: every failure of the window's background work is logged and shown."""

from __future__ import annotations

import asyncio
import logging

import pytest
from pytestqt.qtbot import QtBot

from foundry.ui.background import BackgroundTasks


async def fail() -> None:
    raise RuntimeError("the store is gone")


def test_a_failure_is_logged_with_its_traceback_and_shown(
    qtbot: QtBot, caplog: pytest.LogCaptureFixture
) -> None:
    shown: list[str] = []
    tasks = BackgroundTasks("session action", shown.append)
    with caplog.at_level(logging.ERROR):
        tasks.spawn(fail())
        qtbot.waitUntil(lambda: len(tasks) == 0)
    assert shown == ["Error: the store is gone"]
    [record] = caplog.records
    assert record.getMessage() == "session action failed" and record.exc_info is not None


def test_cancelled_work_is_neither_logged_nor_shown(
    qtbot: QtBot, caplog: pytest.LogCaptureFixture
) -> None:
    shown: list[str] = []
    tasks = BackgroundTasks("editor task", shown.append)
    tasks.spawn(asyncio.sleep(60))
    qtbot.wait(10)
    tasks.cancel_all()
    qtbot.waitUntil(lambda: len(tasks) == 0)
    assert shown == [] and caplog.records == []
