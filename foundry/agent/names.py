"""Names for new parts of an agent (rules, supervisors, servers) that do not clash."""

from __future__ import annotations

from collections.abc import Collection


def free_name(stem: str, taken: Collection[str]) -> str:
    """`stem`, or `stem-2`, `stem-3`… whichever is not taken."""
    if stem not in taken:
        return stem
    number = 2
    while f"{stem}-{number}" in taken:
        number += 1
    return f"{stem}-{number}"
