"""Foundry's own settings kept beside a tsagent agent (`foundry.json`), where tsagent leaves them.

tsagent's loader refuses a supervisor of a type it does not know (Foundry's `policy`) and its
strict parsing drops keys it does not know on every save (the `enabled` of supervisors, rules
and references, a stdio server's `confinement`). So a save writes those to a file tsagent
never reads and splits them out of the agent's own file; a read puts them back. The file also
keeps the order of a folder's rules and references, which the folder's files cannot hold.
Agents written before keep loading with their policy in `supervisors`: their next save moves it.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from foundry.agent.problems import AgentError, AgentProblem
from foundry.agent.syntax import parse_json, render_json
from foundry.agent.textfile import read_optional_text

SIDECAR_FILE = "foundry.json"
SIDECAR_SUFFIX = ".foundry.json"
TSAGENT_SUPERVISOR_TYPES = ("agent", "guardian", "architect", "collection")
SECTIONS = ("rules", "references")
SERVER_ONLY_KEYS = ("confinement",)  # of a stdio server: Foundry's, stripped by tsagent
DEFAULT_PRIORITY = 500


Location = tuple[str | int, ...]


@dataclass(frozen=True)
class SidecarPlaces:
    """Which supervisors of the agent document came from the sidecar, to locate problems."""

    file: Path
    supervisors: tuple[int, ...] = ()

    def place(self, location: Location) -> tuple[bool, Location]:
        """(whether `location` is in the sidecar, the location inside the file that holds it)."""
        if len(location) < 2 or location[0] != "supervisors" or not isinstance(location[1], int):
            return False, location
        index = location[1]
        if index in self.supervisors:
            return True, ("supervisors", self.supervisors.index(index), *location[2:])
        before = sum(1 for position in self.supervisors if position < index)
        return False, ("supervisors", index - before, *location[2:])


def sidecar_places(file: Path, sidecar: dict[str, Any], document: dict[str, Any]) -> SidecarPlaces:
    """Where `merge_sidecar` put the sidecar's supervisors in the merged `document`."""
    supervisors = document.get("supervisors")
    extras = [entry for entry in sidecar.get("supervisors", []) if isinstance(entry, dict)]
    from_file = (len(supervisors) if isinstance(supervisors, list) else 0) - len(extras)
    positions: list[int] = []
    for extra in extras:
        position, bound = extra.get("position"), from_file + len(positions)
        valid = isinstance(position, int) and 0 <= position <= bound
        positions.append(position if valid else bound)  # type: ignore[arg-type]
    return SidecarPlaces(file=file, supervisors=tuple(positions))


def sidecar_path(path: Path, is_folder: bool) -> Path:
    """`foundry.json` in an agent folder (and beside the `tsagent.yaml` tsagent migrates a folder
    to, so the folder keeps it); `NAME.foundry.json` beside any other `NAME.yaml`."""
    if is_folder:
        return path / SIDECAR_FILE
    if path.stem in ("tsagent",):
        return path.parent / SIDECAR_FILE
    return path.parent / (path.stem + SIDECAR_SUFFIX)


def read_sidecar(path: Path) -> dict[str, Any]:
    """What the sidecar holds; nothing when there is none. Raises AgentError when unreadable."""
    text = read_optional_text(path)
    if text is None:
        return {}
    data = parse_json(text, path)
    if not isinstance(data, dict):
        raise AgentError([AgentProblem(file=path, message="must hold a JSON object")])
    return data


def render_sidecar(data: dict[str, Any]) -> str | None:
    """The sidecar's text, or None when there is nothing to keep in it."""
    return render_json(data) if data else None


def folder_order(sidecar: dict[str, Any], section: str) -> list[str]:
    """The names a folder's rules or references were listed in, when it keeps an order."""
    names = (
        sidecar.get("order", {}).get(section, []) if isinstance(sidecar.get("order"), dict) else []
    )
    return [name for name in names if isinstance(name, str)] if isinstance(names, list) else []


def priority_order_key(item: dict[str, Any]) -> tuple[Any, ...]:
    """tsagent's order of rules and references: priority first, then name."""
    priority = item.get("priorityLevel", DEFAULT_PRIORITY)
    if not isinstance(priority, int | float) or isinstance(priority, bool):
        priority = DEFAULT_PRIORITY
    name = str(item.get("name", ""))
    return (priority, name.casefold(), name)


def merge_sidecar(document: dict[str, Any], sidecar: dict[str, Any]) -> dict[str, Any]:
    """The agent document with the sidecar's settings put back where Foundry reads them."""
    if not sidecar:
        return document
    merged = dict(document)
    supervisors = [
        dict(entry) for entry in merged.get("supervisors", []) if isinstance(entry, dict)
    ]
    for extra in sidecar.get("supervisors", []):
        if isinstance(extra, dict):
            entry = {key: value for key, value in extra.items() if key != "position"}
            position = extra.get("position")
            bound = len(supervisors)
            supervisors.insert(
                position if isinstance(position, int) and 0 <= position <= bound else bound, entry
            )
    if supervisors or "supervisors" in merged:
        merged["supervisors"] = _with_disabled(supervisors, sidecar, "supervisors", "id")
    for section in SECTIONS:
        if section in merged and isinstance(merged[section], list):
            merged[section] = _with_disabled(merged[section], sidecar, section, "name")
    merged["mcpServers"] = _with_server_settings(merged.get("mcpServers"), sidecar)
    if merged["mcpServers"] is None:
        del merged["mcpServers"]
    return merged


def _with_disabled(
    entries: list[Any], sidecar: dict[str, Any], section: str, key: str
) -> list[Any]:
    disabled = sidecar.get("disabled", {}).get(section, [])
    if not disabled:
        return entries
    return [
        {**entry, "enabled": False}
        if isinstance(entry, dict) and entry.get(key) in disabled and "enabled" not in entry
        else entry
        for entry in entries
    ]


def _with_server_settings(servers: Any, sidecar: dict[str, Any]) -> Any:
    settings = sidecar.get("mcpServers")
    if not isinstance(servers, dict) or not isinstance(settings, dict):
        return servers
    merged = dict(servers)
    for name, extra in settings.items():
        if isinstance(merged.get(name), dict) and isinstance(extra, dict):
            merged[name] = {**extra, **merged[name]}  # the file's own value wins
    return merged


def split_for_tsagent(
    document: dict[str, Any], keep_order: bool, fill_required: bool
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(what the agent's own file holds, as tsagent reads it; what goes to the sidecar).

    Supervisors tsagent refuses move to the sidecar. What tsagent's saves drop (`enabled: false`,
    a server's confinement) stays in the file and is copied to the sidecar, which fills it in
    again when a tsagent save has dropped it. With `fill_required` (a new file), the agent's
    file also gets the fields tsagent requires that Foundry leaves to defaults (`created`, a
    rule's description and priority, a supervisor's name, a stdio server's type and args).
    With `keep_order` (a folder), rules and references not in tsagent's priority order have
    their order in the sidecar.
    """
    own = copy.deepcopy(document)
    sidecar: dict[str, Any] = {}
    if fill_required:
        _fill_metadata(own)
    _split_supervisors(own, sidecar, fill_required)
    for section in SECTIONS:
        _split_items(own, sidecar, section, keep_order, fill_required)
    _split_servers(own, sidecar, fill_required)
    return own, sidecar


def _fill_metadata(own: dict[str, Any]) -> None:
    """tsagent requires `created` and `lastAccessed`: an agent without them gets the time now."""
    metadata = own.get("metadata")
    if not isinstance(metadata, dict):
        return
    now = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    metadata.setdefault("created", now)
    metadata.setdefault("lastAccessed", metadata["created"])


def _split_supervisors(own: dict[str, Any], sidecar: dict[str, Any], fill: bool) -> None:
    kept, extra, disabled = [], [], []
    for position, entry in enumerate(own.get("supervisors", [])):
        if entry.get("type") not in TSAGENT_SUPERVISOR_TYPES:
            extra.append({"position": position, **entry})
            continue
        if entry.get("enabled", True) is False:
            disabled.append(entry.get("id"))
        if fill and not entry.get("name"):
            entry["name"] = entry.get("id", "")
        kept.append(entry)
    if "supervisors" in own:
        own["supervisors"] = kept
    if extra:
        sidecar["supervisors"] = extra
    _note_disabled(sidecar, "supervisors", disabled)


def _split_items(
    own: dict[str, Any], sidecar: dict[str, Any], section: str, keep_order: bool, fill: bool
) -> None:
    items = own.get(section, [])
    disabled = []
    for item in items:
        if item.get("enabled", True) is False:
            disabled.append(item.get("name"))
        if fill:
            item.setdefault("description", "")
            item.setdefault("priorityLevel", DEFAULT_PRIORITY)
    _note_disabled(sidecar, section, disabled)
    names = [item.get("name") for item in items]
    if keep_order and names != [item.get("name") for item in sorted(items, key=priority_order_key)]:
        sidecar.setdefault("order", {})[section] = names


def _note_disabled(sidecar: dict[str, Any], section: str, names: list[Any]) -> None:
    if names:
        sidecar.setdefault("disabled", {})[section] = names


def _split_servers(own: dict[str, Any], sidecar: dict[str, Any], fill: bool) -> None:
    for name, server in own.get("mcpServers", {}).items():
        if not isinstance(server, dict):
            continue
        if fill and "command" in server:
            server.setdefault("type", "stdio")
        if fill and server.get("type") == "stdio":
            server.setdefault("args", [])
        extra = {key: server[key] for key in SERVER_ONLY_KEYS if key in server}
        if extra:
            sidecar.setdefault("mcpServers", {})[name] = extra


def same_sidecar(text: str | None, data: dict[str, Any]) -> bool:
    """Whether a sidecar's current text already holds `data` (so it is not rewritten)."""
    if text is None:
        return not data
    try:
        return bool(json.loads(text) == data)
    except ValueError:
        return False
