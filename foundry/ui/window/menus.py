"""The main window's menu bar: File, Edit, View and Help; the actions that need the engine wait."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu, QWidget

if TYPE_CHECKING:
    from foundry.ui.recent import RecentAgents, RecentAgentsMenu
    from foundry.ui.window.main_window import MainWindow

DASHBOARDS_TIP = "Metrics of tasks and sessions, updated live"
GATEWAY_TIP = "MCP clients connected through the gateway and their calls"


class WindowMenus:
    """Built on `window`'s menu bar; the menus are kept here, as PySide6 before 6.12 frees what
    `action.menu()` returns."""

    def __init__(self, window: MainWindow) -> None:
        self.window = window
        self.engine_actions: list[QAction] = []  # enabled once the engine is attached
        self.file = window.menuBar().addMenu("&File")
        self._file_menu()
        self.edit = window.menuBar().addMenu("&Edit")
        self.engine_action(
            self.edit,
            "&Preferences…",
            QKeySequence("Ctrl+,"),
            window.show_preferences,
            "Theme, the key that sends a message, the default model (Ctrl+,)",
        )
        self.view = window.menuBar().addMenu("&View")
        self._view_menu()
        self.help = window.menuBar().addMenu("&Help")
        self._help_menu()

    def engine_action(
        self,
        menu: QMenu,
        text: str,
        shortcut: QKeySequence | QKeySequence.StandardKey,
        slot: Any,
        tip: str = "",
    ) -> QAction:
        """An action of `menu` that needs the engine: disabled until the engine is attached."""
        action = QAction(text, self.window)
        action.setShortcut(shortcut)
        if tip:
            action.setToolTip(tip)
        action.triggered.connect(slot)
        action.setEnabled(False)
        menu.addAction(action)
        self.engine_actions.append(action)
        return action

    def enable_engine_actions(self) -> None:
        for action in self.engine_actions:
            action.setEnabled(True)

    def _file_menu(self) -> None:
        """File (Open Recent comes with the engine: `add_open_recent`)."""
        window, file = self.window, self.file
        self.engine_action(file, "&Open Agent…", QKeySequence.StandardKey.Open, window.choose_agent)
        self.clone_action = self.engine_action(
            file,
            "&Clone Agent…",
            QKeySequence("Ctrl+Shift+C"),
            window.clone_agent,
            "Copy the open agent under a new name, then open the copy",
        )
        self.engine_action(file, "&New Chat", QKeySequence.StandardKey.New, window.new_chat)
        self.engine_action(file, "&Reopen Session…", QKeySequence("Ctrl+R"), window.choose_session)
        self.engine_action(file, "&Edit Agent", QKeySequence("Ctrl+E"), window.edit_agent)
        self.engine_action(file, "New &Agent…", QKeySequence("Ctrl+Shift+N"), window.create_agent)
        self.engine_action(
            file, "Run &Task…", QKeySequence("Ctrl+Shift+T"), window.run_task, "Run a task file"
        )
        self.engine_action(
            file,
            "Task R&uns…",
            QKeySequence("Ctrl+Shift+U"),
            window.show_task_run,
            "Show a task run",
        )
        self.engine_action(
            file,
            "C&lose Tab",
            QKeySequence("Ctrl+W"),
            window.close_current_tab,
            "Close the tab shown (an editor with unsaved edits asks first)",
        )
        file.addSeparator()
        quit_action = QAction("&Quit", window)
        quit_action.setShortcut(QKeySequence.StandardKey.Quit)
        quit_action.triggered.connect(window.close)
        file.addAction(quit_action)

    def _view_menu(self) -> None:
        window = self.window
        for text, shortcut, slot, tip in (
            (
                "&Approvals",
                "Ctrl+Shift+I",
                window.show_inbox,
                "The approval inbox of every session",
            ),
            ("&Dashboards", "Ctrl+Shift+M", window.show_dashboards, DASHBOARDS_TIP),
            ("&Gateway", "Ctrl+Shift+G", window.show_gateway, GATEWAY_TIP),
        ):
            self.engine_action(self.view, text, QKeySequence(shortcut), slot, f"{tip} ({shortcut})")

    def _help_menu(self) -> None:
        shortcuts = QAction("&Keyboard Shortcuts", self.window)
        shortcuts.setShortcut(QKeySequence("Ctrl+/"))
        shortcuts.triggered.connect(self.show_shortcuts)
        about = QAction("&About Foundry", self.window)
        about.triggered.connect(self.show_about)
        self.help.addAction(shortcuts)
        self.help.addAction(about)

    def show_shortcuts(self) -> QWidget:
        from foundry.ui.help import show_shortcuts

        return show_shortcuts(self.window, (self.file, self.edit, self.view, self.help))

    def show_about(self) -> QWidget:
        from foundry.home import FoundryHome
        from foundry.ui.help import show_about

        return show_about(self.window, str(FoundryHome.from_environment().data_dir))

    def add_open_recent(self, recent: RecentAgents) -> RecentAgentsMenu:
        """File > Open Recent, placed after Open Agent."""
        from foundry.ui.recent import RecentAgentsMenu

        menu = RecentAgentsMenu(recent, self.window)
        menu.chosen.connect(lambda path: self.window.spawn(self.window.open_agent(path)))
        self.file.insertMenu(self.clone_action, menu)
        return menu
