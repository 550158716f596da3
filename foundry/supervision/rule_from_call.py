"""A policy rule proposed from one tool call: "Make a rule from this" in the approval inbox.

The rule allows the same tool for the same agent; when the call names a path, only inside the
folder of that path (normalised, so `a/../../etc/x` proposes `/etc`, in plain sight). A person
reviews it, sees what it would change among the recorded calls, and saves it, or not.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

from foundry.agent.models import PolicyCondition, PolicyMatch, PolicyRule
from foundry.agent.names import free_name

PATH_KEYS = ("path", "file", "filename", "source", "destination", "repo_path", "directory")
_NOT_IN_NAME = re.compile(r"[^A-Za-z0-9_-]+")
NAME_CHARACTERS = 60


def rule_from_call(
    agent: str, tool: str, params: Mapping[str, Any], taken: Iterable[str]
) -> PolicyRule:
    """An `allow` rule for this agent's calls of `tool` within the folder of the call's path."""
    path_key, folder = _folder_of(params)
    when = None
    stem = f"allow-{tool}"
    if path_key is not None:
        when = PolicyMatch(all=[PolicyCondition(param=path_key, op="within", value=folder)])
        stem += f"-in-{_folder_name(folder)}"
    return PolicyRule(
        name=free_name(_slug(stem), set(taken)), agent=agent, tool=tool, when=when, action="allow"
    )


def _folder_of(params: Mapping[str, Any]) -> tuple[str | None, str]:
    for key in PATH_KEYS:
        value = params.get(key)
        if isinstance(value, str) and value.strip():
            folder = os.path.dirname(os.path.normpath(value.strip()))
            return key, folder or "."
    return None, "."


def _folder_name(folder: str) -> str:
    if folder == ".":
        return "workspace"
    return os.path.basename(folder.rstrip("/\\")) or "root"


def _slug(text: str) -> str:
    return _NOT_IN_NAME.sub("-", text).strip("-")[:NAME_CHARACTERS] or "rule"
