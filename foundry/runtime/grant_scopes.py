"""Where a grant made from an approval may reach, and how long it lasts, in words."""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from foundry.supervision.paths import find_paths

WORKSPACE = "."


@dataclass(frozen=True)
class GrantScope:
    """Where a grant may reach: a folder every path of a covered call must lie in (relative: to
    the agent's workspace), or None for no folder of its own (still only the workspace)."""

    label: str
    path_scope: str | None


def grant_scopes(params: dict[str, Any]) -> list[GrantScope]:
    """The scopes offered for a grant made from a call with these parameters, the proposed one
    first: the folder of the paths the call names, if it names any, then the workspace; no
    folder at all is offered last, so that it is only ever an explicit choice."""
    scopes = [GrantScope("the workspace", WORKSPACE)]
    folder = call_folder(params)
    if folder is not None and folder != WORKSPACE:
        scopes.insert(0, GrantScope(f"this call's folder: {folder}", folder))
    return [*scopes, GrantScope("no folder (anywhere in the workspace)", None)]


def call_folder(params: dict[str, Any]) -> str | None:
    """The folder holding every path the call names (`.` for the workspace), or None when it
    names none or they share no folder."""
    found, _ = find_paths(params)
    parents = [os.path.dirname(os.path.normpath(raw)) or WORKSPACE for _, raw in found]
    if not parents:
        return None
    try:
        return os.path.commonpath(parents) or WORKSPACE
    except ValueError:  # absolute and relative paths, or different drives
        return None


def describe_scope(path_scope: str | None) -> str:
    """Where a grant reaches, in words: `in src`, `in the workspace`, or `anywhere in the
    workspace` (no folder of its own)."""
    if path_scope is None:
        return "anywhere in the workspace"
    return "in the workspace" if path_scope == WORKSPACE else f"in {path_scope}"


def describe_duration(duration: timedelta) -> str:
    """A duration in words: `42 s`, `5 min`, `2 h 5 min`, `3 d`."""
    seconds = max(0, int(duration.total_seconds()))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min"
    if seconds < 86400:
        hours, minutes = divmod(seconds // 60, 60)
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    return f"{seconds // 86400} d"
