"""The main window: the open agent on the left, its chat sessions as tabs.

The window is built and shown before the engine exists (`MainWindow()`), so that start-up shows
it at once: this package imports Qt and nothing heavy, and the parts that need the engine import
their modules when `attach` builds them. The app imports WINDOW_PARTS on a worker thread while
the engine starts, so that the GUI thread finds them loaded.

MainWindow composes its parts (foundry/ui/window/*) and holds what they share: the current
agent, the tabs, the status bar; its public methods are the actions the menus and the app call.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QCloseEvent, QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QFileDialog, QMainWindow, QProgressBar, QWidget

from foundry.ui.background import BackgroundTasks
from foundry.ui.settings import default_model, foundry_settings
from foundry.ui.window.agent_dock import LOADING, NO_AGENT, AgentDock, agent_name
from foundry.ui.window.chats import ChatTabs
from foundry.ui.window.editors import EditorTabs
from foundry.ui.window.menus import WindowMenus
from foundry.ui.window.preloads import DashboardsTab
from foundry.ui.window.restore import restore_geometry, restore_tabs, save_geometry, save_tabs
from foundry.ui.window.service_tabs import ApprovalsTab, GatewayTab
from foundry.ui.window.tabs import TabClosing, window_tabs

if TYPE_CHECKING:
    from foundry.agent import AgentProblem
    from foundry.agent.document import AgentDocument
    from foundry.ui.bridge import EngineBridge
    from foundry.ui.dashboards import DashboardController, DashboardView
    from foundry.ui.editor import AgentEditor
    from foundry.ui.gateway_view import GatewayView
    from foundry.ui.inbox import InboxController, InboxView
    from foundry.ui.preferences import PreferencesDialog
    from foundry.ui.session.controller import SessionController
    from foundry.ui.tasks.runs import TaskRuns

__all__ = ["LOADING", "NO_AGENT", "WINDOW_PARTS", "MainWindow"]

# The modules the window's parts import in their methods, once the engine is attached.
WINDOW_PARTS = (
    "foundry.agent",
    "foundry.agent.document",
    "foundry.home",
    "foundry.llm.discovery",
    "foundry.ui.bridge",
    "foundry.ui.editor",
    "foundry.ui.first_run",
    "foundry.ui.gateway_view",
    "foundry.ui.help",
    "foundry.ui.inbox",
    "foundry.ui.preferences",
    "foundry.ui.recent",
    "foundry.session.events",
    "foundry.session.titles",
    "foundry.ui.session.controller",
    "foundry.ui.session.picker",
    "foundry.ui.session.view",
    "foundry.ui.tasks.runs",
    "foundry.ui.unsaved",
)


class MainWindow(QMainWindow):
    """Without a bridge the window says that the engine is loading, and offers nothing that
    needs it until `attach` gives it one."""

    def __init__(self, bridge: EngineBridge | None = None) -> None:
        super().__init__()
        self.agent: AgentDocument | None = None
        self.broken_agent: Path | None = None  # an agent shown with its problems, to fix
        self.closed = asyncio.Event()
        self._tasks = BackgroundTasks("main window task", self.statusBar().showMessage)
        self.engine_ready = False
        self._leaving = False  # unsaved edits were saved or discarded: closing may go on
        self.setWindowTitle("Foundry")
        self.resize(1280, 800)
        self.tabs = window_tabs()
        self.tabs.tabCloseRequested.connect(self.close_tab)
        self.tabs.currentChanged.connect(self._tab_shown)
        self.setCentralWidget(self.tabs)
        self.chats = ChatTabs(self)
        self.editors = EditorTabs(self)
        self.closing = TabClosing(self)
        self.dashboards_tab = DashboardsTab(self)
        self.gateway_tab = GatewayTab(self)
        self.dock = AgentDock(self)
        self.dock.fix_requested.connect(self._fix_broken_agent)
        self.agent_panel = self.dock.panel
        self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, self.dock)
        self.resizeDocks([self.dock], [300], Qt.Orientation.Horizontal)
        self.progress = QProgressBar()
        self.progress.setRange(0, 0)
        self.progress.setMaximumWidth(160)
        self.progress.hide()
        self.statusBar().addPermanentWidget(self.progress)
        self.setAcceptDrops(True)  # an agent folder or .yaml file dropped on the window opens
        self.menus = WindowMenus(self)
        restore_geometry(self, foundry_settings())
        if bridge is None:
            self.busy(LOADING)
        else:
            self.attach(bridge)

    def attach(self, bridge: EngineBridge) -> None:
        """The engine is there: build what needs it and enable the window's actions."""
        from foundry.ui.recent import RecentAgents
        from foundry.ui.tasks.runs import TaskRuns

        self.bridge = bridge
        self.engine_ready = True
        self.recent = RecentAgents.load()
        self.recent_menu = self.menus.add_open_recent(self.recent)
        self.task_runs: TaskRuns = TaskRuns(self.tabs, bridge, self.statusBar().showMessage)
        self.task_runs.open_session_requested.connect(
            lambda session_id: self.spawn(self.reopen_session(session_id))
        )
        self.approvals = ApprovalsTab(self)
        self.menus.enable_engine_actions()
        self.progress.hide()
        self.statusBar().clearMessage()
        self.dock.show_no_agent()

    async def restore_tabs(self) -> int:
        """The tabs open when the window was last closed, reopened; how many there are."""
        return await restore_tabs(self, foundry_settings())

    def engine_failed(self, error: Exception) -> None:
        """The engine could not start: said in the window, which offers only Quit."""
        self.progress.hide()
        self.dock.show_engine_failure(error)
        self.statusBar().showMessage("The engine could not start; see the Agent panel.")

    def spawn(self, coroutine: Any) -> asyncio.Task[Any]:
        """Run `coroutine` as a task the window owns; a failure is said in the status bar."""
        return self._tasks.spawn(coroutine)

    def busy(self, message: str) -> None:
        self.statusBar().showMessage(message)
        self.progress.show()

    # The current agent

    def choose_agent(self) -> None:
        dialog = QFileDialog(self, "Open an agent folder")
        dialog.setFileMode(QFileDialog.FileMode.Directory)
        dialog.fileSelected.connect(lambda path: self.spawn(self.open_agent(Path(path))))
        dialog.open()

    async def open_agent(self, path: Path) -> None:
        """Load an agent (off the GUI thread), show it, and start a chat with it; an agent that
        `foundry validate` rejects shows its problems instead."""
        from foundry.agent import AgentError, load_agent

        try:
            document = await asyncio.to_thread(load_agent, path)
        except AgentError as error:
            await self.show_problems(path, error.problems)
            return
        self.show_agent(document)
        self.spawn(self.recent.remember(document.path, agent_name(document)))
        await self.start_chat()

    def show_agent(self, document: AgentDocument) -> None:
        """`document` is the current agent: the Agent panel and the title show it."""
        self.agent = document
        self.broken_agent = None
        self.dock.show_agent(document, default_model(), self.chats.failed_servers_shown())
        self.gateway_tab.follow_agent()
        self.setWindowTitle(f"{document.agent.metadata.name} — Foundry")  # type: ignore[union-attr]

    async def show_problems(self, path: Path, problems: list[AgentProblem]) -> None:
        """The agent panel lists why the agent at `path` cannot be used; no agent is open. One
        that is there opens in the editor to be fixed (an agent deleted has nothing to fix)."""
        there = await asyncio.to_thread(path.exists)
        self.agent = None
        self.broken_agent = path if there else None
        self.gateway_tab.follow_agent()
        self.setWindowTitle("Foundry")
        self.dock.show_problems(path, problems, editable=there)
        count = f"{len(problems)} problem{'' if len(problems) == 1 else 's'}"
        self.statusBar().showMessage(f"Cannot open {path}: {count}, listed in the Agent panel")

    def _fix_broken_agent(self) -> None:
        if self.broken_agent is not None:
            self.spawn(self.edit_agent_at(self.broken_agent))

    def follow_saved_agent(self, document: AgentDocument) -> None:
        """An agent was saved: the chats of it and the Agent panel show it as saved."""
        if document.agent is None:
            return
        self.chats.follow_saved_agent(document)
        if self.agent is not None and self.agent.path == document.path:
            self.show_agent(document)

    def _tab_shown(self, index: int) -> None:
        """The Agent panel follows the selected tab: its chat's agent, or its editor's."""
        from foundry.ui.editor import AgentEditor

        widget = self.tabs.widget(index)
        document = self.chats.agents.get(widget) if widget is not None else None
        if isinstance(widget, AgentEditor):
            document = widget.controller.document
        if document is not None and document.agent is not None:
            self.show_agent(document)  # (the chat's servers too, which differ between chats)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        """Local files are taken once the engine is there: an agent opens, anything else is
        told why it does not."""
        if not self.engine_ready:
            return
        from foundry.ui.recent import local_paths_in

        if local_paths_in(event.mimeData()):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        from foundry.ui.recent import agent_paths_in, local_paths_in, not_an_agent

        paths = local_paths_in(event.mimeData()) if self.engine_ready else []
        if not paths:
            return
        event.acceptProposedAction()
        agents = agent_paths_in(event.mimeData())
        if agents:
            self.spawn(self.open_agent(agents[0]))
        else:
            self.statusBar().showMessage(not_an_agent(paths[0]), 15000)

    # The actions of the menus, each done by a part

    def new_chat(self) -> None:
        self.chats.new_chat()

    async def start_chat(self) -> str | None:
        return await self.chats.start_chat()

    def choose_session(self) -> None:
        self.chats.choose_session()

    async def reopen_session(self, session_id: str) -> None:
        await self.chats.reopen_session(session_id)

    def edit_agent(self) -> None:
        self.editors.edit_agent()

    async def edit_agent_at(self, path: Path) -> None:
        await self.editors.edit_agent_at(path)

    def create_agent(self) -> None:
        self.editors.create_agent()

    def agent_created(self, document: AgentDocument) -> AgentEditor:
        return self.editors.agent_created(document)

    def clone_agent(self) -> None:
        self.editors.clone_agent()

    def run_task(self) -> None:
        self.task_runs.choose_file()

    def show_task_run(self) -> None:
        self.task_runs.choose_run()

    def show_inbox(self) -> None:
        self.approvals.show()

    def show_gateway(self) -> None:
        self.gateway_tab.show()

    def show_dashboards(self) -> None:
        self.spawn(self.open_dashboards())

    async def open_dashboards(self) -> None:
        await self.dashboards_tab.open()

    def preload_dashboards(self) -> asyncio.Task[None]:
        return self.dashboards_tab.preload()

    def show_preferences(self) -> QWidget:
        """Edit > Preferences; what it changes is shown at once (the theme, the Agent panel)."""
        from foundry.ui.preferences import PreferencesDialog

        dialog = PreferencesDialog(foundry_settings(), self)
        dialog.saved.connect(self._preferences_saved)
        dialog.open()
        looking = self.spawn(self._offer_found_models(dialog))
        dialog.finished.connect(lambda _: looking.cancel())
        return dialog

    async def _offer_found_models(self, dialog: PreferencesDialog) -> None:
        """The chat models of the servers that answer (each asked once, briefly, on the engine's
        loop), offered in the dialog while it is open."""
        from foundry.llm.discovery import find_model_servers

        found = await self.bridge.call(find_model_servers())
        if dialog.isVisible():
            dialog.offer_models([s.reference(m) for s in found for m in s.chat_models])

    def _preferences_saved(self) -> None:
        if self.agent is not None:
            self.dock.show_agent(self.agent, default_model())
        self.statusBar().showMessage("Preferences saved.", 4000)

    def show_shortcuts(self) -> QWidget:
        return self.menus.show_shortcuts()

    def show_about(self) -> QWidget:
        return self.menus.show_about()

    def close_current_tab(self) -> None:
        self.closing.close_current()

    def close_tab(self, index: int) -> None:
        self.closing.close(index)

    def current_view(self) -> QWidget | None:
        return self.tabs.currentWidget()

    # What the parts hold, by the names the window's users know

    @property
    def controllers(self) -> list[SessionController]:
        return self.chats.controllers

    @property
    def inbox(self) -> InboxView:
        return self.approvals.view

    @property
    def inbox_controller(self) -> InboxController:
        return self.approvals.controller

    @property
    def gateway(self) -> GatewayView | None:
        return self.gateway_tab.view

    @property
    def dashboards(self) -> DashboardView | None:
        return self.dashboards_tab.view

    @property
    def dashboards_controller(self) -> DashboardController | None:
        return self.dashboards_tab.controller

    # Closing

    def closeEvent(self, event: QCloseEvent) -> None:
        settings = foundry_settings()
        if not self.engine_ready:  # nothing was opened yet
            save_geometry(self, settings)
            self.closed.set()
            super().closeEvent(event)
            return
        from foundry.ui.unsaved import unsaved_editors

        editors = unsaved_editors([self.tabs.widget(i) for i in range(self.tabs.count())])
        if editors and not self._leaving:
            event.ignore()  # asked first; the window closes again once the edits are settled
            self.spawn(self._close_when_settled(editors))
            return
        save_geometry(self, settings)
        save_tabs(self, settings)
        self.closing.release_all()
        self.dashboards_tab.close()
        self.inbox_controller.close()
        self._tasks.cancel_all()  # (the window's own; the engine stops what it runs)
        self.closed.set()
        super().closeEvent(event)

    async def _close_when_settled(self, editors: list[AgentEditor]) -> None:
        from foundry.ui.unsaved import UnsavedQuestion, saved

        answer = await UnsavedQuestion(editors, self).answer()
        if answer == "cancel" or (answer == "save" and not await saved(editors)):
            return
        self._leaving = True
        self.close()
