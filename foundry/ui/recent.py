"""The agents opened lately, by name: remembered under the data folder, in File > Open Recent."""

from __future__ import annotations

import asyncio
import json
import logging
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from PySide6.QtCore import QMimeData, Signal
from PySide6.QtWidgets import QMenu, QWidget

from foundry.agent.atomic import write_file_atomically
from foundry.agent.document import is_agent_path
from foundry.agent.folder import CONFIG_FILE
from foundry.home import FoundryHome

log = logging.getLogger(__name__)
RECENT_FILE = "recent-agents.json"
MAX_RECENT = 10
# One thread writes the list, so two agents opened in quick succession are written in the order
# they were opened: two writers at once could put the older list in the file last.
_WRITER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="recent-agents")


def local_paths_in(mime: QMimeData) -> list[Path]:
    """The local files and folders being dragged."""
    return [Path(url.toLocalFile()) for url in mime.urls() if url.isLocalFile()]


def agent_paths_in(mime: QMimeData) -> list[Path]:
    """The agents among the local files being dragged."""
    return [path for path in local_paths_in(mime) if is_agent_path(path)]


def not_an_agent(path: Path) -> str:
    """Why a dropped `path` does not open."""
    if path.is_dir():
        return (
            f"This folder is not an agent: no {CONFIG_FILE} in {path}. Drop an agent's folder "
            "or its .yaml file."
        )
    return (
        f"{path.name} is not an agent: an agent is a folder holding {CONFIG_FILE}, or a .yaml "
        "agent file."
    )


class RecentAgents:
    """The newest first, at most MAX_RECENT, in a JSON file under the data folder."""

    def __init__(self, file: Path) -> None:
        self.file = file
        self.paths: list[Path] = []
        self.names: dict[Path, str] = {}  # the agent's own name, as it was when opened

    @classmethod
    def load(cls, file: Path | None = None) -> RecentAgents:
        recent = cls(file or FoundryHome.from_environment().data_dir / RECENT_FILE)
        try:
            names = json.loads(recent.file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return recent
        except (OSError, ValueError) as error:
            log.warning("Ignoring the list of recent agents in %s: %s", recent.file, error)
            return recent
        if isinstance(names, list):
            for entry in names[:MAX_RECENT]:
                recent._read_entry(entry)
        return recent

    def _read_entry(self, entry: object) -> None:
        """{"path": ..., "name": ...}, or a bare path (lists written before names were kept)."""
        if isinstance(entry, str):
            self.paths.append(Path(entry))
        elif isinstance(entry, dict) and isinstance(entry.get("path"), str):
            path = Path(entry["path"])
            self.paths.append(path)
            if isinstance(entry.get("name"), str) and entry["name"]:
                self.names[path] = entry["name"]

    async def remember(self, path: Path, name: str = "") -> None:
        """`add` on the list's own thread, after the adds asked for before."""
        await asyncio.wrap_future(_WRITER.submit(self.add, path, name))

    def add(self, path: Path, name: str = "") -> None:
        """Put `path` first, named `name`, and write the list (blocks: `remember` calls it off
        the GUI thread)."""
        path = path.resolve()
        self.paths = [path, *(known for known in self.paths if known != path)][:MAX_RECENT]
        if name:
            self.names[path] = name
        entries = [{"path": str(p), "name": self.names.get(p, "")} for p in self.paths]
        self.file.parent.mkdir(parents=True, exist_ok=True)
        write_file_atomically(self.file, json.dumps(entries, indent=1))

    def name(self, path: Path) -> str:
        return self.names.get(path) or path.name

    def label(self, path: Path, among: list[Path]) -> str:
        """The agent's name; its folder too when another agent `among` has the same name."""
        name = self.name(path)
        same = sum(1 for known in among if self.name(known) == name)
        return f"{name} — {path.parent.name}/{path.name}" if same > 1 else name

    def existing(self) -> list[Path]:
        return [path for path in self.paths if is_agent_path(path)]


class RecentAgentsMenu(QMenu):
    """File > Open Recent: rebuilt each time it opens; `chosen` carries the agent's path."""

    chosen = Signal(Path)

    def __init__(self, recent: RecentAgents, parent: QWidget | None = None) -> None:
        super().__init__("Open &Recent", parent)
        self.recent = recent
        self.aboutToShow.connect(self.rebuild)
        self.rebuild()

    def rebuild(self) -> None:
        self.clear()
        paths = self.recent.existing()
        for number, path in enumerate(paths, start=1):
            name = self.recent.label(path, paths).replace("&", "&&")
            label = f"&{number} {name}" if number < 10 else name
            action = self.addAction(label)
            action.setToolTip(str(path))
            action.setStatusTip(str(path))
            action.triggered.connect(lambda _=False, path=path: self.chosen.emit(path))
        if not paths:
            self.addAction("No recent agents").setEnabled(False)
