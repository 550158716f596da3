"""The API token guards the approvals: one too short to do so is refused at start, in one line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from foundry.api import create_app, load_or_create_token
from foundry.api.token import TokenError
from foundry.store import Store

WEAK = [
    ("a", "is 1 character long"),
    ("fifteen-chars-x", "is 15 characters long"),
    ("sixteen chars ok", "spaces"),
    ("sixteen-chars-\u00e9x", "non-ASCII"),
    ("sixteen/chars/tok", "/ ? # %"),
]


@pytest.mark.parametrize(("token", "problem"), WEAK)
def test_a_weak_token_from_the_environment_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, token: str, problem: str
) -> None:
    monkeypatch.setenv("FOUNDRY_API_TOKEN", token)

    with pytest.raises(TokenError) as refused:
        load_or_create_token(tmp_path)

    message = str(refused.value)
    assert message.startswith("FOUNDRY_API_TOKEN ")
    assert problem in message and "at least 16 characters" in message
    assert "unset it" in message


def test_a_token_of_16_characters_is_enough(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FOUNDRY_API_TOKEN", "sixteen-chars-ok")

    assert load_or_create_token(tmp_path) == "sixteen-chars-ok"


def test_a_weak_token_file_is_refused_naming_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("FOUNDRY_API_TOKEN", raising=False)
    (tmp_path / "api-token").write_text("hunter2\n")

    with pytest.raises(TokenError, match=r"api-token is 7 characters long.*delete the file"):
        load_or_create_token(tmp_path)


def test_the_app_refuses_a_weak_token(tmp_path: Path) -> None:
    with Store.open(f"sqlite:///{tmp_path / 's.db'}") as store, pytest.raises(TokenError):
        create_app(store, "a")


def test_serve_refuses_a_weak_token_in_one_line_and_exits_non_zero(foundry_home: Path) -> None:
    env = {**os.environ, "FOUNDRY_HOME": str(foundry_home), "FOUNDRY_API_TOKEN": "a"}

    done = subprocess.run(
        [sys.executable, "-m", "foundry.cli", "serve", "--port", "0"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert done.returncode == 1
    assert done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line.startswith("foundry: FOUNDRY_API_TOKEN is 1 character long")
    assert "at least 16 characters" in line
