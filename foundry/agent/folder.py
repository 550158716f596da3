"""The folder format: `tsagent.json`, `prompt.md`, `rules/*.mdt` and `refs/*.mdt`."""

from __future__ import annotations

import errno
import json
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from foundry.agent.jsonindex import JsonIndex
from foundry.agent.mdt import MdtFile, parse_mdt, render_mdt
from foundry.agent.overlay import overlay
from foundry.agent.problems import AgentError, AgentProblem
from foundry.agent.sidecar import SidecarPlaces, folder_order, priority_order_key
from foundry.agent.syntax import parse_json, read_text, render_json, same_data, split_bom
from foundry.agent.textfile import read_optional_text
from foundry.agent.textmerge import carry_changes

CONFIG_FILE = "tsagent.json"
PROMPT_FILE = "prompt.md"
ITEM_FOLDERS = {"rules": "rules", "references": "refs"}
ITEM_SUFFIX = ".mdt"
FOLDER_ONLY_KEYS = ("systemPrompt", "rules", "references")


@dataclass
class FolderSource:
    """What was read from an agent folder, so that a save changes only what was edited."""

    root: Path
    config: dict[str, Any] = field(default_factory=dict)
    config_text: str | None = None
    prompt_text: str | None = None
    items: dict[str, list[tuple[Path, MdtFile]]] = field(
        default_factory=lambda: {"rules": [], "references": []}
    )
    broken_files: set[Path] = field(default_factory=set)
    listed: dict[str, list[tuple[Path, MdtFile]]] = field(default_factory=dict, repr=False)
    sidecar: SidecarPlaces | None = None
    _config_index: JsonIndex | None = field(default=None, repr=False)

    def locate(self, location: tuple[str | int, ...]) -> tuple[Path, tuple[str | int, ...]]:
        """The file and the field inside it that a location in the agent document points to."""
        in_sidecar, location = self._in_file(location)
        if in_sidecar and self.sidecar is not None:
            return self.sidecar.file, location
        item = self._item_at(location)
        if item is not None:
            return item[0], location[2:]
        if location and location[0] == "systemPrompt":
            return self.root / PROMPT_FILE, ()
        return self.root / CONFIG_FILE, location

    def line_of(self, location: tuple[str | int, ...]) -> int | None:
        """The line of a rule's or reference's header field in its `.mdt` file."""
        item = self._item_at(location)
        return item[1].line_of(location[2:]) if item is not None else None

    def config_line_of(self, location: tuple[str | int, ...]) -> int | None:
        """The line of a field of `tsagent.json` (or of the deepest part of it in the file)."""
        in_sidecar, location = self._in_file(location)
        if self.config_text is None or in_sidecar:
            return None
        if self._config_index is None:
            self._config_index = JsonIndex(split_bom(self.config_text)[1])
        return self._config_index.line_of(location)

    def _in_file(self, location: tuple[str | int, ...]) -> tuple[bool, tuple[str | int, ...]]:
        return self.sidecar.place(location) if self.sidecar else (False, location)

    def _item_at(self, location: tuple[str | int, ...]) -> tuple[Path, MdtFile] | None:
        """The rule or reference file a location points into; indexes count the items as read."""
        if len(location) < 2 or location[0] not in ITEM_FOLDERS:
            return None
        section, index = str(location[0]), location[1]
        files = self.listed.get(section, self.items[section])
        if isinstance(index, int) and index < len(files):
            return files[index]
        return None


def is_agent_folder(path: Path) -> bool:
    """A folder with a `tsagent.json` entry (which may still turn out unreadable)."""
    return path.is_dir() and os.path.lexists(path / CONFIG_FILE)


def read_folder(
    root: Path, sidecar: dict[str, Any] | None = None
) -> tuple[dict[str, Any], FolderSource, list[AgentProblem]]:
    """The agent document held in a folder, its source, and the files that could not be read.

    Rules and references come in the order the folder keeps in its sidecar, or else in
    tsagent's (priority, then name).

    A `prompt.md`, rule or reference that cannot be read (not a regular file, too large, not
    UTF-8) is a problem and a broken file, which saves never write; a missing prompt is empty.
    """
    config_path = root / CONFIG_FILE
    config_text = read_optional_text(config_path)
    if config_text is None:
        problem = AgentProblem(file=root, message=f"not an agent folder: {CONFIG_FILE} is missing")
        raise AgentError([problem])
    config = parse_json(config_text, config_path)
    if not isinstance(config, dict):
        raise AgentError([AgentProblem(file=config_path, message="must hold a JSON object")])
    source = FolderSource(root=root, config=config, config_text=config_text)
    problems = _read_prompt(source)
    for section in ITEM_FOLDERS:
        problems.extend(_read_items(source, section))
        _put_in_order(source.items[section], folder_order(sidecar or {}, section))
        source.listed[section] = list(source.items[section])
    return _document(source), source, problems


def _read_prompt(source: FolderSource) -> list[AgentProblem]:
    path = source.root / PROMPT_FILE
    try:
        source.prompt_text = read_optional_text(path)
    except AgentError as error:
        source.broken_files.add(path)
        return error.problems
    return []


def _read_items(source: FolderSource, section: str) -> list[AgentProblem]:
    paths, problems = _item_paths(source, section)
    for path in paths:
        try:
            mdt = parse_mdt(read_text(path), path)
        except AgentError as error:
            problems.extend(error.problems)
            source.broken_files.add(path)
            continue
        source.items[section].append((path, mdt))
    return problems


def _put_in_order(files: list[tuple[Path, MdtFile]], names: list[str]) -> None:
    """Sort the items as named in `names` first, then the others by tsagent's priority order."""
    listed = {name: index for index, name in enumerate(names)}

    def key(entry: tuple[Path, MdtFile]) -> tuple[Any, ...]:
        item = _item(*entry)
        name = item["name"]
        return (
            listed.get(name, len(listed)) if isinstance(name, str) else len(listed),
            priority_order_key(item),
        )

    files.sort(key=key)


def _item_paths(source: FolderSource, section: str) -> tuple[list[Path], list[AgentProblem]]:
    """The `.mdt` files of a section's folder; a folder that cannot be listed is broken."""
    folder = source.root / ITEM_FOLDERS[section]
    try:
        with os.scandir(folder) as entries:
            names = [entry.name for entry in entries if entry.name.endswith(ITEM_SUFFIX)]
    except OSError as error:
        if error.errno == errno.ENOENT and not os.path.islink(folder):
            return [], []
        source.broken_files.add(folder)
        return [], [AgentProblem(file=folder, message=_unlistable(error))]
    return sorted(folder / name for name in names), []


def _unlistable(error: OSError) -> str:
    if error.errno == errno.ENOTDIR:
        return "is not a folder, so its files cannot be read"
    if error.errno == errno.ELOOP:
        return "is a symbolic link loop"
    if error.errno == errno.ENOENT:
        return "is a symbolic link to a missing folder"
    return f"cannot be listed: {error.strerror or error}"


def _document(source: FolderSource) -> dict[str, Any]:
    """The agent document in tsagent's YAML order: the folder's texts come right after settings."""
    document: dict[str, Any] = {}
    texts: dict[str, Any] = {"systemPrompt": split_bom(source.prompt_text or "")[1]}
    for section, files in source.items.items():
        texts[section] = [_item(path, mdt) for path, mdt in files]
    for key, value in source.config.items():
        if key in FOLDER_ONLY_KEYS:
            continue
        document[key] = value
        if key == "settings":
            document.update(texts)
    document.update({key: value for key, value in texts.items() if key not in document})
    return document


TEXT_BEFORE = ("include", "embeddings")  # tsagent's items put `text` before these


def _item(path: Path, mdt: MdtFile) -> dict[str, Any]:
    """The rule or reference of a file, its `text` where tsagent's YAML puts it."""
    header = dict(mdt.header)
    header.setdefault("name", path.stem)
    item: dict[str, Any] = {}
    for key, value in header.items():
        if key in TEXT_BEFORE and "text" not in item:
            item["text"] = mdt.text
        item[key] = value
    item.setdefault("text", mdt.text)
    return item


def drop_items(source: FolderSource, section: str, indexes: set[int]) -> dict[str, Any]:
    """Set aside items that failed validation as broken files; return the document without them."""
    kept = []
    for index, (path, mdt) in enumerate(source.items[section]):
        if index in indexes:
            source.broken_files.add(path)
        else:
            kept.append((path, mdt))
    source.items[section] = kept
    return _document(source)


def render_folder(
    document: dict[str, Any], root: Path, source: FolderSource | None
) -> tuple[dict[Path, str], tuple[Path, ...]]:
    """The files to write (only those whose content changes) and the files to delete."""
    source = source or FolderSource(root=root)
    in_place = _same_folder(source.root, root)
    root = source.root if in_place else root
    config = {key: value for key, value in document.items() if key not in FOLDER_ONLY_KEYS}
    wanted = {root / CONFIG_FILE: _config_text(config, source)}
    wanted.update(_prompt_file(document.get("systemPrompt", ""), root, source))
    removals: list[Path] = []
    for section in ITEM_FOLDERS:
        files, gone = _render_items(document.get(section, []), section, root, source)
        wanted.update(files)
        removals.extend(gone)
    if not in_place:
        return {_moved(path, source.root, root): text for path, text in wanted.items()}, ()
    current = _current_texts(source)
    writes = {path: text for path, text in wanted.items() if current.get(path) != text}
    return writes, tuple(removals)


def _same_folder(first: Path, second: Path) -> bool:
    try:
        return first.resolve() == second.resolve()
    except (OSError, RuntimeError):  # RuntimeError: a symbolic link loop
        return first == second


def _config_text(config: dict[str, Any], source: FolderSource) -> str:
    """tsagent.json's new text: the lines that changed, the others as they were written."""
    merged = overlay(source.config, config)
    if source.config_text is None:
        return render_json(merged)
    if merged is source.config:
        return source.config_text
    bom, original = split_bom(source.config_text)
    rendered = render_json(merged)
    carried = carry_changes(original, render_json(source.config), rendered)
    return bom + (carried if _json_reads_as(carried, merged) else rendered)


def _json_reads_as(text: str, expected: Any) -> bool:
    try:
        return same_data(json.loads(text), expected)
    except (ValueError, RecursionError):
        return False


def _prompt_file(prompt: str, root: Path, source: FolderSource) -> dict[Path, str]:
    """prompt.md's new text; none when it could not be read and the prompt was not edited."""
    path = root / PROMPT_FILE
    if path in source.broken_files:
        if not prompt:
            return {}
        _refuse_broken(path, source)
    return {path: split_bom(source.prompt_text or "")[0] + prompt}


def _moved(path: Path, old_root: Path, new_root: Path) -> Path:
    try:
        return new_root / path.relative_to(old_root)
    except ValueError:
        return path


def _render_items(
    items: list[dict[str, Any]], section: str, root: Path, source: FolderSource
) -> tuple[dict[Path, str], list[Path]]:
    existing = {
        mdt.header.get("name", path.stem): (path, mdt) for path, mdt in source.items[section]
    }
    files: dict[Path, str] = {}
    for item in items:
        header = {key: value for key, value in item.items() if key != "text"}
        text = item.get("text", "")
        if item["name"] in existing:
            path, mdt = existing.pop(item["name"])
            if "name" not in (mdt.raw_header or {}) and header["name"] == path.stem:
                del header["name"]  # the name came from the file name; the header stays as it was
            updated = replace(mdt, header=overlay(mdt.raw_header or {}, header), text=text)
        else:
            path = root / ITEM_FOLDERS[section] / f"{item['name']}{ITEM_SUFFIX}"
            updated = MdtFile(header=header, text=text)
        _refuse_broken(path, source)
        files[path] = render_mdt(updated)
    removals = [path for path, _ in existing.values() if path not in files]
    return files, removals


def _refuse_broken(path: Path, source: FolderSource) -> None:
    if path in source.broken_files or path.parent in source.broken_files:
        message = (
            "could not be read when the agent was opened, so it is not overwritten; fix or move it"
        )
        raise AgentError([AgentProblem(file=path, message=message)])


def _current_texts(source: FolderSource) -> dict[Path, str]:
    texts: dict[Path, str] = {}
    if source.config_text is not None:
        texts[source.root / CONFIG_FILE] = source.config_text
    if source.prompt_text is not None:
        texts[source.root / PROMPT_FILE] = source.prompt_text
    for files in source.items.values():
        for path, mdt in files:
            if mdt.source is not None:
                texts[path] = mdt.source
    return texts
