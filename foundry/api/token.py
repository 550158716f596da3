"""The approvals API's bearer token: from FOUNDRY_API_TOKEN, else a private file made once."""

from __future__ import annotations

import contextlib
import os
import secrets
import tempfile
from pathlib import Path

TOKEN_ENV = "FOUNDRY_API_TOKEN"
TOKEN_FILE = "api-token"


def load_or_create_token(config_dir: Path) -> str:
    """The token to require: the environment's, else `config_dir/api-token`, created (mode 0600,
    atomically) with a fresh random token when missing or empty."""
    given = os.environ.get(TOKEN_ENV, "").strip()
    if given:
        return given
    path = config_dir / TOKEN_FILE
    return _read(path) or _create(path)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return ""


def _create(path: Path) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    token = secrets.token_urlsafe(32)
    descriptor, staged = tempfile.mkstemp(dir=path.parent, prefix=f".{TOKEN_FILE}.")
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(token + "\n")
            file.flush()
            os.fsync(file.fileno())
        os.chmod(staged, 0o600)
        _publish(staged, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(staged)
    return _read(path) or token


def _publish(staged: str, path: Path) -> None:
    """Link the staged file into place, so a token another process has just written wins."""
    try:
        os.link(staged, path)
    except FileExistsError:
        if not _read(path):
            os.replace(staged, path)
    except OSError:  # a file system without hard links
        os.replace(staged, path)
