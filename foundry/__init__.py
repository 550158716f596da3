"""Foundry: a desktop studio for building AI agents and supervising them while they run."""

from __future__ import annotations


def __getattr__(name: str) -> str:
    """`__version__`, read from the installed package when first asked for: importing
    importlib.metadata costs every command and the app's start-up tens of milliseconds."""
    if name != "__version__":
        raise AttributeError(f"module 'foundry' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version("foundry-studio")
    except PackageNotFoundError:  # running from a source tree that was never installed
        found = "0.0.0"
    globals()["__version__"] = found
    return found
