"""Who a human resolver is: the same `human:<channel>:<login>` from the GUI and the CLI."""

from __future__ import annotations

import pytest

from foundry.cli_supervision import cli_user
from foundry.supervision.resolution import human_resolver


def test_a_human_resolver_names_the_channel_and_the_login(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("getpass.getuser", lambda: "ana")
    assert human_resolver("gui") == "human:gui:ana"
    assert cli_user() == "human:cli:ana"


@pytest.mark.parametrize("error", [KeyError("uid"), OSError("no login")])
def test_without_a_login_name_the_resolver_is_unknown(
    monkeypatch: pytest.MonkeyPatch, error: Exception
) -> None:
    def no_login() -> str:
        raise error

    monkeypatch.setattr("getpass.getuser", no_login)
    assert human_resolver("gui") == "human:gui:unknown"
