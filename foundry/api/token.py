"""The approvals API's bearer token: from FOUNDRY_API_TOKEN, else a private file made once."""

from __future__ import annotations

import contextlib
import os
import secrets
import tempfile
from pathlib import Path

TOKEN_ENV = "FOUNDRY_API_TOKEN"
TOKEN_FILE = "api-token"
MIN_TOKEN_LENGTH = 16
URL_UNSAFE = frozenset("/?#%")
MAKE_ONE = "python -c 'import secrets; print(secrets.token_urlsafe(32))'"


class TokenError(LookupError):
    """The token found (in the environment, a file, or given) cannot guard the API.

    A LookupError, so that the CLI prints it as one line and exits non-zero, as it does for the
    other things it looks up and cannot use."""


def load_or_create_token(config_dir: Path) -> str:
    """The token to require: the environment's, else `config_dir/api-token`, created (mode 0600,
    atomically) with a fresh random token when missing or empty. Raises TokenError for a token
    that is too short or cannot travel in a URL."""
    given = os.environ.get(TOKEN_ENV, "").strip()
    if given:
        return check_token(
            given,
            TOKEN_ENV,
            f"set it to a longer secret ({MAKE_ONE}), or unset it to use the token Foundry "
            "makes in its config folder",
        )
    path = config_dir / TOKEN_FILE
    stored = _read(path)
    if stored:
        return check_token(
            stored, f"the token file {path}", "delete the file to have a new token made"
        )
    return _create(path)


def check_token(token: str, source: str = "the API token", fix: str = "") -> str:
    """`token` if it can guard the API: at least 16 visible ASCII characters, none of / ? # %
    (the token is also a URL path segment, /t/TOKEN); else TokenError saying what to do."""
    problem = _token_problem(token)
    if problem is None:
        return token
    advice = fix or f"use a longer random secret ({MAKE_ONE})"
    raise TokenError(
        f"{source} {problem}; the approvals API needs a token of at least "
        f"{MIN_TOKEN_LENGTH} characters: {advice}"
    )


def _token_problem(token: str) -> str | None:
    if len(token) < MIN_TOKEN_LENGTH:
        unit = "character" if len(token) == 1 else "characters"
        return f"is {len(token)} {unit} long"
    if not all("!" <= char <= "~" for char in token):
        return "holds spaces, control characters or non-ASCII characters"
    if URL_UNSAFE.intersection(token):
        return "holds one of / ? # %, which cannot be part of the /t/TOKEN capability URL"
    return None


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
