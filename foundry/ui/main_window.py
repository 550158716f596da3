"""The main window: the open agent on the left, its chat sessions as tabs."""

from __future__ import annotations

import asyncio
import html
import importlib
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QCloseEvent, QDragEnterEvent, QDropEvent, QKeySequence
from PySide6.QtWidgets import (
    QDockWidget,
    QFileDialog,
    QLabel,
    QMainWindow,
    QMenu,
    QProgressBar,
    QTabWidget,
    QWidget,
)

from foundry.agent import AgentError, AgentProblem, load_agent
from foundry.agent.document import AgentDocument, read_agent
from foundry.ui.background import BackgroundTasks
from foundry.ui.bridge import EngineBridge
from foundry.ui.editor import AgentEditor, CloneAgentDialog, CreateAgentDialog
from foundry.ui.gateway_view import GatewayView
from foundry.ui.inbox import ApprovalAlerts, InboxController, InboxView, system_tray
from foundry.ui.recent import RecentAgents, RecentAgentsMenu, agent_paths_in
from foundry.ui.session_controller import SessionController
from foundry.ui.session_picker import SessionPicker
from foundry.ui.session_view import SessionView
from foundry.ui.tasks.runs import TaskRuns
from foundry.ui.unsaved import UnsavedQuestion, saved, unsaved_editors

if TYPE_CHECKING:
    from foundry.ui.dashboards import DashboardController, DashboardView

log = logging.getLogger(__name__)


def describe_agent(document: AgentDocument) -> str:
    agent = document.agent
    assert agent is not None
    supervisors = "".join(
        f"<li>{entry.name or entry.id} <i>({entry.type})</i></li>" for entry in agent.supervisors
    )
    return (
        f"<h3>{agent.metadata.name}</h3><p>{agent.metadata.description}</p>"
        f"<p><b>Model:</b> {agent.settings.model_reference or 'embedded:smollm2'}<br>"
        f"<b>Rules:</b> {len(agent.rules)} · <b>References:</b> {len(agent.references)} · "
        f"<b>Tool servers:</b> {len(agent.mcp_servers)}</p>"
        f"<p><b>Supervisors</b></p><ul>{supervisors or '<li>none</li>'}</ul>"
        f"<p style='color:#757575'>{document.path}</p>"
    )


def describe_problems(path: Path, problems: list[AgentProblem]) -> str:
    """The problems of an agent that cannot be used, as `foundry validate` prints them."""
    items = "".join(f"<li>{html.escape(str(problem))}</li>" for problem in problems)
    return (
        f"<h3>This agent cannot be used</h3><p style='color:#757575'>{html.escape(str(path))}</p>"
        "<p>Fix these problems, then open it again (<code>foundry validate</code> lists the "
        f"same):</p><ul>{items}</ul>"
    )


class MainWindow(QMainWindow):
    def __init__(self, bridge: EngineBridge) -> None:
        super().__init__()
        self.bridge = bridge
        self.agent: AgentDocument | None = None
        self.closed = asyncio.Event()
        self.controllers: list[SessionController] = []
        self._tasks = BackgroundTasks("main window task", self.statusBar().showMessage)
        self._view: QMenu | None = None
        self.setWindowTitle("Foundry")
        self.resize(1280, 800)
        self.tabs = QTabWidget()
        self.tabs.setTabsClosable(True)
        self.tabs.setDocumentMode(True)
        self.tabs.tabCloseRequested.connect(self.close_tab)
        self.setCentralWidget(self.tabs)
        self.agent_panel = QLabel("Open an agent to start (Ctrl+O).")
        self.agent_panel.setWordWrap(True)
        self.agent_panel.setAlignment(Qt.AlignmentFlag.AlignTop)
        self.agent_panel.setMargin(10)
        dock = QDockWidget("Agent", self)
        dock.setObjectName("agent-dock")
        dock.setWidget(self.agent_panel)
        self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, dock)
        self.resizeDocks([dock], [300], Qt.Orientation.Horizontal)
        self.progress = QProgressBar()
        self.progress.setRange(0, 0)
        self.progress.setMaximumWidth(160)
        self.progress.hide()
        self.statusBar().addPermanentWidget(self.progress)
        self.recent = RecentAgents.load()
        self._leaving = False  # unsaved edits were saved or discarded: closing may go on
        self.setAcceptDrops(True)  # an agent folder or .yaml file dropped on the window opens
        self._menus()
        self._approval_inbox()
        self._metrics_dashboards()
        self._gateway_view()

    def _menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        for text, shortcut, slot in (
            ("&Open Agent…", QKeySequence.StandardKey.Open, self.choose_agent),
            ("&New Chat", QKeySequence.StandardKey.New, self.new_chat),
            ("&Reopen Session…", QKeySequence("Ctrl+R"), self.choose_session),
            ("&Edit Agent", QKeySequence("Ctrl+E"), self.edit_agent),
            ("New &Agent…", QKeySequence("Ctrl+Shift+N"), self.create_agent),
            ("&Quit", QKeySequence.StandardKey.Quit, self.close),
        ):
            action = QAction(text, self)
            action.setShortcut(shortcut)
            action.triggered.connect(slot)
            file_menu.addAction(action)
        self._agent_file_menus(file_menu)
        self._task_menus(file_menu)

    def _agent_file_menus(self, file_menu: QMenu) -> None:
        """Open Recent and Clone Agent, placed after Open Agent."""
        self.recent_menu = RecentAgentsMenu(self.recent, self)
        self.recent_menu.chosen.connect(lambda path: self._spawn(self.open_agent(path)))
        clone = QAction("&Clone Agent…", self)
        clone.setShortcut(QKeySequence("Ctrl+Shift+C"))
        clone.setToolTip("Copy the open agent under a new name, then open the copy")
        clone.triggered.connect(self.clone_agent)
        after_open = file_menu.actions()[1]
        file_menu.insertMenu(after_open, self.recent_menu)
        file_menu.insertAction(after_open, clone)

    def _task_menus(self, file_menu: QMenu) -> None:
        """Run Task and Task Runs, placed before Quit; each run is a tab (see ui/tasks)."""
        self.task_runs = TaskRuns(self.tabs, self.bridge, self.statusBar().showMessage)
        self.task_runs.open_session_requested.connect(
            lambda session_id: self._spawn(self.reopen_session(session_id))
        )
        quit_action = file_menu.actions()[-1]
        for text, shortcut, slot, tip in (
            ("Run &Task…", "Ctrl+Shift+T", self.task_runs.choose_file, "Run a task file"),
            ("Task R&uns…", "Ctrl+Shift+U", self.task_runs.choose_run, "Show a task run"),
        ):
            action = QAction(text, self)
            action.setShortcut(QKeySequence(shortcut))
            action.setToolTip(tip)
            action.triggered.connect(slot)
            file_menu.insertAction(quit_action, action)
        file_menu.insertSeparator(quit_action)

    def _approval_inbox(self) -> None:
        """The inbox follows approvals from the start; its tab opens with Ctrl+Shift+I."""
        self.inbox = InboxView()
        self.inbox_controller = InboxController(self.inbox, self.bridge)
        self.inbox_controller.open_session_requested.connect(
            lambda session_id: self._spawn(self.reopen_session(session_id))
        )
        self.alerts = ApprovalAlerts(self, self.tabs, self.inbox, system_tray(self))
        self.inbox_controller.pending_changed.connect(self.alerts.show_pending)
        self.inbox_controller.arrived.connect(self.alerts.announce)
        view_menu = self._view_menu()
        show = QAction("&Approvals", self)
        show.setShortcut(QKeySequence("Ctrl+Shift+I"))
        show.setToolTip("The approval inbox of every session (Ctrl+Shift+I)")
        show.triggered.connect(self.show_inbox)
        view_menu.addAction(show)

    def show_inbox(self) -> None:
        if self.tabs.indexOf(self.inbox) < 0:
            self.tabs.addTab(self.inbox, "Approvals")
            self.alerts.show_on_tab()
        self.tabs.setCurrentWidget(self.inbox)
        self.inbox.current_table().setFocus()

    def _metrics_dashboards(self) -> None:
        """View > Dashboards (Ctrl+Shift+M); the tab is built the first time it is asked for."""
        self.dashboards: DashboardView | None = None
        self.dashboards_controller: DashboardController | None = None
        show = QAction("&Dashboards", self)
        show.setShortcut(QKeySequence("Ctrl+Shift+M"))
        show.setToolTip("Metrics of tasks and sessions, updated live (Ctrl+Shift+M)")
        show.triggered.connect(self.show_dashboards)
        self._view_menu().addAction(show)

    def _gateway_view(self) -> None:
        """View > Gateway (Ctrl+Shift+G): MCP clients supervised through `foundry gateway`."""
        self.gateway: GatewayView | None = None
        show = QAction("&Gateway", self)
        show.setShortcut(QKeySequence("Ctrl+Shift+G"))
        show.setToolTip("MCP clients connected through the gateway and their calls (Ctrl+Shift+G)")
        show.triggered.connect(self.show_gateway)
        self._view_menu().addAction(show)

    def show_gateway(self) -> None:
        if self.gateway is None:
            self.gateway = GatewayView(self.bridge.engine.store)
        if self.tabs.indexOf(self.gateway) < 0:
            self.tabs.addTab(self.gateway, "Gateway")
        self.tabs.setCurrentWidget(self.gateway)
        self.gateway.refresh()

    def _view_menu(self) -> QMenu:
        """The View menu, made by whichever part of the window needs it first."""
        if self._view is None:  # kept here: PySide6 before 6.12 frees what action.menu() returns
            self._view = self.menuBar().addMenu("&View")
        return self._view

    def show_dashboards(self) -> None:
        self._spawn(self.open_dashboards())

    async def open_dashboards(self) -> None:
        if self.dashboards is None:
            # pyqtgraph takes about a second to import: not at start-up, not on the GUI thread
            self._busy("Loading the dashboards…")
            try:
                module = await asyncio.to_thread(importlib.import_module, "foundry.ui.dashboards")
            except Exception as error:  # e.g. pyqtgraph missing: said, the window goes on
                self.statusBar().showMessage(f"Could not load the dashboards: {error}")
                return
            finally:
                self.progress.hide()
            self.statusBar().clearMessage()
        if self.dashboards is None:  # (not made meanwhile by a second request)
            self.dashboards = module.DashboardView()
            self.dashboards_controller = module.DashboardController(self.dashboards, self.bridge)
        if self.tabs.indexOf(self.dashboards) < 0:
            self.tabs.addTab(self.dashboards, "Dashboards")
        self.tabs.setCurrentWidget(self.dashboards)

    def _spawn(self, coroutine: Any) -> asyncio.Task[Any]:
        return self._tasks.spawn(coroutine)

    def choose_agent(self) -> None:
        dialog = QFileDialog(self, "Open an agent folder")
        dialog.setFileMode(QFileDialog.FileMode.Directory)
        dialog.fileSelected.connect(lambda path: self._spawn(self.open_agent(Path(path))))
        dialog.open()

    def new_chat(self) -> None:
        if self.agent is not None:
            self._spawn(self.start_chat())

    async def open_agent(self, path: Path) -> None:
        """Load an agent (off the GUI thread), show it, and start a chat with it; an agent that
        `foundry validate` rejects shows its problems instead."""
        try:
            document = await asyncio.to_thread(load_agent, path)
        except AgentError as error:
            self._show_problems(path, error.problems)
            return
        self.agent = document
        self._spawn(asyncio.to_thread(self.recent.add, document.path))
        self.agent_panel.setText(describe_agent(document))
        self.setWindowTitle(f"{document.agent.metadata.name} — Foundry")  # type: ignore[union-attr]
        await self.start_chat()

    async def start_chat(self) -> str | None:
        assert self.agent is not None
        self._busy("Starting the agent's tools and supervisors…")
        try:
            engine = self.bridge.engine
            session_id = await self.bridge.call(
                engine.open_session(self.agent.path, hold_untrusted=True)
            )
            trust = await self.bridge.call(engine.trust_check(session_id))
        except AgentError as error:  # the agent was changed on disk since it was opened
            self._show_problems(self.agent.path, error.problems)
            return None
        except Exception as error:  # shown to the user, the window goes on
            self.statusBar().showMessage(f"Could not start a chat: {error}")
            return None
        finally:
            self.progress.hide()
        self._add_tab(session_id, f"Chat {self.tabs.count() + 1}").show_trust(trust)
        self.statusBar().showMessage("Ready.", 3000)
        return session_id

    def _show_problems(self, path: Path, problems: list[AgentProblem]) -> None:
        """The agent panel lists why the agent at `path` cannot be used; no agent is open."""
        self.agent = None
        self.setWindowTitle("Foundry")
        self.agent_panel.setText(describe_problems(path, problems))
        count = f"{len(problems)} problem{'' if len(problems) == 1 else 's'}"
        self.statusBar().showMessage(f"Cannot open {path}: {count}, listed in the Agent panel")

    def _add_tab(self, session_id: str, title: str) -> SessionController:
        view = SessionView()
        controller = SessionController(view, self.bridge, session_id)
        self.controllers.append(controller)
        self.tabs.setCurrentIndex(self.tabs.addTab(view, title))
        view.input.setFocus()
        return controller

    def edit_agent(self) -> None:
        """Open the current agent in an editor tab (or show the one already open)."""
        if self.agent is None:
            self.statusBar().showMessage("Open an agent first (Ctrl+O).", 4000)
            return
        self._open_editor(self.agent)

    async def edit_agent_at(self, path: Path) -> None:
        """Open the agent at `path` in an editor tab (a supervisor's agent), without a chat."""
        try:
            document = await asyncio.to_thread(read_agent, path)
        except AgentError as error:
            self.statusBar().showMessage(f"Cannot open {path}: {error.problems[0]}")
            return
        self._open_editor(document)

    def _open_editor(self, document: AgentDocument) -> None:
        """An editor tab for `document`, or the one already showing it."""
        for index in range(self.tabs.count()):
            widget = self.tabs.widget(index)
            shown = widget.controller.document if isinstance(widget, AgentEditor) else None
            if shown is not None and shown.path == document.path:
                self.tabs.setCurrentIndex(index)
                return
        editor = AgentEditor(bridge=self.bridge)
        editor.load(document)
        index = self.tabs.addTab(editor, editor.title)
        editor.title_changed.connect(
            lambda title: self.tabs.setTabText(self.tabs.indexOf(editor), title)
        )
        editor.open_agent_requested.connect(lambda path: self._spawn(self.edit_agent_at(path)))
        self.tabs.setCurrentIndex(index)

    def create_agent(self) -> None:
        dialog = CreateAgentDialog(parent=self, folder=Path.home())
        dialog.created.connect(lambda document: self._spawn(self.open_agent(document.path)))
        dialog.open()

    def clone_agent(self) -> None:
        if self.agent is None:
            self.statusBar().showMessage("Open an agent first (Ctrl+O).", 4000)
            return
        dialog = CloneAgentDialog(self.agent, parent=self)
        dialog.created.connect(lambda document: self._spawn(self.open_agent(document.path)))
        dialog.open()

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if agent_paths_in(event.mimeData()):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        paths = agent_paths_in(event.mimeData())
        if paths:
            event.acceptProposedAction()
            self._spawn(self.open_agent(paths[0]))

    def choose_session(self) -> None:
        self._spawn(self._choose_session())

    async def _choose_session(self) -> None:
        store = self.bridge.engine.store
        records = await asyncio.to_thread(store.sessions.list, 200)  # not on the GUI thread
        dialog = SessionPicker(records, self)
        dialog.chosen.connect(lambda session_id: self._spawn(self.reopen_session(session_id)))
        dialog.open()

    async def reopen_session(self, session_id: str) -> None:
        """Show a persisted session where it was; an interrupted turn is finished."""
        existing = next((c for c in self.controllers if c.session_id == session_id), None)
        if existing is not None:
            self.tabs.setCurrentWidget(existing.view)
            return
        self._busy("Reopening the session…")
        engine = self.bridge.engine
        try:
            history = await self.bridge.call(engine.events(session_id))
            chat = await self.bridge.call(
                engine.reopen_session(session_id, history=history, hold_untrusted=True)
            )
            trust = await self.bridge.call(engine.trust_check(session_id))
        except Exception as error:  # shown to the user, the window goes on
            self.statusBar().showMessage(f"Could not reopen the session: {error}")
            return
        finally:
            self.progress.hide()
        controller = self._add_tab(session_id, f"{chat.agent.metadata.name} (reopened)")
        controller.load_history(history)
        controller.show_trust(trust)
        if engine.is_answering(session_id):  # a task's agent at work: follow it, do not resume
            self.statusBar().showMessage("This session is answering now; its reply streams in.")
        elif await self.bridge.call(engine.running_elsewhere(session_id)):
            self.statusBar().showMessage(
                "Another Foundry process is running this session's turn; it is followed here."
            )
            controller.follow()
        elif chat.needs_resume and not trust.trusted:
            self.statusBar().showMessage(
                "The last turn was interrupted; it finishes once you decide about the tools."
            )
        elif chat.needs_resume:
            self.statusBar().showMessage("The last turn was interrupted; finishing it…")
            controller.resume()

    def _busy(self, message: str) -> None:
        self.statusBar().showMessage(message)
        self.progress.show()

    def close_tab(self, index: int) -> None:
        view = self.tabs.widget(index)
        if view is not None and unsaved_editors([view]):
            self._spawn(self._close_tab_when_settled(view))
            return
        self._close_tab_now(index)

    async def _close_tab_when_settled(self, view: QWidget) -> None:
        """An editor with unsaved edits closes after they are saved or discarded."""
        editors = unsaved_editors([view])
        answer = await UnsavedQuestion(editors, self).answer()
        if answer == "cancel" or (answer == "save" and not await saved(editors)):
            return
        if self.tabs.indexOf(view) >= 0:
            self._close_tab_now(self.tabs.indexOf(view))

    def _close_tab_now(self, index: int) -> None:
        view = self.tabs.widget(index)
        chat = self._release(view)
        if chat is not None:
            self._spawn(self.bridge.call(self.bridge.engine.close_session(chat.session_id)))
        self.tabs.removeTab(index)
        if view is not None and view not in (self.inbox, self.dashboards):  # those two come back
            view.deleteLater()

    def _release(self, view: QWidget | None) -> SessionController | None:
        """Stop what a tab runs (an editor's tool servers, a task's updates); its chat, if any."""
        if isinstance(view, AgentEditor):
            view.controller.close()
        self.task_runs.forget(view)
        chat = next((c for c in self.controllers if c.view is view), None)
        if chat is not None:
            self.controllers.remove(chat)
            chat.close()
        return chat

    async def _close_when_settled(self, editors: list[AgentEditor]) -> None:
        answer = await UnsavedQuestion(editors, self).answer()
        if answer == "cancel" or (answer == "save" and not await saved(editors)):
            return
        self._leaving = True
        self.close()

    def current_view(self) -> QWidget | None:
        return self.tabs.currentWidget()

    def closeEvent(self, event: QCloseEvent) -> None:
        editors = unsaved_editors([self.tabs.widget(i) for i in range(self.tabs.count())])
        if editors and not self._leaving:
            event.ignore()  # asked first; the window closes again once the edits are settled
            self._spawn(self._close_when_settled(editors))
            return
        for index in range(self.tabs.count()):
            self._release(self.tabs.widget(index))
        if self.dashboards_controller is not None:
            self.dashboards_controller.close()
        self.inbox_controller.close()
        self.closed.set()
        super().closeEvent(event)
