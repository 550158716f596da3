"""Foundry: a desktop studio for building AI agents and supervising them while they run."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("foundry-studio")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0"
