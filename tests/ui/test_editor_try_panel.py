"""The Policy page's try panel decides against the agent's own servers and workspace: it says
when no server of the agent offers the tool typed, completes the tools its servers offer, takes
a workspace, and decides again by itself after an edit or a reload."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from foundry.agent.models import IncludeMode
from foundry.tools import ToolInfo
from foundry.ui.editor import AgentEditor

from .conftest import save_screenshot
from .test_editor import make_agent, open_editor
from .test_editor_policy import rule_names, set_cell, try_call, with_file_server

pytestmark = pytest.mark.usefixtures("gui_loop")
SAMPLE = Path(__file__).resolve().parents[2] / "agents" / "assistant"


def time_tool(name: str) -> ToolInfo:
    return ToolInfo(
        name=f"time.{name}",
        server="time",
        tool=name,
        description="",
        parameters={"type": "object", "properties": {"timezone": {"type": "string"}}},
        include=IncludeMode.ALWAYS,
        permission_required=False,
    )


def test_a_tool_no_server_of_the_sample_offers_is_said_and_its_real_tools_complete(
    qtbot: QtBot, tmp_path: Path, sample_agents: Path
) -> None:
    path = sample_agents / "assistant"  # with the supervisors' agents beside it
    editor = open_editor(qtbot, path)
    editor.show_section("Policy")
    panel = editor.policy.try_panel
    qtbot.waitUntil(lambda: panel.tool_names.stringList() == ["time."], timeout=10000)

    verdict = try_call(qtbot, editor, "files.read_file", {"path": "notes/todo.md"})
    assert panel.offer.isVisibleTo(editor)
    assert panel.offer.text().startswith(
        "No server of this agent is named 'files' (its servers: time)"
    )
    assert "decided in" in verdict
    save_screenshot(editor, tmp_path, "policy-try-no-such-server.png")

    # once the Tools page has run the server, its tools complete, and one it lacks is said
    editor.controller.tools.known_tools["time"] = (
        time_tool("get_current_time"),
        time_tool("convert_time"),
    )
    editor.controller.policy.trying.agent_changed()
    assert panel.tool_names.stringList() == ["time.convert_time", "time.get_current_time"]
    panel.try_tool.setText("time.get_time")
    assert panel.offer.text() == (
        "The server 'time' does not offer 'get_time'; it offers convert_time, get_current_time."
    )
    panel.try_tool.setText("time.get_current_time")
    assert not panel.offer.isVisibleTo(editor)


def test_paths_are_judged_in_the_workspace_chosen(qtbot: QtBot, tmp_path: Path) -> None:
    path = with_file_server(make_agent(tmp_path / "agent"))
    elsewhere = tmp_path / "project"
    elsewhere.mkdir()
    editor = open_editor(qtbot, path)
    editor.show_section("Policy")
    panel = editor.policy.try_panel
    assert panel.workspace.placeholderText() == f"the agent's folder: {path}"
    note = {"path": str(elsewhere / "a.md"), "content": ""}

    outside = try_call(qtbot, editor, "files.write_file", note)
    panel.workspace.setText(str(elsewhere))  # the call tried is decided again, there
    qtbot.waitUntil(lambda: verdict_starts(editor, "ALLOWED"), timeout=10000)
    inside = try_call(qtbot, editor, "files.write_file", note)
    panel.workspace.setText(str(tmp_path / "missing"))
    panel.decide.click()
    qtbot.waitUntil(lambda: panel.verdict.text().startswith("Not decided"), timeout=10000)

    assert outside.startswith("DENIED (decided at L0, rule 'deny-writing-outside-the-workspace')")
    assert inside.startswith("ALLOWED (decided at L0, rule 'writing-inside-the-workspace')")
    assert panel.verdict.text() == (
        f"Not decided: the workspace {tmp_path / 'missing'} is not a folder."
    )


def with_time_server(path: Path) -> Path:
    """The agent gets the time server the sample runs (never started here): the default
    policy's time rules cover it."""
    config = json.loads((path / "tsagent.json").read_text())
    config["mcpServers"] = {"time": {"command": "python", "args": ["-m", "mcp_server_time"]}}
    (path / "tsagent.json").write_text(json.dumps(config, indent=2))
    return path


def verdict_starts(editor: AgentEditor, text: str) -> bool:
    return editor.policy.try_panel.verdict.text().startswith(text)


def test_a_tried_call_is_decided_again_after_an_edit_and_an_undo(
    qtbot: QtBot, tmp_path: Path
) -> None:
    editor = open_editor(qtbot, with_time_server(make_agent(tmp_path / "agent")))
    editor.show_section("Policy")
    tried = try_call(qtbot, editor, "time.get_current_time", {"timezone": "Europe/Paris"})
    assert tried.startswith("ALLOWED (decided at L0, rule 'current-time-is-routine')")

    set_cell(editor, rule_names(editor).index("current-time-is-routine"), 5, "deny")
    qtbot.waitUntil(lambda: verdict_starts(editor, "DENIED"), timeout=10000)
    editor.undo_action.trigger()
    qtbot.waitUntil(lambda: verdict_starts(editor, "ALLOWED"), timeout=10000)


def test_tried_and_replayed_calls_follow_the_agent_reloaded_from_disk(
    qtbot: QtBot, tmp_path: Path
) -> None:
    path = with_time_server(make_agent(tmp_path / "agent"))
    editor = open_editor(qtbot, path)
    editor.show_section("Policy")
    assert try_call(qtbot, editor, "time.get_current_time", {}).startswith("ALLOWED")
    panel = editor.policy.try_panel
    panel.replay.click()
    qtbot.waitUntil(lambda: "no recorded tool calls" in panel.replay_summary.text())
    sidecar = path / "foundry.json"  # where the policy tsagent has no place for is saved
    config = json.loads(sidecar.read_text())
    rules = config["supervisors"][0]["config"]["rules"]
    routine = next(rule for rule in rules if rule["name"] == "current-time-is-routine")
    routine["action"] = "human"
    panel.replay_summary.clear()
    sidecar.write_text(json.dumps(config, indent=2))  # nothing unsaved: reloads

    qtbot.waitUntil(
        lambda: verdict_starts(
            editor, "ASKS A PERSON (sent on to a person, rule 'current-time-is-routine')"
        ),
        timeout=10000,
    )
    qtbot.waitUntil(lambda: "no recorded tool calls" in panel.replay_summary.text())
