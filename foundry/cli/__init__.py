"""The `foundry` command: one module per group of commands; `main` is the entry point."""

from foundry.cli.main import main

__all__ = ["main"]
