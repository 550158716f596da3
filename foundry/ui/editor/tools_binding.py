"""ToolsBinding: the tools section <-> the working agent's MCP servers and their live runs."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import shlex
import time
from collections.abc import Callable, Coroutine
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import TypeAdapter
from pydantic.alias_generators import to_camel
from PySide6.QtCore import QItemSelection, QObject, Signal

from foundry.agent.models import (
    Agent,
    IncludeMode,
    McpServerConfig,
    ServerConfinement,
    StdioServer,
    ToolOverride,
)
from foundry.agent.names import free_name
from foundry.runtime.tool_servers import ToolServers, TriedCall
from foundry.session.events import ApprovalRequested, Event
from foundry.tools import ServerStatus, ToolInfo, resolve_tool_settings
from foundry.tools.confinement import confinement_for
from foundry.ui.bridge import EngineBridge
from foundry.ui.editor.sections import set_line
from foundry.ui.editor.tool_form import ArgumentError
from foundry.ui.editor.tools_models import ToolRow
from foundry.ui.editor.tools_section import ToolsSection

if TYPE_CHECKING:
    from foundry.ui.editor.controller import EditorController

SERVER_CONFIG: TypeAdapter[McpServerConfig] = TypeAdapter(McpServerConfig)
DEFAULT_URL = "http://127.0.0.1:8000/mcp"
ERROR_STYLE = "color: #c62828;"
OK_STYLE = "color: #2e7d32;"
NO_CALL = "No call yet."
NO_ENGINE = "Servers run on the engine: open the editor from the main window (Ctrl+E)."
WAITING = "Waiting for a person: approve or deny {tool} in the approval inbox (Ctrl+Shift+I)."


class ToolsBinding(QObject):
    """Shows the servers of the working agent; starts, stops and tries them through the
    engine's tool-servers service (runtime/tool_servers.py): a call tried here is decided by
    the agent's gate, traced and recorded, as a chat's is."""

    status_changed = Signal(object)  # a ServerStatus, emitted on the engine's thread

    def __init__(
        self, section: ToolsSection, editor: EditorController, bridge: EngineBridge | None
    ) -> None:
        super().__init__(section)
        self.section = section
        self.editor = editor
        self.bridge = bridge
        self.tool_servers = (
            ToolServers(bridge.engine, self.status_changed.emit) if bridge is not None else None
        )
        self.current: str | None = None
        self.current_tool: str | None = None
        self.known_tools: dict[str, tuple[ToolInfo, ...]] = {}
        self.logs: dict[str, list[str]] = {}
        self.busy: set[str] = set()
        self.tails: dict[str, str] = {}  # each server's error output, as last read
        self._call: asyncio.Task[None] | None = None
        self._connect()
        section.engine_note.setText("" if self.available else NO_ENGINE)
        section.engine_note.setVisible(not self.available)
        section.show_detail(False)

    @property
    def available(self) -> bool:
        return self.tool_servers is not None

    def _connect(self) -> None:
        section, form, tool = self.section, self.section.connection, self.section.tool
        self.status_changed.connect(self._status_arrived)
        if self.bridge is not None:
            self.bridge.event_arrived.connect(self._event_arrived)
        section.servers.selectionModel().selectionChanged.connect(self._server_selected)
        section.tools.selectionModel().selectionChanged.connect(self._tool_selected)
        section.add_server.clicked.connect(self.add_server)
        section.remove_server.clicked.connect(self.remove_server)
        section.start.clicked.connect(lambda: self._run_server(restart=False))
        section.restart.clicked.connect(lambda: self._run_server(restart=True))
        section.stop.clicked.connect(self.stop_server)
        section.refresh_log.clicked.connect(self.refresh_log)
        tool.include.currentIndexChanged.connect(
            lambda _: self._set_tool("include", IncludeMode(tool.include.currentData()))
        )
        tool.approval.currentIndexChanged.connect(
            lambda _: self._set_tool("permission_required", bool(tool.approval.currentData()))
        )
        tool.run.clicked.connect(self.run_tool)
        tool.run_shortcut.activated.connect(self.run_tool)
        tool.cancel.clicked.connect(self.cancel_call)
        form.name.editingFinished.connect(self._rename)
        form.transport.currentIndexChanged.connect(lambda _: self._change_transport())
        form.command.textEdited.connect(lambda text: self._set_server("command", text.strip()))
        form.args.textEdited.connect(self._args_typed)
        form.cwd.textEdited.connect(lambda text: self._set_server("cwd", text.strip() or None))
        form.env.textChanged.connect(self._env_typed)
        form.url.textEdited.connect(lambda text: self._set_server("url", text.strip()))
        form.network.currentIndexChanged.connect(lambda _: self._set_network())

    # -- showing --------------------------------------------------------------------------------

    def servers(self) -> dict[str, McpServerConfig]:
        return dict(self.editor.working.mcp_servers) if self.editor.working else {}

    def show(self, agent: Agent) -> None:
        """Show the agent's servers, keeping the selected one when it still exists."""
        servers = agent.mcp_servers
        if self.current not in servers:
            self.current = next(iter(servers), None)
        model = self.section.server_model
        model.set_servers([(name, config.type) for name, config in servers.items()])
        row = model.row_of(self.current) if self.current is not None else None
        if row is not None:
            self.section.servers.setCurrentIndex(model.index(row))
        self._show_server()

    def _show_server(self) -> None:
        name, config = self.current, self.servers().get(self.current or "")
        self.section.show_detail(config is not None)
        if name is None or config is None:
            return
        self.section.server_title.setText(name)
        self._show_state()
        self._fill_connection(name, config)
        self._show_tools()
        self._show_log()

    def _show_state(self) -> None:
        name = self.current
        if name is None:
            return
        row_number = self.section.server_model.row_of(name)
        if row_number is None:
            return
        row = self.section.server_model.rows[row_number]
        failed = row.state in ("failed", "crashed")
        detail = f" — {row.detail}" if row.detail and not failed else ""
        self.section.state.setText(f"{row.label}{detail}")
        self.section.state.setStyleSheet(ERROR_STYLE if failed else "")
        self.section.error.setText(_sentence(row.detail) if failed else "")
        self.section.error.setVisible(failed)
        busy = name in self.busy
        hosted = row.transport != "internal" and self.available
        self.section.progress.setVisible(busy)
        self.section.start.setEnabled(hosted and not busy and row.state != "running")
        self.section.stop.setEnabled(hosted and not busy and row.state in ("running", "starting"))
        self.section.restart.setEnabled(hosted and not busy)
        self._show_try_state()

    def _fill_connection(self, name: str, config: McpServerConfig) -> None:
        form = self.section.connection
        with self.editor.refresh_guard():
            form.name.setText(name)
            form.transport.setCurrentIndex(form.transport.findData(config.type))
            form.transport.setEnabled(config.type != "internal")
            form.show_transport(config.type)
            form.error.clear()
            if isinstance(config, StdioServer):
                set_line(form.command, config.command)
                if _split(form.args.text()) != config.args:
                    form.args.setText(shlex.join(config.args))
                set_line(form.cwd, config.cwd or "")
                if _env_lines(form.env.toPlainText()) != config.env:
                    form.env.setPlainText(
                        "\n".join(f"{key}={value}" for key, value in config.env.items())
                    )
                self._show_confinement(config)
            set_line(form.url, str(getattr(config, "url", "")))

    def _show_confinement(self, config: StdioServer) -> None:
        """The network choice as declared, and what the kernel will hold the server to (the
        editor starts a server in the agent's folder, as a chat does)."""
        form = self.section.connection
        declared = config.confinement.network if config.confinement else None
        form.network.setCurrentIndex(form.network.findData(declared))
        base_dir = self.editor.base_dir
        if base_dir is not None:
            self.editor.spawn(self._describe_confinement(self.current, config, base_dir))

    async def _describe_confinement(
        self, name: str | None, config: StdioServer, base_dir: Path
    ) -> None:
        """The sentence, worked out on a thread (finding the program and its installation reads
        files), shown if the same server is still the one on the page."""
        text = await asyncio.to_thread(
            lambda: confinement_for(config, base_dir, base_dir).describe()
        )
        if name == self.current:
            self.section.connection.confinement.setText(text)

    def _set_network(self) -> None:
        name = self.current
        config = self.servers().get(name or "")
        if name is None or not isinstance(config, StdioServer) or self.editor.refreshing:
            return
        network = self.section.connection.network.currentData()

        def change(agent: Agent) -> None:
            server = agent.mcp_servers[name]
            assert isinstance(server, StdioServer)
            current = server.confinement or ServerConfinement()
            declared = current.model_copy(update={"network": network})
            nothing = network is None and not (current.kind or current.read or current.write)
            server.confinement = None if nothing else declared
            if nothing:  # written back as absent, as the file had it, not as null
                server.model_fields_set.discard("confinement")

        if self.editor.edit(("mcpServers", name, "confinement", "network"), change):
            self._show_confinement(self.servers()[name])  # type: ignore[arg-type]

    def _show_tools(self) -> None:
        name, config = self.current, self.servers().get(self.current or "")
        if name is None or config is None:
            return
        listed = {tool.tool: tool for tool in self.known_tools.get(name, ())}
        names = [*listed, *(tool for tool in config.tools if tool not in listed)]
        rows = []
        for tool in names:
            settings = resolve_tool_settings(config, tool)
            info = listed.get(tool)
            description = info.description if info else ""
            rows.append(
                ToolRow(
                    tool, description, settings.include, settings.permission_required, bool(info)
                )
            )
        model = self.section.tool_model
        model.set_rows(rows)
        if self.current_tool not in names:
            self.current_tool = names[0] if names else None
        row = model.row_of(self.current_tool) if self.current_tool else None
        if row is not None:
            self.section.tools.selectRow(row)
        self._show_tool()

    def _show_tool(self) -> None:
        panel = self.section.tool
        config = self.servers().get(self.current or "")
        tool = self.current_tool
        panel.setEnabled(config is not None and tool is not None)
        if config is None or tool is None:
            panel.title.setText("No tools listed yet: start the server.")
            return
        listed = self.known_tools.get(self.current or "", ())
        info = next((known for known in listed if known.tool == tool), None)
        settings = resolve_tool_settings(config, tool)
        with self.editor.refresh_guard():
            panel.title.setText(f"{self.current}.{tool}")
            panel.description.setText(info.description if info else "")
            panel.include.setCurrentIndex(panel.include.findData(settings.include.value))
            panel.approval.setCurrentIndex(panel.approval.findData(settings.permission_required))
        if info is not None and panel.form.property("tool") != info.name:
            panel.form.build(info.parameters)
            panel.form.setProperty("tool", info.name)
        elif info is None:
            panel.form.build({"type": "object", "additionalProperties": False})
            panel.form.setProperty("tool", None)
        self._show_try_state()

    def _show_try_state(self) -> None:
        panel = self.section.tool
        status = self.section.server_model.status(self.current or "")
        running = status is not None and status.state == "running"
        calling = self._call is not None and not self._call.done()
        panel.run.setEnabled(running and self.current_tool is not None and not calling)
        panel.cancel.setEnabled(calling)
        if panel.result_title.text().startswith(NO_CALL):
            advice = "" if running else " Start the server to try its tools."
            panel.result_title.setText(NO_CALL + advice)

    def _show_log(self) -> None:
        name = self.current or ""
        lines = list(self.logs.get(name, []))
        status = self.section.server_model.status(name)
        tail = self.tails.get(name, "") or (status.stderr_tail if status else "")
        if tail:
            lines += ["", "Error output of the server (its last 4,000 bytes):", tail]
        text = "\n".join(lines)
        if self.section.log.toPlainText() != text:
            self.section.log.setPlainText(text)

    # -- selection ------------------------------------------------------------------------------

    def _server_selected(self, _selected: QItemSelection, _deselected: QItemSelection) -> None:
        rows = self.section.servers.selectionModel().selectedRows()
        if not rows or self.editor.refreshing:
            return
        name = self.section.server_model.rows[rows[0].row()].name
        if name != self.current:
            self.current, self.current_tool = name, None
            self._show_server()

    def _tool_selected(self, _selected: QItemSelection, _deselected: QItemSelection) -> None:
        rows = self.section.tools.selectionModel().selectedRows()
        if rows:
            tool = self.section.tool_model.rows[rows[0].row()].tool
            if tool != self.current_tool:
                self.current_tool = tool
                self._show_tool()

    # -- running servers ------------------------------------------------------------------------

    def _status_arrived(self, status: ServerStatus) -> None:
        self.section.server_model.set_status(status)
        if status.state == "running":
            self.known_tools[status.name] = status.tools
        if status.state != "starting":  # the action that started it is logged already
            self._log(status.name, _status_line(status))
        if status.name == self.current:
            self._show_state()
            if status.state in ("running", "failed"):
                self._show_tools()
            self._show_log()

    def _run_server(self, restart: bool) -> None:
        name, config = self.current, self.servers().get(self.current or "")
        base_dir = self.editor.base_dir
        if name is None or config is None or base_dir is None or config.type == "internal":
            return
        self._log(name, "Restarting…" if restart else "Starting…")
        self.editor.spawn(self._busy(name, self._start(name, config, base_dir)))

    async def _start(self, name: str, config: McpServerConfig, base_dir: Path) -> None:
        assert self.tool_servers is not None
        await self._on_engine(self.tool_servers.start(name, config, base_dir))  # statuses: signals
        await self._refresh_log(name)

    def stop_server(self) -> None:
        name = self.current
        if name is not None:
            self._log(name, "Stopping…")
            self.editor.spawn(self._busy(name, self._stop(name)))

    async def _stop(self, name: str) -> None:
        assert self.tool_servers is not None
        await self._on_engine(self.tool_servers.stop(name))
        await self._refresh_log(name)

    async def _busy(self, name: str, work: Any) -> None:
        self.busy.add(name)
        self._show_state()
        try:
            await work
        finally:
            self.busy.discard(name)
            self._show_state()

    def refresh_log(self) -> None:
        if self.current is not None and self.available:
            self.editor.spawn(self._refresh_log(self.current))

    async def _refresh_log(self, name: str) -> None:
        assert self.tool_servers is not None
        self.tails[name] = await self._on_engine(self.tool_servers.log_tail(name))
        self._show_log()

    async def _on_engine(self, coroutine: Coroutine[Any, Any, Any]) -> Any:
        if self.bridge is None:
            coroutine.close()
            raise RuntimeError(NO_ENGINE)
        return await self.bridge.call(coroutine)

    def _log(self, name: str, line: str) -> None:
        self.logs.setdefault(name, []).append(f"{time.strftime('%H:%M:%S')}  {line}")
        if name == self.current:
            self._show_log()

    # -- trying a tool --------------------------------------------------------------------------

    def run_tool(self) -> None:
        panel, server, tool = self.section.tool, self.current, self.current_tool
        if server is None or tool is None or not panel.run.isEnabled():
            return
        try:
            arguments = panel.form.arguments()
        except ArgumentError as error:
            panel.result_title.setText("Not called: " + "; ".join(error.problems) + ".")
            panel.result_title.setStyleSheet(ERROR_STYLE)
            return
        panel.result_title.setText(f"Calling {server}.{tool}…")
        panel.result_title.setStyleSheet("")
        self._call = self.editor.spawn(self._call_tool(server, tool, arguments))
        self._show_try_state()
        self.section.progress.show()

    async def _call_tool(self, server: str, tool: str, arguments: dict[str, Any]) -> None:
        panel = self.section.tool
        shown, working = self.editor.document, self.editor.working
        assert self.tool_servers is not None and shown is not None and working is not None
        document = replace(shown, agent=working.model_copy(deep=True))  # as the editor has it
        try:
            tried = await self._on_engine(
                self.tool_servers.try_call(document, server, tool, arguments)
            )
        except asyncio.CancelledError:
            panel.result_title.setText("Cancelled: the answer will be ignored.")
            raise
        finally:
            self._call = None
            self.section.progress.setVisible(server in self.busy)
            self._show_try_state()
        self._show_tried(server, tool, tried)

    def _show_tried(self, server: str, tool: str, tried: TriedCall) -> None:
        panel, result, decision = self.section.tool, tried.result, tried.decision
        if decision is not None and not decision.allowed:
            panel.result_title.setText(f"Not called: denied by {decision.by}")
            panel.result_title.setStyleSheet(ERROR_STYLE)
            panel.result.setPlainText(decision.reason or "No reason given.")
            self._log(server, f"{tool} denied by {decision.by}")
            return
        verdict = "Error from" if result.is_error else "Answer from"
        panel.result_title.setText(f"{verdict} {server}.{tool} in {tried.seconds:.2f} s")
        panel.result_title.setStyleSheet(ERROR_STYLE if result.is_error else OK_STYLE)
        panel.result.setPlainText(_result_text(result.text, result.structured))
        by = f" (allowed by {decision.by})" if decision is not None else ""
        self._log(server, f"{tool} answered in {tried.seconds:.2f} s{by}")

    def _event_arrived(self, event: Event) -> None:
        """A call tried here waits for a person: say so, and where to answer it."""
        body, servers = event.body, self.tool_servers
        if not isinstance(body, ApprovalRequested) or self._call is None or servers is None:
            return
        if event.session_id == servers.session_id:
            self.section.tool.result_title.setText(WAITING.format(tool=body.tool))
            self.section.tool.result_title.setStyleSheet("")
            self.section.tool.result.setPlainText(body.reason)

    def cancel_call(self) -> None:
        if self._call is not None:
            self._call.cancel()

    # -- editing --------------------------------------------------------------------------------

    def _edit_servers(self, key: tuple[str | int, ...], change: Callable[[Agent], None]) -> bool:
        return self.editor.edit(("mcpServers", *key), change, mergeable=False)

    def _set_server(self, field: str, value: Any) -> None:
        name = self.current
        if name is None or self.editor.refreshing:
            return
        self.editor.edit(
            ("mcpServers", name, to_camel(field)),
            lambda agent: setattr(agent.mcp_servers[name], field, value),
        )

    def _args_typed(self, text: str) -> None:
        try:
            args = shlex.split(text)
        except ValueError as error:
            self.section.connection.error.setText(f"Arguments: {error}; close the quote.")
            return
        self.section.connection.error.clear()
        self._set_server("args", args)

    def _env_typed(self) -> None:
        if self.editor.refreshing:
            return
        text = self.section.connection.env.toPlainText()
        bad = [line for line in text.splitlines() if line.strip() and "=" not in line]
        if bad:
            self.section.connection.error.setText(f"Environment: write NAME=value, not {bad[0]!r}")
            return
        self.section.connection.error.clear()
        self._set_server("env", _env_lines(text))

    def _set_tool(self, field: str, value: Any) -> None:
        server, tool = self.current, self.current_tool
        if server is None or tool is None or self.editor.refreshing:
            return

        def change(agent: Agent) -> None:
            config = agent.mcp_servers[server]
            override = config.tools.get(tool)
            data = override.model_dump(by_alias=True, exclude_unset=True) if override else {}
            data[to_camel(field)] = value
            config.tools = {**config.tools, tool: ToolOverride.model_validate(data)}

        if self._edit_servers((server, "tools", tool, to_camel(field)), change):
            self._show_tools()

    def _change_transport(self) -> None:
        name = self.current
        transport = self.section.connection.transport.currentData()
        config = self.servers().get(name or "")
        if name is None or config is None or self.editor.refreshing or config.type == transport:
            return
        replacement = _with_transport(config, transport)
        self._replace_servers((name,), lambda servers: {**servers, name: replacement}, select=name)

    def _rename(self) -> None:
        name = self.current
        new = self.section.connection.name.text().strip()
        if name is None or self.editor.refreshing or new == name:
            return
        if not new or "." in new or new in self.servers():
            self.section.connection.error.setText(
                f"Name: {new!r} is empty, has a dot or is taken; the name stays {name!r}."
            )
            return
        renamed = {(new if key == name else key): value for key, value in self.servers().items()}
        self._replace_servers((), lambda _: renamed, select=new)

    def add_server(self) -> None:
        if self.editor.working is None:
            return
        name = free_name("server", set(self.servers()))
        added = StdioServer(command="python", args=["my_mcp_server.py"])
        self._replace_servers((), lambda servers: {**servers, name: added}, select=name)
        self.section.tabs.setCurrentIndex(1)
        self.section.connection.name.setFocus()
        self.section.connection.name.selectAll()

    def remove_server(self) -> None:
        name = self.current
        if name is None:
            return
        kept = {key: value for key, value in self.servers().items() if key != name}
        self.current = None
        self._replace_servers((), lambda _: kept, select=None)
        if self.tool_servers is not None:
            self.editor.spawn(self._on_engine(self.tool_servers.stop(name)))
        self.section.server_model.forget(name)

    def _replace_servers(
        self,
        key: tuple[str | int, ...],
        servers: Callable[[dict[str, McpServerConfig]], dict[str, McpServerConfig]],
        select: str | None,
    ) -> None:
        replacement = servers(self.servers())
        previous, self.current = self.current, select
        if not self._edit_servers(key, lambda agent: setattr(agent, "mcp_servers", replacement)):
            self.current = previous
            return
        if self.editor.working is not None:
            with self.editor.refresh_guard():
                self.show(self.editor.working)

    def close(self) -> concurrent.futures.Future[None] | None:
        """Stop the servers this editor started (on the engine's loop; nothing waits here: the
        future tells when they have stopped)."""
        if self.bridge is None or self.tool_servers is None:
            return None
        return self.bridge.engine.submit(self.tool_servers.aclose())


def _split(text: str) -> list[str] | None:
    try:
        return shlex.split(text)
    except ValueError:
        return None


def _env_lines(text: str) -> dict[str, str]:
    pairs = (line.split("=", 1) for line in text.splitlines() if "=" in line)
    return {key.strip(): value.strip() for key, value in pairs if key.strip()}


def _with_transport(config: McpServerConfig, transport: str) -> McpServerConfig:
    """The same server reached another way; its tool settings are kept."""
    kept = config.model_dump(
        by_alias=True, exclude_unset=True, include={"server_tool_defaults", "tools"}
    )
    if transport == "stdio":
        reach: dict[str, Any] = {"command": "python", "args": []}
    else:
        reach = {"url": getattr(config, "url", DEFAULT_URL)}
    return SERVER_CONFIG.validate_python({"type": transport, **reach, **kept})


def _status_line(status: ServerStatus) -> str:
    if status.state == "running":
        names = ", ".join(tool.tool for tool in status.tools) or "none"
        return f"Running: {len(status.tools)} tool(s): {names}"
    if status.state == "failed":
        return f"Failed: {status.error or 'no reason given'}"
    return status.state.capitalize()


def _sentence(text: str) -> str:
    text = text.strip() or "no reason given"
    return text[0].upper() + text[1:] + ("" if text.endswith((".", "?", "!")) else ".")


def _result_text(text: str, structured: dict[str, Any] | None) -> str:
    if text.strip() or structured is None:
        return text
    return json.dumps(structured, indent=2, ensure_ascii=False)
