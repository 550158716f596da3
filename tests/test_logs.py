"""The log file: configured at start, in the data folder, shown by the doctor, never fatal."""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from foundry.cli import main
from foundry.doctor import check_log
from foundry.home import FoundryHome
from foundry.logs import configure_logging, log_path, log_uncaught_exceptions


@pytest.fixture(autouse=True)
def own_handlers() -> Iterator[None]:
    """Leave the root logger as it was found."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for handler in root.handlers[:]:
        if handler not in handlers:
            root.removeHandler(handler)
            handler.close()
    root.setLevel(level)


def flushed(path: Path) -> str:
    for handler in logging.getLogger().handlers:
        handler.flush()
    return path.read_text(encoding="utf-8")


def test_records_go_to_a_rotating_file_in_the_data_folder(foundry_home: Path) -> None:
    path = configure_logging()
    assert path == foundry_home / "data" / "logs" / "foundry.log" == log_path()
    logging.getLogger("foundry.test").info("an event worth keeping")
    logging.getLogger("foundry.test").debug("a detail that is not")
    text = flushed(path)
    assert "INFO    foundry.test" in text and "an event worth keeping" in text
    assert "a detail that is not" not in text


def test_configuring_twice_installs_one_handler(foundry_home: Path) -> None:
    configure_logging()
    configure_logging()
    mine = [h for h in logging.getLogger().handlers if type(h).__name__ == "_FoundryLogFile"]
    assert len(mine) == 1


def test_every_command_logs_to_the_file(foundry_home: Path, tmp_path: Path) -> None:
    assert main(["validate", str(tmp_path / "nowhere")]) == 1
    assert log_path().is_file()


def test_an_unwritable_data_folder_warns_and_the_program_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    home = FoundryHome(config_dir=blocked / "config", data_dir=blocked / "data")
    assert configure_logging(home, quiet=True) is None
    assert capsys.readouterr().err == ""
    assert configure_logging(home) is None
    assert "no log file" in capsys.readouterr().err


def test_doctor_shows_the_log_file(foundry_home: Path) -> None:
    check = check_log()
    assert check.status == "OK" and str(log_path()) in check.detail


def test_doctor_warns_when_the_log_cannot_be_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("FOUNDRY_HOME", str(blocked))
    check = check_log()
    assert check.status == "WARN" and "writable" in check.fix


def test_uncaught_exceptions_of_threads_are_logged(
    foundry_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)  # restored after the test
    monkeypatch.setattr(threading, "excepthook", lambda args: None)
    path = configure_logging()
    assert path is not None
    log_uncaught_exceptions()

    def fail() -> None:
        raise RuntimeError("the worker broke")

    worker = threading.Thread(target=fail, name="worker-7")
    worker.start()
    worker.join()
    text = flushed(path)
    assert "uncaught exception in worker-7" in text and "RuntimeError: the worker broke" in text
