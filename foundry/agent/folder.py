"""The folder format: `tsagent.json`, `prompt.md`, `rules/*.mdt` and `refs/*.mdt`."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from foundry.agent.mdt import MdtFile, parse_mdt, render_mdt
from foundry.agent.overlay import overlay
from foundry.agent.problems import AgentError, AgentProblem
from foundry.agent.syntax import parse_json, read_text, render_json

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

    def locate(self, location: tuple[str | int, ...]) -> tuple[Path, tuple[str | int, ...]]:
        """The file and the field inside it that a location in the agent document points to."""
        if location and location[0] in ITEM_FOLDERS and len(location) >= 2:
            section, index = location[0], location[1]
            files = self.items[str(section)]
            if isinstance(index, int) and index < len(files):
                return files[index][0], location[2:]
        if location and location[0] == "systemPrompt":
            return self.root / PROMPT_FILE, ()
        return self.root / CONFIG_FILE, location


def is_agent_folder(path: Path) -> bool:
    return path.is_dir() and (path / CONFIG_FILE).is_file()


def read_folder(root: Path) -> tuple[dict[str, Any], FolderSource, list[AgentProblem]]:
    """The agent document held in a folder, its source, and the files that could not be read."""
    config_path = root / CONFIG_FILE
    if not config_path.is_file():
        problem = AgentProblem(file=root, message=f"not an agent folder: {CONFIG_FILE} is missing")
        raise AgentError([problem])
    config_text = read_text(config_path)
    config = parse_json(config_text, config_path)
    if not isinstance(config, dict):
        raise AgentError([AgentProblem(file=config_path, message="must hold a JSON object")])
    source = FolderSource(root=root, config=config, config_text=config_text)
    prompt_path = root / PROMPT_FILE
    if prompt_path.is_file():
        source.prompt_text = read_text(prompt_path)
    problems = [*_read_items(source, "rules"), *_read_items(source, "references")]
    return _document(source), source, problems


def _read_items(source: FolderSource, section: str) -> list[AgentProblem]:
    problems = []
    for path in sorted((source.root / ITEM_FOLDERS[section]).glob(f"*{ITEM_SUFFIX}")):
        try:
            mdt = parse_mdt(read_text(path), path)
        except AgentError as error:
            problems.extend(error.problems)
            source.broken_files.add(path)
            continue
        source.items[section].append((path, mdt))
    return problems


def _document(source: FolderSource) -> dict[str, Any]:
    """The agent document in tsagent's YAML order: the folder's texts come right after settings."""
    document: dict[str, Any] = {}
    texts: dict[str, Any] = {"systemPrompt": source.prompt_text or ""}
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


def _item(path: Path, mdt: MdtFile) -> dict[str, Any]:
    item = dict(mdt.header)
    item.setdefault("name", path.stem)
    item["text"] = mdt.text
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
    config = {key: value for key, value in document.items() if key not in FOLDER_ONLY_KEYS}
    config_text = source.config_text
    if config_text is None or overlay(source.config, config) != source.config:
        config_text = render_json(overlay(source.config, config))
    wanted = {root / CONFIG_FILE: config_text, root / PROMPT_FILE: document.get("systemPrompt", "")}
    removals: list[Path] = []
    for section in ITEM_FOLDERS:
        files, gone = _render_items(document.get(section, []), section, root, source)
        wanted.update(files)
        removals.extend(gone)
    if source.root.resolve() != root.resolve():
        return {_moved(path, source.root, root): text for path, text in wanted.items()}, ()
    current = _current_texts(source)
    writes = {path: text for path, text in wanted.items() if current.get(path) != text}
    return writes, tuple(removals)


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
            updated = replace(mdt, header=overlay(mdt.raw_header or {}, header), text=text)
        else:
            path = root / ITEM_FOLDERS[section] / f"{item['name']}{ITEM_SUFFIX}"
            updated = MdtFile(header=header, text=text)
        _refuse_broken(path, source)
        files[path] = render_mdt(updated)
    removals = [path for path, _ in existing.values() if path not in files]
    return files, removals


def _refuse_broken(path: Path, source: FolderSource) -> None:
    if path in source.broken_files:
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
