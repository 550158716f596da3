"""Earlier prompts' model state in files: which caller's state is saved and restored when, the
files' budget and folder, and a failure that costs speed only. With a fake of llama.cpp's slot
endpoints here; tests/llm/test_embedded_saved_prompts.py runs them on the real model."""

from __future__ import annotations

import logging
import os
import stat
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from foundry.home import cache_dir
from foundry.llm.saved_prompts import FOLDER_PREFIX, STALE_AFTER_S, SavedPrompts, prompt_key


class FakeSlots:
    """llama.cpp's slot save and restore, writing a file of `size` bytes per save."""

    def __init__(self, folder: Path, size: int = 100) -> None:
        self.folder = folder
        self.size = size
        self.actions: list[tuple[str, str]] = []
        self.failing = False

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        action = path.rsplit("=", 1)[1]
        if self.failing:
            raise OSError("connection refused")
        self.actions.append((action, body["filename"]))
        if action == "save":
            (self.folder / body["filename"]).write_bytes(b"x" * self.size)
            return {"n_written": self.size}
        return {"n_read": self.size}


@pytest.fixture
def saved(tmp_path: Path) -> SavedPrompts:
    return SavedPrompts.in_private_folder(tmp_path / "prompts")


@pytest.fixture
def slots(saved: SavedPrompts) -> FakeSlots:
    return FakeSlots(saved.folder)


def body(system: str, user: str = "hello", tools: list[Any] | None = None) -> dict[str, Any]:
    messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
    return {"messages": messages, **({"tools": tools} if tools else {})}


def test_a_callers_key_is_its_instructions_and_tools_not_the_rest_of_its_chat() -> None:
    tool = {"type": "function", "function": {"name": "time.now"}}

    assert prompt_key(body("agent", "hi")) == prompt_key(body("agent", "what time is it?"))
    assert prompt_key(body("agent")) != prompt_key(body("supervisor"))
    assert prompt_key(body("agent")) != prompt_key(body("agent", tools=[tool]))
    assert prompt_key({"messages": []}) == prompt_key({})  # no message: one key, no error


def test_the_first_caller_saves_nothing_and_its_next_requests_neither(
    saved: SavedPrompts, slots: FakeSlots
) -> None:
    saved.switch_to("agent", slots)
    saved.switch_to("agent", slots)

    assert slots.actions == []


def test_the_state_held_is_saved_when_another_caller_comes_and_restored_when_it_returns(
    saved: SavedPrompts, slots: FakeSlots
) -> None:
    for key in ("agent", "guardian", "agent", "guardian", "architect"):
        saved.switch_to(key, slots)

    assert slots.actions == [
        ("save", "agent"),
        ("save", "guardian"),
        ("restore", "agent"),
        ("save", "agent"),
        ("restore", "guardian"),
        ("save", "guardian"),  # the architect has no file yet: nothing to restore
    ]


def test_the_files_stay_within_their_budget_the_least_recently_used_removed_first(
    tmp_path: Path,
) -> None:
    saved = SavedPrompts.in_private_folder(tmp_path / "prompts", budget_bytes=250)  # two files
    slots = FakeSlots(saved.folder, size=100)
    for key in ("a", "b", "a", "c", "d"):
        saved.switch_to(key, slots)

    # saved: a, b, a again (a used last), c: b was the least recently used when c came
    assert sorted(os.listdir(saved.folder)) == ["a", "c"]
    saved.switch_to("b", slots)
    assert ("restore", "b") not in slots.actions  # its file is gone: read again


def test_a_failure_costs_speed_only_said_once_and_the_files_are_not_used_again(
    saved: SavedPrompts, slots: FakeSlots, caplog: pytest.LogCaptureFixture
) -> None:
    saved.switch_to("agent", slots)
    slots.failing = True
    with caplog.at_level(logging.WARNING, "foundry.llm.saved_prompts"):
        saved.switch_to("guardian", slots)
        slots.failing = False
        saved.switch_to("agent", slots)

    assert slots.actions == []
    assert [r.getMessage() for r in caplog.records] == [
        "earlier prompts are read again from now on: connection refused"
    ]


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_the_folder_is_readable_by_its_user_only(saved: SavedPrompts) -> None:
    assert stat.S_IMODE(saved.folder.stat().st_mode) == 0o700  # its files hold the prompts


def test_llama_cpp_gets_the_folder_with_a_separator_at_its_end(saved: SavedPrompts) -> None:
    assert saved.slot_save_path == str(saved.folder) + os.sep  # it appends names to it as text


def test_each_process_gets_its_own_folder_and_removing_it_removes_its_files(
    tmp_path: Path, saved: SavedPrompts, slots: FakeSlots
) -> None:
    other = SavedPrompts.in_private_folder(tmp_path / "prompts")
    for key in ("agent", "guardian"):
        saved.switch_to(key, slots)

    saved.remove()

    assert other.folder != saved.folder and other.folder.is_dir()
    assert not saved.folder.exists()


def test_folders_left_a_day_ago_are_removed_and_recent_ones_kept(tmp_path: Path) -> None:
    root = tmp_path / "prompts"
    stale, recent = root / f"{FOLDER_PREFIX}crashed", root / f"{FOLDER_PREFIX}running"
    unrelated = root / "notes"
    for folder in (stale, recent, unrelated):
        folder.mkdir(parents=True)
        (folder / "state").write_bytes(b"x")
    long_ago = time.time() - STALE_AFTER_S - 60
    os.utime(stale, (long_ago, long_ago))
    os.utime(unrelated, (long_ago, long_ago))

    SavedPrompts.in_private_folder(root)

    assert not stale.exists()
    assert recent.is_dir() and unrelated.is_dir()


def test_saving_marks_the_folder_in_use(saved: SavedPrompts, slots: FakeSlots) -> None:
    long_ago = time.time() - STALE_AFTER_S - 60
    os.utime(saved.folder, (long_ago, long_ago))
    saved.switch_to("agent", slots)
    saved.switch_to("guardian", slots)

    assert time.time() - saved.folder.stat().st_mtime < STALE_AFTER_S


def test_the_cache_folder_is_under_foundry_home(foundry_home: Path) -> None:
    assert cache_dir() == foundry_home / "cache"
