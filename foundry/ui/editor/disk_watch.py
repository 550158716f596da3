"""DiskWatch: notices when another program changes an agent's files."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Signal

from foundry.agent.document import AgentDocument, AgentFormat
from foundry.agent.folder import ITEM_FOLDERS

SETTLE_MS = 250


def watched_paths(document: AgentDocument) -> list[Path]:
    """The agent's files and, for a folder, the folders whose lists of files matter."""
    if document.format is AgentFormat.YAML:
        return [document.path]
    root = document.path
    folders = [root / folder for folder in ITEM_FOLDERS.values()]
    files = [path for path in root.iterdir() if path.is_file()] if root.is_dir() else []
    items = [path for folder in folders if folder.is_dir() for path in folder.iterdir()]
    return [root, *[folder for folder in folders if folder.is_dir()], *files, *items]


class DiskWatch(QObject):
    """Emits `changed` once the files settle after a change (a save touches several)."""

    changed = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._watcher = QFileSystemWatcher(self)
        self._settle = QTimer(self)
        self._settle.setSingleShot(True)
        self._settle.setInterval(SETTLE_MS)
        self._settle.timeout.connect(self.changed)
        self._watcher.fileChanged.connect(self._touched)
        self._watcher.directoryChanged.connect(self._touched)
        self._document: AgentDocument | None = None

    def watch(self, document: AgentDocument) -> None:
        self._document = document
        self._rewatch()

    def stop(self) -> None:
        """Watch nothing more (the editor is closing): no change is told after this."""
        self._document = None
        self._settle.stop()
        self._rewatch()

    def _rewatch(self) -> None:
        old = self._watcher.files() + self._watcher.directories()
        if old:
            self._watcher.removePaths(old)
        if self._document is not None:
            watched = watched_paths(self._document)
            if not self._document.path.exists():  # deleted: its return shows in its folder
                watched.append(self._document.path.parent)
            paths = [str(path) for path in watched if path.exists()]
            if paths:
                self._watcher.addPaths(paths)

    def _touched(self, _path: str) -> None:
        # An atomic write replaces the file, which drops it from the watcher: watch it again.
        self._rewatch()
        self._settle.start()
