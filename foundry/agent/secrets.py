"""The one resolver of `env://NAME` values: Foundry's environment, then `.env` beside the agent."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from foundry.agent.problems import AgentError
from foundry.agent.textfile import read_optional_text

SECRET_PREFIX = "env://"
DOTENV_NAME = ".env"


class SecretError(Exception):
    """An `env://` value that cannot be resolved, in plain words."""


class SecretNotSetError(SecretError):
    """An `env://NAME` whose NAME is neither in the environment nor in the agent's `.env`."""

    def __init__(self, variable: str) -> None:
        self.variable = variable
        super().__init__(
            f"the secret {SECRET_PREFIX}{variable} is not set: "
            f"export {variable} or add it to {DOTENV_NAME} beside the agent"
        )


# A variable is a secret when a part of its name says so: `API_KEY`, `GITHUB_TOKEN`, `DB_PASSWORD`
# (`GIT_ASKPASS`, a program git runs, is not: it is matched by whole parts only).
SECRET_NAME_PARTS = frozenset(
    {
        "KEY", "APIKEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASS", "PASSPHRASE", "PAT",
        "CREDENTIAL", "CREDENTIALS", "AUTH", "AUTHORIZATION", "COOKIE",
    }
)  # fmt: skip


def is_secret_reference(value: str) -> bool:
    return value.startswith(SECRET_PREFIX)


def is_secret_variable(name: str) -> bool:
    """Whether an environment variable's name says it holds a secret (a key, token, password)."""
    parts = name.upper().replace("-", "_").split("_")
    return any(part in SECRET_NAME_PARTS for part in parts)


def dotenv_value(value: str, base_dir: Path) -> str | None:
    """What the agent's own `.env` gives an `env://NAME` value that Foundry's environment does
    not set (None otherwise: a literal, or a variable the person set themselves)."""
    if not is_secret_reference(value):
        return None
    variable = value.removeprefix(SECRET_PREFIX)
    if variable in os.environ:
        return None
    try:
        return read_dotenv(base_dir / DOTENV_NAME).get(variable)
    except SecretError:
        return None


def resolve_secret(value: str, base_dir: Path) -> str:
    """`env://NAME` becomes the value of NAME; any other value is returned as it is."""
    if not is_secret_reference(value):
        return value
    variable = value.removeprefix(SECRET_PREFIX)
    if variable in os.environ:
        return os.environ[variable]
    found = read_dotenv(base_dir / DOTENV_NAME).get(variable)
    if found is None:
        raise SecretNotSetError(variable)
    return found


def read_dotenv(path: Path) -> dict[str, str]:
    """The `NAME=value` lines of a `.env` file (`export` and quotes allowed); {} if it is absent."""
    try:
        text = read_optional_text(path)
    except AgentError as exc:
        raise SecretError(f"the secrets file cannot be read: {exc}") from exc
    if text is None:
        return {}
    return _parse_dotenv(text.removeprefix("\ufeff"))


def _parse_dotenv(text: str) -> dict[str, str]:
    values: dict[str, str] = {}
    for line in text.splitlines():
        key, separator, value = line.strip().removeprefix("export ").partition("=")
        if separator and key and not key.startswith("#"):
            values[key.strip()] = value.strip().strip("'\"")
    return values


MIN_MASKED_CHARS = 6  # a shorter value would be masked wherever its letters occur


def resolved_secrets(document_data: Any, base_dir: Path) -> frozenset[str]:
    """What the agent's `env://` references resolve to now (its servers' `env` and headers, its
    providers): the secrets that may come back in a tool's result, to be masked wherever they
    leave Foundry. References that are not set are left out."""
    values = set()
    for reference in _references(document_data):
        try:
            value = resolve_secret(reference, base_dir)
        except SecretError:
            continue
        if len(value) >= MIN_MASKED_CHARS:
            values.add(value)
    return frozenset(values)


def _references(value: Any) -> Iterator[str]:
    if isinstance(value, str) and is_secret_reference(value):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _references(item)
    elif isinstance(value, list):
        for item in value:
            yield from _references(item)
