"""Help > Keyboard Shortcuts and Help > About Foundry."""

from __future__ import annotations

import platform
import sys
from collections.abc import Iterable

from PySide6 import __version__ as pyside_version
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QMenu,
    QMessageBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

# Keys that belong to one page or panel rather than to a menu, where they work.
PAGE_KEYS: tuple[tuple[str, str, str], ...] = (
    ("Chat", "Ctrl+Return", "Send"),
    ("Chat", "Esc", "Stop the reply (what was written is kept)"),
    ("Chat", "Ctrl+Shift+A / Ctrl+Shift+D", "Approve / deny the chat's pending tool call"),
    ("Chat", "Ctrl+Alt+R", "Restart the chat on its agent as saved (when its bar offers it)"),
    ("Agent editor", "Ctrl+S", "Save"),
    ("Agent editor", "Ctrl+Z / Ctrl+Shift+Z", "Undo / redo (the button says what)"),
    ("Agent editor", "Ctrl+Shift+R", "New rule or reference (Rules, References, Policy)"),
    ("Agent editor", "Alt+Up / Alt+Down", "Move the selected supervisor or policy rule"),
    ("Agent editor", "Ctrl+Shift+O", "Open the selected supervisor's agent"),
    ("Agent editor", "Ctrl+Return", "Policy page: decide the call typed in Try it"),
    ("Approvals", "J / K", "Next / previous approval"),
    ("Approvals", "A / D / E / G", "Approve / deny / edit parameters / approve and grant"),
    ("Approvals", "R", "Make a policy rule from the approval"),
    ("Approvals", "O", "Open the approval's session"),
    ("Approvals", "/", "Filter by tool"),
    ("Approvals", "Ctrl+Shift+A / Ctrl+Shift+D", "Approve / deny every selected approval"),
)


def menu_keys(menus: Iterable[QMenu]) -> list[tuple[str, str, str]]:
    """(where, keys, what) of each menu action that has a shortcut, in menu order."""
    rows = []
    for menu in menus:
        where = f"{menu.title().replace('&', '')} menu"
        for action in menu.actions():
            keys = action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
            if keys:
                rows.append((where, keys, action.text().replace("&", "")))
    return rows


class ShortcutsDialog(QDialog):
    def __init__(self, rows: list[tuple[str, str, str]], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Keyboard Shortcuts")
        self.table = QTableWidget(len(rows), 3)
        self.table.setHorizontalHeaderLabels(["Where", "Keys", "What"])
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        for row, values in enumerate(rows):
            for column, value in enumerate(values):
                self.table.setItem(row, column, QTableWidgetItem(value))
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table)
        layout.addWidget(buttons)
        self.resize(760, 560)


def show_shortcuts(parent: QWidget, menus: Iterable[QMenu]) -> ShortcutsDialog:
    dialog = ShortcutsDialog([*menu_keys(menus), *PAGE_KEYS], parent)
    dialog.open()
    return dialog


def about_text(data_folder: str) -> str:
    import foundry

    return (
        f"<h3>Foundry {foundry.__version__}</h3>"
        "<p>A desktop studio for building AI agents and supervising them while they run: "
        "agents in tsagent's formats, supervisors, a tool-call policy with an approval inbox, "
        "tasks, dashboards and an MCP gateway.</p>"
        f"<p>Python {platform.python_version()} · Qt for Python {pyside_version} · "
        f"{sys.platform}</p>"
        f"<p>Your agents' sessions, approvals and logs: <code>{data_folder}</code></p>"
        "<p><code>foundry doctor</code> checks the installation.</p>"
    )


def show_about(parent: QWidget, data_folder: str) -> QMessageBox:
    box = QMessageBox(QMessageBox.Icon.Information, "About Foundry", about_text(data_folder))
    box.setParent(parent, box.windowFlags())
    box.open()
    return box
