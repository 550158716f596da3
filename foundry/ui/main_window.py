"""The main window: the open agent on the left, its chat sessions as tabs.

The window is built and shown before the engine exists (`MainWindow()`), so that start-up shows
it at once: this module imports Qt and nothing heavy, and the parts that need the engine import
their modules when `attach` builds them. The app imports WINDOW_PARTS on a worker thread while
the engine starts, so that the GUI thread finds them loaded.
"""

from __future__ import annotations

import asyncio
import html
import importlib
import logging
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QSize, Qt
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

from foundry.ui.background import BackgroundTasks

if TYPE_CHECKING:
    from foundry.agent import AgentProblem
    from foundry.agent.document import AgentDocument
    from foundry.store.tables import ApprovalRecord
    from foundry.ui.bridge import EngineBridge
    from foundry.ui.dashboards import DashboardController, DashboardView
    from foundry.ui.editor import AgentEditor
    from foundry.ui.gateway_view import GatewayView
    from foundry.ui.inbox import ApprovalAlerts, InboxController, InboxView
    from foundry.ui.session.controller import SessionController
    from foundry.ui.tasks.runs import TaskRuns

# The modules the window imports in its methods, once the engine is attached.
WINDOW_PARTS = (
    "foundry.agent",
    "foundry.home",
    "foundry.ui.bridge",
    "foundry.ui.editor",
    "foundry.ui.gateway_view",
    "foundry.ui.help",
    "foundry.ui.inbox",
    "foundry.ui.recent",
    "foundry.ui.session.controller",
    "foundry.ui.session.picker",
    "foundry.ui.session.view",
    "foundry.ui.tasks.runs",
    "foundry.ui.unsaved",
)
NO_AGENT = "Open an agent to start (Ctrl+O)."
LOADING = "Loading the engine…"
DASHBOARDS_TIP = "Metrics of tasks and sessions, updated live"
TAB_TITLE_CHARACTERS = 32
GATEWAY_TIP = "MCP clients connected through the gateway and their calls"

log = logging.getLogger(__name__)


def import_dashboards() -> ModuleType:
    """foundry.ui.dashboards, with pyqtgraph and numpy: about a second (run off the GUI thread)."""
    return importlib.import_module("foundry.ui.dashboards")


def _failed(task: asyncio.Task[Any]) -> bool:
    return task.done() and (task.cancelled() or task.exception() is not None)


def _log_failed_preload(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("preloading the dashboards failed", exc_info=task.exception())


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


def describe_problems(path: Path, problems: list[AgentProblem], editable: bool = True) -> str:
    """The problems of an agent that cannot be used, as `foundry validate` prints them."""
    items = "".join(f"<li>{html.escape(str(problem))}</li>" for problem in problems)
    then = (
        "<p><a href='edit'>Open it in the editor to fix it</a> (Ctrl+E)</p>"
        if editable
        else "<p>Open another agent (Ctrl+O).</p>"
    )
    return (
        f"<h3>This agent cannot be used</h3><p style='color:#757575'>{html.escape(str(path))}</p>"
        "<p>Fix these problems, then open it again (<code>foundry validate</code> lists the "
        f"same):</p><ul>{items}</ul>{then}"
    )


def short_title(title: str) -> str:
    """A tab's title cut to a width a tab bar can hold; the whole one goes in its tip."""
    if len(title) <= TAB_TITLE_CHARACTERS:
        return title
    return title[: TAB_TITLE_CHARACTERS - 1] + "…"


class MainWindow(QMainWindow):
    """Without a bridge the window says that the engine is loading, and offers nothing that
    needs it until `attach` gives it one."""

    def __init__(self, bridge: EngineBridge | None = None) -> None:
        super().__init__()
        self.agent: AgentDocument | None = None
        self.broken_agent: Path | None = None  # an agent shown with its problems, to fix
        self.tab_agents: dict[QWidget, AgentDocument] = {}  # the agent of each chat tab
        self.closed = asyncio.Event()
        self.controllers: list[SessionController] = []
        self._tasks = BackgroundTasks("main window task", self.statusBar().showMessage)
        self._engine_actions: list[QAction] = []  # enabled once the engine is attached
        self.engine_ready = False
        self.dashboards: DashboardView | None = None
        self.dashboards_controller: DashboardController | None = None
        self._dashboards_loading: asyncio.Task[None] | None = None
        self.gateway: GatewayView | None = None
        self.setWindowTitle("Foundry")
        self.resize(1280, 800)
        self.tabs = QTabWidget()
        self.tabs.setTabsClosable(True)
        self.tabs.setDocumentMode(True)
        self.tabs.tabCloseRequested.connect(self.close_tab)
        self.tabs.currentChanged.connect(self._tab_shown)
        self.tabs.setElideMode(Qt.TextElideMode.ElideRight)
        self.setCentralWidget(self.tabs)
        self.agent_panel = QLabel(LOADING)
        self.agent_panel.setWordWrap(True)
        self.agent_panel.setAlignment(Qt.AlignmentFlag.AlignTop)
        self.agent_panel.setMargin(10)
        self.agent_panel.linkActivated.connect(self._panel_link)
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
        self._leaving = False  # unsaved edits were saved or discarded: closing may go on
        self.setAcceptDrops(True)  # an agent folder or .yaml file dropped on the window opens
        self._menus()
        if bridge is None:
            self._busy(LOADING)
        else:
            self.attach(bridge)

    def attach(self, bridge: EngineBridge) -> None:
        """The engine is there: build what needs it and enable the window's actions."""
        from foundry.ui.recent import RecentAgents

        self.bridge = bridge
        self.engine_ready = True
        self.recent = RecentAgents.load()
        self._recent_menu()
        self._task_runs()
        self._approval_inbox()
        for action in self._engine_actions:
            action.setEnabled(True)
        self.progress.hide()
        self.statusBar().clearMessage()
        self.agent_panel.setText(NO_AGENT)

    def engine_failed(self, error: Exception) -> None:
        """The engine could not start: said in the window, which offers only Quit."""
        self.progress.hide()
        self.agent_panel.setText(
            "<h3>The engine could not start</h3>"
            f"<p>{html.escape(str(error))}</p>"
            "<p><code>foundry doctor</code> checks the installation and says how to fix it.</p>"
        )
        self.statusBar().showMessage("The engine could not start; see the Agent panel.")

    def _engine_action(
        self,
        menu: QMenu,
        text: str,
        shortcut: QKeySequence | QKeySequence.StandardKey,
        slot: Any,
        tip: str = "",
    ) -> QAction:
        """An action of `menu` that needs the engine: disabled until the engine is attached."""
        action = QAction(text, self)
        action.setShortcut(shortcut)
        if tip:
            action.setToolTip(tip)
        action.triggered.connect(slot)
        action.setEnabled(False)
        menu.addAction(action)
        self._engine_actions.append(action)
        return action

    def _menus(self) -> None:
        """File (Open Recent comes with the engine) and View."""
        self._file_menu = file = self.menuBar().addMenu("&File")
        self._engine_action(file, "&Open Agent…", QKeySequence.StandardKey.Open, self.choose_agent)
        self._clone_action = self._engine_action(
            file,
            "&Clone Agent…",
            QKeySequence("Ctrl+Shift+C"),
            self.clone_agent,
            "Copy the open agent under a new name, then open the copy",
        )
        self._engine_action(file, "&New Chat", QKeySequence.StandardKey.New, self.new_chat)
        self._engine_action(file, "&Reopen Session…", QKeySequence("Ctrl+R"), self.choose_session)
        self._engine_action(file, "&Edit Agent", QKeySequence("Ctrl+E"), self.edit_agent)
        self._engine_action(file, "New &Agent…", QKeySequence("Ctrl+Shift+N"), self.create_agent)
        self._engine_action(
            file, "Run &Task…", QKeySequence("Ctrl+Shift+T"), self.run_task, "Run a task file"
        )
        self._engine_action(
            file, "Task R&uns…", QKeySequence("Ctrl+Shift+U"), self.show_task_run, "Show a task run"
        )
        self._engine_action(
            file,
            "C&lose Tab",
            QKeySequence("Ctrl+W"),
            self.close_current_tab,
            "Close the tab shown (an editor with unsaved edits asks first)",
        )
        file.addSeparator()
        quit_action = QAction("&Quit", self)
        quit_action.setShortcut(QKeySequence.StandardKey.Quit)
        quit_action.triggered.connect(self.close)
        file.addAction(quit_action)
        # kept on the window: PySide6 before 6.12 frees what action.menu() returns
        self._view_menu = view = self.menuBar().addMenu("&View")
        for text, shortcut, slot, tip in (
            ("&Approvals", "Ctrl+Shift+I", self.show_inbox, "The approval inbox of every session"),
            ("&Dashboards", "Ctrl+Shift+M", self.show_dashboards, DASHBOARDS_TIP),
            ("&Gateway", "Ctrl+Shift+G", self.show_gateway, GATEWAY_TIP),
        ):
            self._engine_action(view, text, QKeySequence(shortcut), slot, f"{tip} ({shortcut})")
        self._help_menu()

    def _help_menu(self) -> None:
        self._help = help_menu = self.menuBar().addMenu("&Help")
        shortcuts = QAction("&Keyboard Shortcuts", self)
        shortcuts.setShortcut(QKeySequence("Ctrl+/"))
        shortcuts.triggered.connect(self.show_shortcuts)
        about = QAction("&About Foundry", self)
        about.triggered.connect(self.show_about)
        help_menu.addAction(shortcuts)
        help_menu.addAction(about)

    def show_shortcuts(self) -> QWidget:
        from foundry.ui.help import show_shortcuts

        return show_shortcuts(self, (self._file_menu, self._view_menu, self._help))

    def show_about(self) -> QWidget:
        from foundry.home import FoundryHome
        from foundry.ui.help import show_about

        return show_about(self, str(FoundryHome.from_environment().data_dir))

    def _recent_menu(self) -> None:
        """File > Open Recent, placed after Open Agent."""
        from foundry.ui.recent import RecentAgentsMenu

        self.recent_menu = RecentAgentsMenu(self.recent, self)
        self.recent_menu.chosen.connect(lambda path: self._spawn(self.open_agent(path)))
        self._file_menu.insertMenu(self._clone_action, self.recent_menu)

    def _task_runs(self) -> None:
        """Each run of a task is a tab (see ui/tasks)."""
        from foundry.ui.tasks.runs import TaskRuns

        self.task_runs: TaskRuns = TaskRuns(self.tabs, self.bridge, self.statusBar().showMessage)
        self.task_runs.open_session_requested.connect(
            lambda session_id: self._spawn(self.reopen_session(session_id))
        )

    def run_task(self) -> None:
        self.task_runs.choose_file()

    def show_task_run(self) -> None:
        self.task_runs.choose_run()

    def _approval_inbox(self) -> None:
        """The inbox follows approvals from the start; its tab opens with Ctrl+Shift+I."""
        from foundry.ui.inbox import ApprovalAlerts, InboxController, InboxView, system_tray

        self.inbox: InboxView = InboxView()
        self.inbox_controller: InboxController = InboxController(self.inbox, self.bridge)
        self.inbox_controller.open_session_requested.connect(
            lambda session_id: self._spawn(self.reopen_session(session_id))
        )
        self.inbox_controller.make_rule_requested.connect(
            lambda record: self._spawn(self.make_rule(record))
        )
        self.alerts: ApprovalAlerts = ApprovalAlerts(self, self.tabs, self.inbox, system_tray(self))
        self.inbox_controller.pending_changed.connect(self.alerts.show_pending)
        self.inbox_controller.arrived.connect(self.alerts.announce)

    def show_inbox(self) -> None:
        if self.tabs.indexOf(self.inbox) < 0:
            self.tabs.addTab(self.inbox, "Approvals")
            self.alerts.show_on_tab()
        self.tabs.setCurrentWidget(self.inbox)
        self.inbox.current_table().setFocus()

    def show_gateway(self) -> None:
        from foundry.ui.gateway_view import GatewayView

        if self.gateway is None:
            self.gateway = GatewayView(self.bridge.engine.store)
        self._gateway_follows_agent()
        if self.tabs.indexOf(self.gateway) < 0:
            self.tabs.addTab(self.gateway, "Gateway")
        self.tabs.setCurrentWidget(self.gateway)

    def show_dashboards(self) -> None:
        self._spawn(self.open_dashboards())

    async def open_dashboards(self) -> None:
        first = self.dashboards is None
        if first:  # busy until the charts are drawn: the import, then the first read
            self._busy("Loading the dashboards…")
        try:
            await self._show_dashboards_tab()
        except Exception as error:  # e.g. pyqtgraph missing: said, the window goes on
            self.statusBar().showMessage(f"Could not load the dashboards: {error}")
            return
        finally:
            self.progress.hide()
        if first:
            self.statusBar().clearMessage()

    def preload_dashboards(self) -> asyncio.Task[None]:
        """Import pyqtgraph, build the dashboards and draw their charts, hidden, so that View >
        Dashboards only has to show them (the app calls it once the first chat is ready). A
        failure is logged; opening the dashboards then tries again and says why it fails."""
        loading = self._load_dashboards()
        loading.add_done_callback(_log_failed_preload)
        return loading

    def _load_dashboards(self) -> asyncio.Task[None]:
        """The one loading of the dashboards, shared by the preload and View > Dashboards (a
        new one after a failure)."""
        if self._dashboards_loading is None or _failed(self._dashboards_loading):
            self._dashboards_loading = asyncio.ensure_future(self._build_dashboards())
        return self._dashboards_loading

    async def _build_dashboards(self) -> None:
        # pyqtgraph takes about a second to import: not at start-up, not on the GUI thread
        module = await asyncio.to_thread(import_dashboards)
        view = await module.build_view()
        controller = module.DashboardController(view, self.bridge)
        await controller.update_before_shown()  # read and drawn while hidden
        size = self._size_as_tab(view)
        if size is not None:
            await view.lay_out_hidden(size)
        self.dashboards, self.dashboards_controller = view, controller

    def _size_as_tab(self, view: QWidget) -> QSize | None:
        """The size `view` will have as a tab: that of the open tabs, or wider if it needs more
        (its least width and the tab widget's frame around its pages: the window then makes
        room, the Agent panel narrows). None while no tab is open to tell."""
        page = self.tabs.currentWidget()
        if page is None:
            return None
        pages = page.parentWidget()  # the tab widget's stack of pages
        assert pages is not None
        frame = self.tabs.minimumSizeHint().width() - pages.minimumSizeHint().width()
        width = max(page.width(), view.minimumSizeHint().width() + frame)
        return QSize(width, page.height())

    async def _show_dashboards_tab(self) -> None:
        await asyncio.shield(self._load_dashboards())  # (a cancelled opening leaves it loading)
        view, controller = self.dashboards, self.dashboards_controller
        assert view is not None and controller is not None
        if self.tabs.indexOf(view) < 0:
            await controller.update_before_shown()  # drawn, then painted once
            if self.tabs.indexOf(view) < 0:  # (not added meanwhile by a second request)
                self.tabs.addTab(view, "Dashboards")
        self.tabs.setCurrentWidget(view)

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
        from foundry.agent import AgentError, load_agent

        try:
            document = await asyncio.to_thread(load_agent, path)
        except AgentError as error:
            await self._show_problems(path, error.problems)
            return
        self._show_agent(document)
        self._spawn(self.recent.remember(document.path))
        await self.start_chat()

    def _show_agent(self, document: AgentDocument) -> None:
        """`document` is the current agent: the Agent panel and the title show it."""
        self.agent = document
        self.broken_agent = None
        self.agent_panel.setText(describe_agent(document))
        self._gateway_follows_agent()
        self.setWindowTitle(f"{document.agent.metadata.name} — Foundry")  # type: ignore[union-attr]

    def _gateway_follows_agent(self) -> None:
        """The Gateway view's client configuration names the current agent (none if broken)."""
        if self.gateway is not None:
            self.gateway.set_agent(self.agent.path if self.agent is not None else None)

    def _tab_shown(self, index: int) -> None:
        """The Agent panel follows the selected tab: its chat's agent, or its editor's."""
        from foundry.ui.editor import AgentEditor

        widget = self.tabs.widget(index)
        document = self.tab_agents.get(widget) if widget is not None else None
        if isinstance(widget, AgentEditor):
            document = widget.controller.document
        if document is not None and document.agent is not None and document is not self.agent:
            self._show_agent(document)

    def _panel_link(self, link: str) -> None:
        if link == "edit" and self.broken_agent is not None:
            self._spawn(self.edit_agent_at(self.broken_agent))

    async def start_chat(self) -> str | None:
        from foundry.agent import AgentError

        assert self.agent is not None
        self._busy("Starting the agent's tools and supervisors…")
        try:
            engine = self.bridge.engine
            session_id = await self.bridge.call(
                engine.open_session(self.agent.path, hold_untrusted=True)
            )
            trust = await self.bridge.call(engine.trust_check(session_id))
        except AgentError as error:  # the agent was changed on disk since it was opened
            await self._show_problems(self.agent.path, error.problems)
            return None
        except Exception as error:  # shown to the user, the window goes on
            self.statusBar().showMessage(f"Could not start a chat: {error}")
            return None
        finally:
            self.progress.hide()
        controller = self._add_tab(session_id, self._chat_title(self.agent))
        self.tab_agents[controller.view] = self.agent
        controller.show_trust(trust)
        self.statusBar().showMessage("Ready.", 3000)
        return session_id

    async def _show_problems(self, path: Path, problems: list[AgentProblem]) -> None:
        """The agent panel lists why the agent at `path` cannot be used; no agent is open. One
        that is there opens in the editor to be fixed (an agent deleted has nothing to fix)."""
        there = await asyncio.to_thread(path.exists)
        self.agent = None
        self.broken_agent = path if there else None
        self._gateway_follows_agent()
        self.setWindowTitle("Foundry")
        self.agent_panel.setText(describe_problems(path, problems, editable=there))
        count = f"{len(problems)} problem{'' if len(problems) == 1 else 's'}"
        self.statusBar().showMessage(f"Cannot open {path}: {count}, listed in the Agent panel")

    def _add_tab(self, session_id: str, title: str) -> SessionController:
        from foundry.ui.session.controller import SessionController
        from foundry.ui.session.view import SessionView

        view = SessionView()
        controller = SessionController(view, self.bridge, session_id)
        self.controllers.append(controller)
        index = self.tabs.addTab(view, short_title(title))
        self.tabs.setTabToolTip(index, title)
        self.tabs.setCurrentIndex(index)
        view.input.setFocus()
        return controller

    def _chat_title(self, document: AgentDocument) -> str:
        """The agent's name, numbered from its second chat: "Assistant", "Assistant 2"."""
        name = document.agent.metadata.name if document.agent else document.path.name
        chats = sum(1 for shown in self.tab_agents.values() if shown.path == document.path)
        return name if chats == 0 else f"{name} {chats + 1}"

    def edit_agent(self) -> None:
        """Open the current agent in an editor tab (or show the one already open); an agent
        shown with its problems opens in the editor to be fixed."""
        if self.agent is None and self.broken_agent is not None:
            self._spawn(self.edit_agent_at(self.broken_agent))
            return
        if self.agent is None:
            self.statusBar().showMessage("Open an agent first (Ctrl+O).", 4000)
            return
        self._open_editor(self.agent)

    async def edit_agent_at(self, path: Path) -> None:
        """Open the agent at `path` in an editor tab (a supervisor's agent), without a chat."""
        from foundry.agent import AgentError, read_agent

        try:
            document = await asyncio.to_thread(read_agent, path)
        except AgentError as error:
            self.statusBar().showMessage(f"Cannot open {path}: {error.problems[0]}")
            return
        self._open_editor(document)

    async def make_rule(self, record: ApprovalRecord) -> None:
        """The policy of the approval's agent, open with a rule made from its call."""
        from foundry.agent import AgentError, read_agent

        session_id = record.session_id
        if session_id is None:
            self.statusBar().showMessage("This approval names no session, so no agent.", 6000)
            return
        session = await asyncio.to_thread(self.bridge.engine.store.sessions.get, session_id)
        try:
            document = await asyncio.to_thread(read_agent, Path(session.agent_path))
        except AgentError as error:
            self.statusBar().showMessage(f"Cannot open its agent: {error.problems[0]}", 8000)
            return
        editor = self._open_editor(document)
        await editor.controller.policy.propose_rule(
            record.agent_id, record.tool, dict(record.params), record.policy_rule
        )

    def _open_editor(self, document: AgentDocument) -> AgentEditor:
        """An editor tab for `document`, or the one already showing it."""
        from foundry.ui.editor import AgentEditor

        for index in range(self.tabs.count()):
            widget = self.tabs.widget(index)
            shown = widget.controller.document if isinstance(widget, AgentEditor) else None
            if isinstance(widget, AgentEditor) and shown and shown.path == document.path:
                self.tabs.setCurrentIndex(index)
                return widget
        editor = AgentEditor(bridge=self.bridge)
        editor.load(document)
        index = self.tabs.addTab(editor, "")
        self._retitle(editor, editor.title)
        editor.title_changed.connect(lambda title: self._retitle(editor, title))
        editor.open_agent_requested.connect(lambda path: self._spawn(self.edit_agent_at(path)))
        self.tabs.setCurrentIndex(index)
        return editor

    def _retitle(self, editor: QWidget, title: str) -> None:
        """An editor's tab, told apart from the chats of its agent (named after it too)."""
        index = self.tabs.indexOf(editor)
        if index >= 0:
            self.tabs.setTabText(index, short_title(f"Edit: {title}"))
            self.tabs.setTabToolTip(index, f"Edit: {title}")

    def create_agent(self) -> None:
        from foundry.ui.editor import CreateAgentDialog

        dialog = CreateAgentDialog(parent=self, folder=Path.home())
        dialog.created.connect(self.agent_created)
        dialog.open()

    def agent_created(self, document: AgentDocument) -> AgentEditor:
        """A new agent becomes the current one and opens in its editor, its policy shown."""
        if document.agent is not None:
            self._show_agent(document)
            self._spawn(self.recent.remember(document.path))
        editor = self._open_editor(document)
        editor.show_section("Policy")
        return editor

    def clone_agent(self) -> None:
        from foundry.ui.editor import CloneAgentDialog

        if self.agent is None:
            self.statusBar().showMessage("Open an agent first (Ctrl+O).", 4000)
            return
        dialog = CloneAgentDialog(self.agent, parent=self)
        dialog.created.connect(lambda document: self._spawn(self.open_agent(document.path)))
        dialog.open()

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if self._dropped_agents(event):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        paths = self._dropped_agents(event)
        if paths:
            event.acceptProposedAction()
            self._spawn(self.open_agent(paths[0]))

    def _dropped_agents(self, event: QDragEnterEvent | QDropEvent) -> list[Path]:
        """The agents being dragged, once the engine is there to open them."""
        if not self.engine_ready:
            return []
        from foundry.ui.recent import agent_paths_in

        return agent_paths_in(event.mimeData())

    def choose_session(self) -> None:
        self._spawn(self._choose_session())

    async def _choose_session(self) -> None:
        from foundry.ui.session.picker import SessionPicker

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
        self._spawn(self._remember_tab_agent(controller.view, session_id))
        controller.load_history(history)
        controller.show_trust(trust)
        if engine.is_answering(session_id):  # a task's agent at work: follow it, do not resume
            self.statusBar().showMessage("This session is answering now; its reply streams in.")
        elif await self.bridge.call(engine.running_elsewhere(session_id)):
            self.statusBar().showMessage(
                "Another Foundry process is running this session's turn; it is followed here."
            )
            controller.follow()
        elif chat.needs_resume and chat.owes_reply and not trust.trusted:
            self.statusBar().showMessage(
                "The last turn was interrupted; it finishes once you decide about the tools."
            )
        elif chat.needs_resume:
            self.statusBar().showMessage("The last turn was interrupted; finishing it…")
            controller.resume()

    async def _remember_tab_agent(self, view: QWidget, session_id: str) -> None:
        """A reopened chat's agent, read off the GUI thread, for the Agent panel."""
        from foundry.agent import AgentError, read_agent

        record = await asyncio.to_thread(self.bridge.engine.store.sessions.get, session_id)
        try:
            document = await asyncio.to_thread(read_agent, Path(record.agent_path))
        except AgentError:
            return  # the agent is gone or broken: the panel keeps what it shows
        if self.tabs.indexOf(view) >= 0:
            self.tab_agents[view] = document
            if self.tabs.currentWidget() is view and document.agent is not None:
                self._show_agent(document)

    def _busy(self, message: str) -> None:
        self.statusBar().showMessage(message)
        self.progress.show()

    def close_current_tab(self) -> None:
        if self.tabs.count():
            self.close_tab(self.tabs.currentIndex())

    def close_tab(self, index: int) -> None:
        from foundry.ui.unsaved import unsaved_editors

        view = self.tabs.widget(index)
        if view is not None and unsaved_editors([view]):
            self._spawn(self._close_tab_when_settled(view))
            return
        self._close_tab_now(index)

    async def _close_tab_when_settled(self, view: QWidget) -> None:
        """An editor with unsaved edits closes after they are saved or discarded."""
        from foundry.ui.unsaved import UnsavedQuestion, saved, unsaved_editors

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
        if view is not None and view not in (self.inbox, self.dashboards, self.gateway):
            view.deleteLater()  # (those three come back with their View action)

    def _release(self, view: QWidget | None) -> SessionController | None:
        """Stop what a tab runs (an editor's tool servers, a task's updates); its chat, if any."""
        from foundry.ui.editor import AgentEditor

        if isinstance(view, AgentEditor):
            view.controller.close()
        self.task_runs.forget(view)
        if view is not None:
            self.tab_agents.pop(view, None)
        chat = next((c for c in self.controllers if c.view is view), None)
        if chat is not None:
            self.controllers.remove(chat)
            chat.close()
        return chat

    async def _close_when_settled(self, editors: list[AgentEditor]) -> None:
        from foundry.ui.unsaved import UnsavedQuestion, saved

        answer = await UnsavedQuestion(editors, self).answer()
        if answer == "cancel" or (answer == "save" and not await saved(editors)):
            return
        self._leaving = True
        self.close()

    def current_view(self) -> QWidget | None:
        return self.tabs.currentWidget()

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self.engine_ready:  # nothing was opened yet
            self.closed.set()
            super().closeEvent(event)
            return
        from foundry.ui.unsaved import unsaved_editors

        editors = unsaved_editors([self.tabs.widget(i) for i in range(self.tabs.count())])
        if editors and not self._leaving:
            event.ignore()  # asked first; the window closes again once the edits are settled
            self._spawn(self._close_when_settled(editors))
            return
        for index in range(self.tabs.count()):
            self._release(self.tabs.widget(index))
        if self._dashboards_loading is not None:
            self._dashboards_loading.cancel()
        if self.dashboards_controller is not None:
            self.dashboards_controller.close()
        self.inbox_controller.close()
        self.closed.set()
        super().closeEvent(event)
