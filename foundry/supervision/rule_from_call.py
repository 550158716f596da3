"""A policy rule proposed from one tool call: "Make a rule from this" in the approval inbox.

The rule allows the same tool for the same agent; when the call names a path, only inside the
folder that path really lies in, found as the policy finds it (where the tool's server runs,
symlinks followed): `a/../../etc/x` proposes `/etc`, and `escape/key`, where `escape` is a link
out of the workspace, proposes the folder it leads to (`/srv/keys`), in plain sight, never the
link's name (which `within` would follow there unseen). A person reviews it, sees what it would
change among the recorded calls, and saves it, or not.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from foundry.agent.models import PolicyCondition, PolicyMatch, PolicyRule
from foundry.agent.names import free_name
from foundry.supervision.paths import ServerFolders, ServerPlaces, UnresolvablePath, resolve_path

PATH_KEYS = ("path", "file", "filename", "source", "destination", "repo_path", "directory")
_NOT_IN_NAME = re.compile(r"[^A-Za-z0-9_-]+")
NAME_CHARACTERS = 60


class NoRuleProposed(ValueError):
    """No rule can be proposed from the call: its path cannot be judged (the message says why)."""


def rule_from_call(
    agent: str,
    tool: str,
    params: Mapping[str, Any],
    taken: Iterable[str],
    workspace: Path | None = None,
    server_folders: ServerPlaces | None = None,
) -> PolicyRule:
    """An `allow` rule for this agent's calls of `tool` within the real folder of the call's
    path; `workspace` and `server_folders` as the agent's gate has them. Without the workspace
    a relative path cannot be placed: the rule allows that path only (whatever it leads to).
    Raises NoRuleProposed when the path cannot be judged."""
    found = _path_of(params)
    when = None
    stem = f"allow-{tool}"
    if found is not None:
        key, path = found
        folder, shown = real_folder(tool, key, path, workspace, server_folders)
        when = PolicyMatch(all=[PolicyCondition(param=key, op="within", value=folder)])
        stem += f"-{shown}"
    return PolicyRule(
        name=rule_name(stem, taken), agent=agent, tool=tool, when=when, action="allow"
    )


def _path_of(params: Mapping[str, Any]) -> tuple[str, str] | None:
    for key in PATH_KEYS:
        value = params.get(key)
        if isinstance(value, str) and value.strip():
            return key, value.strip()
    return None


def real_folder(
    tool: str, key: str, path: str, workspace: Path | None, server_folders: ServerPlaces | None
) -> tuple[str, str]:
    """The folder the rule names (relative to the workspace when inside it): the one the path
    lies in, or the path itself when it is a folder (`repo_path`); and its words for the
    rule's name."""
    if workspace is None and not os.path.isabs(os.path.expanduser(path)):
        exact = os.path.normpath(path)
        return exact, f"on-{os.path.basename(exact) or 'root'}"
    folders = ServerFolders(workspace or Path(os.sep), server_folders)
    try:
        real = resolve_path(path, folders.folder_of(tool))
    except UnresolvablePath as why:
        raise NoRuleProposed(f"{key} {path!r} cannot be judged: {why}") from None
    folder = real if os.path.isdir(real) else os.path.dirname(real)  # a repository, a folder
    if workspace is not None:
        relative = os.path.relpath(folder, resolve_path(".", workspace))
        if relative != ".." and not relative.startswith(".." + os.sep):
            folder = relative
    return folder, f"in-{_folder_name(folder)}"


def _folder_name(folder: str) -> str:
    if folder == ".":
        return "workspace"
    return os.path.basename(folder.rstrip("/\\")) or "root"


def rule_name(stem: str, taken: Iterable[str]) -> str:
    """A rule's name from `stem` (its characters kept to a name's), not one of `taken`."""
    return free_name(_slug(stem), set(taken))


def _slug(text: str) -> str:
    return _NOT_IN_NAME.sub("-", text).strip("-")[:NAME_CHARACTERS] or "rule"
