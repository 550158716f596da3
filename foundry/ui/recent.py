"""The agents opened lately: remembered under the data folder, offered in File > Open Recent."""

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
from foundry.home import FoundryHome

log = logging.getLogger(__name__)
RECENT_FILE = "recent-agents.json"
MAX_RECENT = 10
# One thread writes the list, so two agents opened in quick succession are written in the order
# they were opened: two writers at once could put the older list in the file last.
_WRITER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="recent-agents")


def agent_paths_in(mime: QMimeData) -> list[Path]:
    """The agents among the local files being dragged."""
    paths = [Path(url.toLocalFile()) for url in mime.urls() if url.isLocalFile()]
    return [path for path in paths if is_agent_path(path)]


class RecentAgents:
    """The newest first, at most MAX_RECENT, in a JSON file under the data folder."""

    def __init__(self, file: Path) -> None:
        self.file = file
        self.paths: list[Path] = []

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
            recent.paths = [Path(name) for name in names if isinstance(name, str)][:MAX_RECENT]
        return recent

    async def remember(self, path: Path) -> None:
        """`add` on the list's own thread, after the adds asked for before."""
        await asyncio.wrap_future(_WRITER.submit(self.add, path))

    def add(self, path: Path) -> None:
        """Put `path` first and write the list (blocks: `remember` calls it off the GUI thread)."""
        path = path.resolve()
        self.paths = [path, *(known for known in self.paths if known != path)][:MAX_RECENT]
        self.file.parent.mkdir(parents=True, exist_ok=True)
        write_file_atomically(self.file, json.dumps([str(p) for p in self.paths], indent=1))

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
            label = f"&{number} {path.name}" if number < 10 else path.name
            action = self.addAction(label)
            action.setToolTip(str(path))
            action.setStatusTip(str(path))
            action.triggered.connect(lambda _=False, path=path: self.chosen.emit(path))
        if not paths:
            self.addAction("No recent agents").setEnabled(False)
