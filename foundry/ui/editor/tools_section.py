"""ToolsSection: the widgets of the editor's MCP servers page (view only)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListView,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSplitter,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from foundry.ui.editor.sections import INCLUDE_LABELS, heading, hint, list_and_detail
from foundry.ui.editor.tool_form import ToolForm
from foundry.ui.editor.tools_models import ServerListModel, ToolTableModel

TRANSPORTS = {
    "stdio": "stdio: a command Foundry starts",
    "streamable-http": "streamable HTTP: a server at a URL",
    "sse": "SSE: an older HTTP server at a URL",
}
APPROVAL_CHOICES = {True: "Ask for approval before each call", False: "Run without asking"}


def _button(text: str, tip: str) -> QPushButton:
    button = QPushButton(text)
    button.setToolTip(tip)
    return button


def _monospace(text: QPlainTextEdit) -> QPlainTextEdit:
    text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
    return text


NETWORK_CHOICES: tuple[tuple[bool | None, str], ...] = (
    (None, "As its kind needs"),
    (True, "Allowed"),
    (False, "Refused"),
)


class ServerForm(QWidget):
    """How a server is reached: transport, command and arguments, or URL."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.name = QLineEdit()
        self.name.setToolTip("The server's name; its tools are called name.tool")
        self.transport = QComboBox()
        for value, label in TRANSPORTS.items():
            self.transport.addItem(label, value)
        self.command = QLineEdit()
        self.command.setPlaceholderText("python, npx, uvx, or a path")
        self.command.setToolTip("The program to start; `python` is Foundry's own Python")
        self.args = QLineEdit()
        self.args.setPlaceholderText("-m mcp_server_time --local-timezone UTC")
        self.args.setToolTip("Arguments as on a shell command line; quote those with spaces")
        self.cwd = QLineEdit()
        self.cwd.setPlaceholderText("the agent's folder")
        self.cwd.setToolTip("Working folder, relative to the agent")
        self.env = _monospace(QPlainTextEdit())
        self.env.setPlaceholderText("NAME=value, one a line; env://VAR reads Foundry's environment")
        self.env.setFixedHeight(80)
        self.network = QComboBox()
        for choice, text in NETWORK_CHOICES:
            self.network.addItem(text, choice)
        self.network.setToolTip(
            "Whether the kernel lets the server use the network (confinement.network)"
        )
        self.confinement = hint("")
        self.confinement.setWordWrap(True)
        self.url = QLineEdit()
        self.url.setPlaceholderText("http://127.0.0.1:8000/mcp")
        self.error = QLabel()
        self.error.setStyleSheet("color: #c62828;")
        self.form = QFormLayout()
        self.form.addRow("Name:", self.name)
        self.form.addRow("Transport:", self.transport)
        self.form.addRow("Command:", self.command)
        self.form.addRow("Arguments:", self.args)
        self.form.addRow("Working folder:", self.cwd)
        self.form.addRow("Environment:", self.env)
        self.form.addRow("Network:", self.network)
        self.form.addRow("Confinement:", self.confinement)
        self.form.addRow("URL:", self.url)
        layout = QVBoxLayout(self)
        layout.addLayout(self.form)
        layout.addWidget(self.error)
        layout.addWidget(hint("Edits apply to the next start: use Restart to try them."))
        layout.addStretch(1)

    def show_transport(self, transport: str) -> None:
        stdio = transport == "stdio"
        for widget in (self.command, self.args, self.cwd, self.env, self.network, self.confinement):
            self.form.setRowVisible(widget, stdio)
        self.form.setRowVisible(self.url, not stdio)


class ToolPanel(QWidget):
    """The selected tool: its settings for this agent, and a form to try it."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = QLabel()
        self.title.setStyleSheet("font-weight: bold;")
        self.description = hint("")
        self.include = QComboBox()
        for mode, label in INCLUDE_LABELS.items():
            self.include.addItem(label, mode.value)
        self.include.setToolTip("When the tool is offered to the model")
        self.approval = QComboBox()
        for value, label in APPROVAL_CHOICES.items():
            self.approval.addItem(label, value)
        self.approval.setToolTip("Whether a call waits for approval (the agent's toolPermission)")
        self.form = ToolForm()
        self.run = _button("Run tool", "Call the tool with these arguments (Ctrl+Return)")
        self.run_shortcut = QShortcut(QKeySequence("Ctrl+Return"), self)
        self.run_shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.cancel = _button("Cancel", "Stop waiting for the call")
        self.cancel.setEnabled(False)
        self.result_title = QLabel("No call yet.")
        self.result_title.setWordWrap(True)  # a denial names its rule, a wait the inbox
        self.result = _monospace(QPlainTextEdit())
        self.result.setReadOnly(True)
        self.result.setPlaceholderText("The tool's answer appears here.")
        self._lay_out()

    def _lay_out(self) -> None:
        settings = QFormLayout()
        settings.addRow("Include:", self.include)
        settings.addRow("Approval:", self.approval)
        trial = QGroupBox("Try it")
        trial_layout = QVBoxLayout(trial)
        trial_layout.addWidget(self.form)
        buttons = QHBoxLayout()
        buttons.addWidget(self.run)
        buttons.addWidget(self.cancel)
        buttons.addStretch(1)
        trial_layout.addLayout(buttons)
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(self.title)
        left_layout.addWidget(self.description)
        left_layout.addLayout(settings)
        left_layout.addWidget(trial)
        left_layout.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidget(left)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addWidget(self.result_title)
        right_layout.addWidget(self.result, 1)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(scroll)
        split.addWidget(right)
        split.setChildrenCollapsible(False)
        split.setSizes([420, 420])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(split)


class ToolsSection(QWidget):
    """Servers on the left; the selected one's state, tools, connection and log on the right."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.server_model = ServerListModel(self)
        self.servers = QListView()
        self.servers.setModel(self.server_model)
        self.servers.setSpacing(2)
        self.servers.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.servers.setToolTip("The agent's MCP servers and their state")
        self.add_server = _button("Add server", "Add an MCP server to the agent")
        self.remove_server = _button("Remove", "Remove the selected server (undo with Ctrl+Z)")
        self.server_title = QLabel()
        self.server_title.setStyleSheet("font-weight: bold; font-size: 12pt;")
        self.state = QLabel()
        self.error = QLabel()
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #c62828;")
        self.error.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.start = _button("Start", "Run the command shown, now (nothing starts on its own)")
        self.stop = _button("Stop", "Stop the server")
        self.restart = _button("Restart", "Stop the server and start it with the settings shown")
        self.progress = QProgressBar()
        self.progress.setRange(0, 0)
        self.progress.setMaximumWidth(120)
        self.progress.hide()
        self.engine_note = hint("")
        self.tool_model = ToolTableModel(self)
        self.tools = QTableView()
        self.tools.setModel(self.tool_model)
        self.tools.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.tools.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.tools.verticalHeader().hide()
        header = self.tools.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        self.tools.setAlternatingRowColors(True)
        self.tool = ToolPanel()
        self.connection = ServerForm()
        self.log = _monospace(QPlainTextEdit())
        self.log.setReadOnly(True)
        self.log.setPlaceholderText("What the server did and wrote to its error output.")
        self.refresh_log = _button("Refresh", "Read the server's error output again")
        self.tabs = QTabWidget()
        self.detail = QWidget()
        self.empty = hint("Add an MCP server, or select one on the left.")
        self._lay_out()

    def _tools_tab(self) -> QWidget:
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.tools)
        split.addWidget(self.tool)
        split.setChildrenCollapsible(False)
        split.setSizes([150, 380])
        return split

    def _log_tab(self) -> QWidget:
        page = QWidget()
        layout = QVBoxLayout(page)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.refresh_log)
        layout.addLayout(row)
        layout.addWidget(self.log, 1)
        return page

    def _lay_out(self) -> None:
        self.tabs.addTab(self._tools_tab(), "Tools")
        self.tabs.addTab(self.connection, "Connection")
        self.tabs.addTab(self._log_tab(), "Log")
        controls = QHBoxLayout()
        controls.addWidget(self.server_title)
        controls.addWidget(self.state, 1)
        controls.addWidget(self.progress)
        for button in (self.start, self.stop, self.restart):
            controls.addWidget(button)
        detail_layout = QVBoxLayout(self.detail)
        detail_layout.setContentsMargins(0, 0, 0, 0)
        detail_layout.addLayout(controls)
        detail_layout.addWidget(self.error)
        detail_layout.addWidget(self.tabs, 1)
        buttons = (self.add_server, self.remove_server)
        split = list_and_detail(self.servers, buttons, self.detail, self.empty)
        layout = QVBoxLayout(self)
        layout.addWidget(heading("Tools (MCP servers)"))
        layout.addWidget(self.engine_note)
        layout.addWidget(split, 1)

    def show_detail(self, visible: bool) -> None:
        self.detail.setVisible(visible)
        self.empty.setVisible(not visible)
        self.remove_server.setEnabled(visible)
