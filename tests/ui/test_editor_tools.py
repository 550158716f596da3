"""The editor's tools section against the real time MCP server of the sample assistant."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from foundry.agent.document import read_agent
from foundry.agent.models import Agent, PolicyRule, PolicySupervisorEntry, StdioServer
from foundry.cli.supervision import audit_line
from foundry.store import Store
from foundry.supervision.resolution import resolve_approval
from foundry.ui.bridge import EngineBridge
from foundry.ui.editor import AgentEditor
from foundry.ui.editor.tool_form import ArgumentError, ToolForm, field_specs, parse_value

from .conftest import save_screenshot
from .test_editor import open_editor, problem_lines, save

pytestmark = pytest.mark.usefixtures("gui_loop")


@pytest.fixture
def assistant(sample_agents: Path) -> Path:
    return sample_agents / "assistant"


@pytest.fixture
def editor(qtbot: QtBot, bridge: EngineBridge, assistant: Path) -> Iterator[AgentEditor]:
    opened = open_editor(qtbot, assistant, bridge)
    opened.show_section("Tools")
    yield opened
    stopping = opened.controller.tools.close()
    assert stopping is not None
    stopping.result(timeout=30)


def state_of(editor: AgentEditor, server: str) -> str:
    model = editor.tools.server_model
    row = model.row_of(server)
    return model.rows[row].state if row is not None else "absent"


def start_time_server(qtbot: QtBot, editor: AgentEditor) -> None:
    assert editor.tools.start.isEnabled()
    editor.tools.start.click()
    qtbot.waitUntil(lambda: state_of(editor, "time") == "running", timeout=30000)
    qtbot.waitUntil(editor.tools.start.isVisible)  # the view settles after the call returns
    qtbot.waitUntil(lambda: not editor.tools.progress.isVisible(), timeout=10000)


def select_tool(editor: AgentEditor, tool: str) -> None:
    row = editor.tools.tool_model.row_of(tool)
    assert row is not None
    editor.tools.tools.selectRow(row)


def test_start_and_stop_change_the_status_and_list_the_tools(
    qtbot: QtBot, editor: AgentEditor, tmp_path: Path
) -> None:
    assert state_of(editor, "time") == "stopped"
    assert editor.tools.state.text() == "stopped"
    start_time_server(qtbot, editor)
    assert editor.tools.state.text() == "running — 2 tool(s)"
    assert [row.tool for row in editor.tools.tool_model.rows] == [
        "get_current_time",
        "convert_time",
    ]
    assert all(row.known for row in editor.tools.tool_model.rows)
    assert not editor.tools.start.isEnabled() and editor.tools.stop.isEnabled()
    assert "Running: 2 tool(s)" in editor.tools.log.toPlainText()
    save_screenshot(editor, tmp_path, "editor-tools.png")
    editor.tools.stop.click()
    qtbot.waitUntil(lambda: state_of(editor, "time") == "stopped", timeout=30000)
    qtbot.waitUntil(editor.tools.start.isEnabled, timeout=10000)
    assert "Stopping…" in editor.tools.log.toPlainText()
    assert not editor.tools.tool.run.isEnabled()


def test_a_tool_tried_through_its_form_gives_the_real_answer(
    qtbot: QtBot, editor: AgentEditor, tmp_path: Path
) -> None:
    start_time_server(qtbot, editor)
    select_tool(editor, "get_current_time")
    panel = editor.tools.tool
    assert list(panel.form.fields) == ["timezone"]
    panel.run.click()  # the required timezone is missing: nothing is called
    assert panel.result_title.text() == "Not called: timezone is required."
    panel.form.set_text("timezone", "Asia/Tokyo")
    panel.run.click()
    qtbot.waitUntil(lambda: panel.result_title.text().startswith("Answer from"), timeout=20000)
    assert panel.result_title.text().startswith("Answer from time.get_current_time in ")
    answer = json.loads(panel.result.toPlainText())
    assert answer["timezone"] == "Asia/Tokyo"
    save_screenshot(editor, tmp_path, "editor-tool-try.png")
    select_tool(editor, "convert_time")
    assert set(panel.form.fields) == {"source_timezone", "time", "target_timezone"}
    panel.form.set_text("source_timezone", "UTC")
    panel.form.set_text("time", "25:99")
    panel.form.set_text("target_timezone", "Europe/Paris")
    panel.run.click()
    qtbot.waitUntil(lambda: panel.result_title.text().startswith("Error from"), timeout=20000)
    assert "HH:MM" in panel.result.toPlainText()


def add_rule(editor: AgentEditor, rule: PolicyRule, without_l1: bool = False) -> None:
    """Put `rule` first in the agent's policy, in the editor only (unsaved), as its Policy page
    would; `without_l1`, a call no rule settles goes straight to a person."""

    def change(agent: Agent) -> None:
        entry = next(e for e in agent.supervisors if isinstance(e, PolicySupervisorEntry))
        entry.config.rules = [rule, *entry.config.rules]
        if without_l1:
            entry.config.supervisor_agent_path = None

    assert editor.controller.edit(("supervisors", 1, "config", "rules"), change)
    assert editor.modified


def try_in_tokyo(qtbot: QtBot, editor: AgentEditor, timezone: str = "Asia/Tokyo") -> None:
    select_tool(editor, "get_current_time")
    panel = editor.tools.tool
    panel.form.set_text("timezone", timezone)
    qtbot.waitUntil(panel.run.isEnabled, timeout=10000)
    panel.run.click()


def tried_traces(store: Store) -> list[dict[str, object]]:
    """The audit export's lines of the editor's tried calls, oldest first."""
    sessions = {s.id for s in store.sessions.list() if s.title.startswith("Try-it: Edit ")}
    traces = [t for t in reversed(store.traces.list()) if t.session_id in sessions]
    return [json.loads(audit_line(trace)) for trace in traces]


def test_a_tried_call_the_policy_denies_shows_the_rule_and_is_in_the_audit(
    qtbot: QtBot, editor: AgentEditor, bridge: EngineBridge, tmp_path: Path
) -> None:
    condition = {"param": "timezone", "op": "==", "value": "Asia/Tokyo"}
    no_tokyo = {"name": "no-time-in-tokyo", "tool": "time.get_current_time", "action": "deny"}
    add_rule(editor, PolicyRule.model_validate({**no_tokyo, "when": {"all": [condition]}}))
    start_time_server(qtbot, editor)
    panel = editor.tools.tool
    try_in_tokyo(qtbot, editor)
    qtbot.waitUntil(lambda: panel.result_title.text().startswith("Not called"), timeout=20000)
    assert panel.result_title.text() == "Not called: denied by policy:no-time-in-tokyo"
    assert "no-time-in-tokyo" in panel.result.toPlainText()
    save_screenshot(editor, tmp_path, "editor-tool-denied.png")
    try_in_tokyo(qtbot, editor, "Europe/Paris")
    qtbot.waitUntil(lambda: panel.result_title.text().startswith("Answer from"), timeout=20000)
    assert json.loads(panel.result.toPlainText())["timezone"] == "Europe/Paris"
    assert "allowed by policy:current-time-is-routine" in editor.tools.log.toPlainText()

    store = bridge.engine.store
    audit = tried_traces(store)
    assert [(line["tool"], line["decision"], line["policy_rule"]) for line in audit] == [
        ("time.get_current_time", "deny", "no-time-in-tokyo"),
        ("time.get_current_time", "allow", "current-time-is-routine"),
    ]
    (session,) = [s for s in store.sessions.list() if s.title.startswith("Try-it")]
    assert session.title == "Try-it: Edit Supervised Assistant"
    finished = store.events.list(session.id, kinds=("tool_call_finished",))
    assert [event.payload["is_error"] for event in finished] == [True, False]
    assert finished[0].payload["duration_s"] == 0.0  # nothing ran


def test_a_tried_call_that_needs_a_person_waits_for_the_inbox(
    qtbot: QtBot, editor: AgentEditor, bridge: EngineBridge, tmp_path: Path
) -> None:
    ask = {"name": "ask-for-tokyo", "tool": "time.get_current_time", "action": "human"}
    add_rule(editor, PolicyRule.model_validate(ask), without_l1=True)
    start_time_server(qtbot, editor)
    panel = editor.tools.tool
    try_in_tokyo(qtbot, editor)
    qtbot.waitUntil(lambda: panel.result_title.text().startswith("Waiting"), timeout=20000)
    assert "approval inbox (Ctrl+Shift+I)" in panel.result_title.text()
    assert panel.cancel.isEnabled()
    save_screenshot(editor, tmp_path, "editor-tool-waiting.png")
    store = bridge.engine.store
    (pending,) = store.approvals.list(status="pending")
    assert (pending.tool, pending.policy_rule) == ("time.get_current_time", "ask-for-tokyo")
    resolve_approval(store, pending.id, "approved", "tester", "fine")
    qtbot.waitUntil(lambda: panel.result_title.text().startswith("Answer from"), timeout=20000)
    assert json.loads(panel.result.toPlainText())["timezone"] == "Asia/Tokyo"
    assert [(line["decision"], line["level"]) for line in tried_traces(store)] == [
        ("allow", "human")
    ]
    try_in_tokyo(qtbot, editor)  # asked again, then cancelled here: the inbox drops it
    qtbot.waitUntil(lambda: panel.result_title.text().startswith("Waiting"), timeout=20000)
    panel.cancel.click()
    qtbot.waitUntil(lambda: not store.approvals.list(status="pending"), timeout=20000)
    assert panel.result_title.text().startswith("Cancelled")


def test_a_tool_permission_change_is_undoable_and_saved(
    qtbot: QtBot, editor: AgentEditor, assistant: Path
) -> None:
    start_time_server(qtbot, editor)
    select_tool(editor, "get_current_time")
    approval = editor.tools.tool.approval
    assert approval.currentData() is False  # serverToolDefaults.permissionRequired: false
    approval.setCurrentIndex(approval.findData(True))
    row = editor.tools.tool_model.rows[editor.tools.tool_model.row_of("get_current_time") or 0]
    assert row.permission_required and editor.modified
    editor.undo_action.trigger()
    assert approval.currentData() is False and not editor.modified
    editor.redo_action.trigger()
    assert approval.currentData() is True
    include = editor.tools.tool.include
    include.setCurrentIndex(include.findData("manual"))
    save(qtbot, editor)
    saved = json.loads((assistant / "tsagent.json").read_text())
    tools = saved["mcpServers"]["time"]["tools"]
    assert tools["get_current_time"] == {"permissionRequired": True, "include": "manual"}
    assert tools["convert_time"] == {"include": "agent"}
    reopened = open_editor(qtbot, assistant)
    reopened.show_section("Tools")
    select_tool(reopened, "get_current_time")
    assert reopened.tools.tool.approval.currentData() is True
    assert reopened.tools.tool.include.currentData() == "manual"


def test_servers_are_added_edited_and_removed(
    qtbot: QtBot, editor: AgentEditor, assistant: Path
) -> None:
    editor.tools.add_server.click()
    form = editor.tools.connection
    assert form.name.text() == "server" and form.command.text() == "python"
    form.name.setText("files")
    form.name.editingFinished.emit()
    form.args.setText('-m "my server" --root .')
    form.args.textEdited.emit(form.args.text())
    form.env.setPlainText("ROOT=/tmp\nTOKEN=env://FILES_TOKEN")
    assert [row.name for row in editor.tools.server_model.rows] == ["time", "files"]
    form.transport.setCurrentIndex(form.transport.findData("streamable-http"))
    assert not form.command.isVisibleTo(form) and form.url.isVisibleTo(form)
    form.url.setText("ftp://nowhere")
    form.url.textEdited.emit(form.url.text())
    qtbot.waitUntil(lambda: any("url" in line for line in problem_lines(editor)))
    form.url.setText("http://127.0.0.1:9/mcp")
    form.url.textEdited.emit(form.url.text())
    qtbot.waitUntil(lambda: not any("url" in line for line in problem_lines(editor)))
    form.transport.setCurrentIndex(form.transport.findData("stdio"))
    form.command.setText("uvx")
    form.command.textEdited.emit("uvx")
    save(qtbot, editor)
    agent = read_agent(assistant).agent
    assert agent is not None
    files = agent.mcp_servers["files"]
    assert isinstance(files, StdioServer) and files.command == "uvx"
    editor.tools.remove_server.click()
    assert [row.name for row in editor.tools.server_model.rows] == ["time"]
    editor.undo_action.trigger()
    assert [row.name for row in editor.tools.server_model.rows] == ["time", "files"]


def test_a_server_that_cannot_start_shows_why_in_words(
    qtbot: QtBot, editor: AgentEditor, tmp_path: Path
) -> None:
    editor.tools.add_server.click()
    form = editor.tools.connection
    form.command.setText("no-such-mcp-server-command")
    form.command.textEdited.emit(form.command.text())
    editor.tools.start.click()
    qtbot.waitUntil(lambda: state_of(editor, "server") == "failed", timeout=30000)
    assert editor.tools.state.text() == "failed to start"
    assert editor.tools.error.text() == (
        "The command 'no-such-mcp-server-command' was not found; is it installed and on PATH?"
    )
    editor.tools.tabs.setCurrentIndex(2)
    assert "Failed: the command" in editor.tools.log.toPlainText()
    save_screenshot(editor, tmp_path, "editor-tools-failed.png")


def test_the_form_reads_each_kind_of_field(qtbot: QtBot) -> None:
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "count": {"type": "integer"},
            "ratio": {"type": "number"},
            "loud": {"type": "boolean"},
            "unit": {"enum": ["s", "ms"]},
            "tags": {"type": "array", "items": {"type": "string"}},
            "extra": {"type": "object"},
            "maybe": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        },
        "required": ["name", "count"],
    }
    assert [spec.kind for spec in field_specs(schema)] == [
        "string",
        "integer",
        "number",
        "boolean",
        "enum",
        "strings",
        "json",
        "integer",
    ]
    form = ToolForm()
    qtbot.addWidget(form)
    form.build(schema)
    form.set_text("name", "a b")
    form.set_text("count", "3")
    form.set_text("ratio", "0.5")
    form.set_text("loud", "true")
    form.set_text("unit", "ms")
    form.set_text("tags", "x\n\ny\n")
    form.set_text("extra", '{"k": [1]}')
    assert form.arguments() == {
        "name": "a b",
        "count": 3,
        "ratio": 0.5,
        "loud": True,
        "unit": "ms",
        "tags": ["x", "y"],
        "extra": {"k": [1]},
    }
    form.set_text("count", "three")
    form.set_text("extra", "{")
    with pytest.raises(ArgumentError) as error:
        form.arguments()
    assert error.value.problems[0] == "count must be a whole number, not 'three'"
    assert error.value.problems[1].startswith("extra is not valid JSON")
    whole = field_specs({"type": "object"})
    assert parse_value(whole[0], '{"a": 1}') == {"a": 1}


def test_the_network_choice_is_shown_with_the_confinement_and_saved(
    qtbot: QtBot, editor: AgentEditor, assistant: Path, tmp_path: Path
) -> None:
    form = editor.tools.connection
    assert form.network.currentData() is None  # the time server's kind decides: no network
    qtbot.waitUntil(
        lambda: "Network refused: the time server does not need it" in form.confinement.text()
    )
    form.network.setCurrentIndex(form.network.findData(True))
    qtbot.waitUntil(lambda: "Network allowed: declared in the agent" in form.confinement.text())
    editor.tools.tabs.setCurrentIndex(1)
    save_screenshot(editor, tmp_path, "editor-tools-confinement.png")
    save(qtbot, editor)
    saved = json.loads((assistant / "tsagent.json").read_text())
    assert saved["mcpServers"]["time"]["confinement"] == {"network": True}
    form.network.setCurrentIndex(form.network.findData(None))
    save(qtbot, editor)
    assert (
        "confinement"
        not in json.loads((assistant / "tsagent.json").read_text())["mcpServers"]["time"]
    )
