"""The Policy page: rules as a table with each error at its cell, and the try panel that decides
typed and recorded calls under the policy as edited, before it is saved."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from foundry.agent.default_policy import default_policy
from foundry.agent.document import read_agent
from foundry.agent.models import IncludeMode, PolicyConfig, PolicyRule
from foundry.agent.templates import create_agent, new_agent
from foundry.llm.base import ToolCall
from foundry.session.events import ToolCallDecided, ToolServerChanged
from foundry.store import Store
from foundry.tools import ToolInfo
from foundry.ui.editor import AgentEditor

from .conftest import save_screenshot
from .test_editor import make_agent, open_editor, save

pytestmark = pytest.mark.usefixtures("gui_loop")


def policy(editor: AgentEditor) -> PolicyConfig:
    config = editor.controller.policy.config
    assert config is not None
    return config


def rule_names(editor: AgentEditor) -> list[str]:
    return [rule.name for rule in policy(editor).rules]


def cell(editor: AgentEditor, row: int, column: int) -> str:
    return str(editor.policy.rules_model.index(row, column).data())


def set_cell(editor: AgentEditor, row: int, column: int, value: str) -> None:
    model = editor.policy.rules_model
    assert model.setData(model.index(row, column), value, Qt.ItemDataRole.EditRole)


def with_file_server(path: Path) -> Path:
    """The agent gets a stdio server named `files` (never started here), declared a filesystem
    server: it runs in the agent's folder, so the policy can tell where its paths lead, and
    the default's filesystem rules apply to it."""
    config = json.loads((path / "tsagent.json").read_text())
    files = {"command": "python", "args": ["-m", "files_server"]}
    config["mcpServers"] = {"files": {**files, "confinement": {"kind": "filesystem"}}}
    (path / "tsagent.json").write_text(json.dumps(config, indent=2))
    return path


def try_call(qtbot: QtBot, editor: AgentEditor, tool: str, params: dict[str, object]) -> str:
    page = editor.policy.try_panel
    page.verdict.clear()
    page.try_tool.setText(tool)
    page.try_params.setPlainText(json.dumps(params))
    page.decide.click()
    qtbot.waitUntil(lambda: "decided in" in page.verdict.text(), timeout=10000)
    return page.verdict.text()


def test_the_rules_show_in_deciding_order_and_an_edited_cell_is_saved(
    qtbot: QtBot, tmp_path: Path
) -> None:
    path = make_agent(tmp_path / "rules")
    editor = open_editor(qtbot, path)
    editor.show_section("Policy")
    expected = [rule.name for rule in default_policy().rules]
    assert [cell(editor, row, 1) for row in range(len(expected))] == expected
    assert cell(editor, 0, 0) == "1"
    row = rule_names(editor).index("current-time-is-routine")
    set_cell(editor, row, 3, "clock.now")
    assert policy(editor).rules[row].tool == "clock.now"
    assert editor.undo_action.text() == "Undo: edit rule 'current-time-is-routine'"
    save(qtbot, editor)
    saved = read_agent(path).agent
    assert saved is not None
    assert saved.supervisors[0].config.rules[row].tool == "clock.now"  # type: ignore[union-attr]


def test_an_invalid_rule_name_stays_in_its_cell_in_red_and_the_save_waits(
    qtbot: QtBot, tmp_path: Path
) -> None:
    path = make_agent(tmp_path / "invalid")
    before = (path / "tsagent.json").read_text()
    editor = open_editor(qtbot, path)
    editor.show_section("Policy")
    set_cell(editor, 0, 1, "has spaces!")
    model = editor.policy.rules_model
    index = model.index(0, 1)
    assert index.data() == "has spaces!"
    assert index.data(Qt.ItemDataRole.BackgroundRole) is not None
    assert str(index.data(Qt.ItemDataRole.ToolTipRole)).startswith("Not valid: ")
    assert editor.modified
    editor.save_action.trigger()
    assert editor.status.text().startswith("Not saved: supervisors[0].config.rules[0].name")
    assert (path / "tsagent.json").read_text() == before
    set_cell(editor, 0, 5, "human")  # another cell's edit keeps the bad name where it is
    assert model.index(0, 1).data() == "has spaces!"
    set_cell(editor, 0, 1, "no-spaces")
    assert model.index(0, 1).data(Qt.ItemDataRole.BackgroundRole) is None
    save(qtbot, editor)
    assert "no-spaces" in (path / "foundry.json").read_text()  # the policy, beside tsagent.json


def test_a_tried_call_is_decided_under_the_edited_policy_before_it_is_saved(
    qtbot: QtBot, tmp_path: Path
) -> None:
    path = with_file_server(make_agent(tmp_path / "tried"))
    (path / "notes").mkdir()
    before = (path / "tsagent.json").read_text()
    editor = open_editor(qtbot, path)
    editor.show_section("Policy")
    outside = try_call(qtbot, editor, "files.write_file", {"path": "/etc/passwd", "content": ""})
    assert outside.startswith("DENIED (decided at L0, rule 'deny-writing-outside-the-workspace')")
    matched = rule_names(editor).index("deny-writing-outside-the-workspace")
    assert editor.policy.rules.selectionModel().selectedRows()[0].row() == matched
    note = str(path / "notes" / "a.md")
    escape = str(path / "notes" / ".." / ".." / "x")
    escaped = try_call(qtbot, editor, "files.write_file", {"path": escape, "content": ""})
    assert escaped.startswith("DENIED")  # '..' out of the workspace is outside
    inside = try_call(qtbot, editor, "files.write_file", {"path": note, "content": ""})
    assert inside.startswith("ALLOWED (decided at L0, rule 'writing-inside-the-workspace')")
    # a rule added above, not saved: the next try follows it
    editor.policy.rules.selectRow(rule_names(editor).index("writing-inside-the-workspace"))
    editor.policy.new_rule.click()
    row = editor.controller.policy.rule
    assert row is not None and rule_names(editor)[row] == "new-rule"
    set_cell(editor, row, 3, "*.write_file")
    set_cell(editor, row, 5, "deny")
    editor.policy.add_condition.click()
    conditions = editor.policy.conditions_model
    conditions.setData(conditions.index(0, 3), "notes")
    rule = policy(editor).rules[row]
    assert rule.when is not None and rule.when.all[0].value == "notes"
    again = try_call(qtbot, editor, "files.write_file", {"path": note, "content": ""})
    assert again.startswith("DENIED (decided at L0, rule 'new-rule')")
    assert (path / "tsagent.json").read_text() == before
    save_screenshot(editor, tmp_path, "policy-table-tried-call.png")


def test_a_condition_that_is_not_valid_is_flagged_at_its_cell(qtbot: QtBot, tmp_path: Path) -> None:
    path = make_agent(tmp_path / "regex")
    editor = open_editor(qtbot, path)
    editor.show_section("Policy")
    editor.policy.rules.selectRow(0)
    conditions = editor.policy.conditions_model
    assert conditions.rowCount() == 5 and conditions.index(0, 2).data() == "matches"
    conditions.setData(conditions.index(0, 3), "([unclosed")
    index = conditions.index(0, 3)
    assert index.data() == "([unclosed"
    assert "not a valid regular expression" in str(index.data(Qt.ItemDataRole.ToolTipRole))
    assert editor.modified
    editor.save_action.trigger()
    assert editor.status.text().startswith("Not saved: ")


def test_test_against_recorded_calls_lists_each_decision_that_would_change(
    qtbot: QtBot, tmp_path: Path
) -> None:
    path = with_file_server(make_agent(tmp_path / "recorded"))
    config = json.loads((path / "tsagent.json").read_text())
    time_server = {"command": "python", "args": ["-m", "mcp_server_time"]}  # the time rules' kind
    config["mcpServers"]["time"] = time_server
    (path / "tsagent.json").write_text(json.dumps(config, indent=2))
    with Store.open() as store:
        session = store.sessions.create(str(path.resolve()), "Demo", "earlier")
        for number, (tool, target, allowed) in enumerate(
            (
                ("time.get_current_time", None, True),
                ("files.read_file", "README.md", True),
                ("files.read_file", "/etc/shadow", False),
            )
        ):
            params = {"path": target} if target else {}
            call = ToolCall(id=f"c{number}", name=tool, arguments=params)
            body = ToolCallDecided(call=call, allowed=allowed, by="policy:x")
            store.events.append(session.id, body.kind, body.model_dump(mode="json"))
    editor = open_editor(qtbot, path)
    editor.show_section("Policy")
    qtbot.waitUntil(lambda: editor.policy.try_panel.recorded.count() == 4)
    row = rule_names(editor).index("current-time-is-routine")
    set_cell(editor, row, 5, "human")
    editor.policy.try_panel.replay.click()
    summary = editor.policy.try_panel.replay_summary
    qtbot.waitUntil(lambda: "decided differently" in summary.text(), timeout=10000)
    assert summary.text() == (
        "1 of 3 recorded calls would be decided differently (each decided when it was made)."
    )
    changed = editor.policy.try_panel.changed
    assert changed.rowCount() == 1
    assert [changed.item(0, c).text() for c in (0, 2, 3)] == [
        "time.get_current_time",
        "allow",
        "human",
    ]
    assert changed.item(0, 4).text().startswith("rule current-time-is-routine matched: ")
    assert changed.item(0, 2).toolTip() == "Decided then by policy:x"
    save_screenshot(editor, tmp_path, "policy-what-if.png")
    editor.policy.try_panel.recorded.setCurrentIndex(1)
    editor.policy.try_panel.recorded.activated.emit(1)
    qtbot.waitUntil(lambda: "decided in" in editor.policy.try_panel.verdict.text(), timeout=10000)
    assert editor.policy.try_panel.try_tool.text() == "files.read_file"


READ_SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}}


@pytest.mark.parametrize("schema_from", ["recorded", "listed", "nowhere"])
def test_recorded_repeats_with_a_junk_field_are_keyed_as_the_live_gate_keyed_them(
    qtbot: QtBot, tmp_path: Path, schema_from: str
) -> None:
    """Three reads of one file, each with another field the tool does not declare: the gate
    denied the third as a loop. The replay keys them on the tool's schema, recorded with the
    session or listed on the Tools page; known nowhere, it says it keyed on all arguments."""
    path = with_file_server(make_agent(tmp_path / "repeating"))
    schemas = {"files.read_file": READ_SCHEMA} if schema_from == "recorded" else {}
    with Store.open() as store:
        session = store.sessions.create(str(path.resolve()), "Demo", "earlier")
        started = ToolServerChanged(name="files", state="running", tools=schemas)
        store.events.append(session.id, started.kind, started.model_dump(mode="json"))
        for number in range(3):
            arguments = {"path": "README.md", "nonce": number}
            call = ToolCall(id=f"c{number}", name="files.read_file", arguments=arguments)
            body = ToolCallDecided(call=call, allowed=number < 2, by="policy:x")
            store.events.append(session.id, body.kind, body.model_dump(mode="json"))
    editor = open_editor(qtbot, path)
    if schema_from == "listed":  # as the Tools page keeps what a started server listed
        read = ToolInfo(
            name="files.read_file",
            server="files",
            tool="read_file",
            description="",
            parameters=READ_SCHEMA,
            include=IncludeMode.ALWAYS,
            permission_required=True,
        )
        editor.controller.tools.known_tools["files"] = (read,)
    editor.show_section("Policy")
    editor.policy.try_panel.replay.click()
    summary = editor.policy.try_panel.replay_summary
    qtbot.waitUntil(lambda: "decided differently" in summary.text(), timeout=10000)
    if schema_from == "nowhere":
        assert summary.text().startswith("1 of 3 recorded calls would be decided differently (")
        assert "keyed on all the arguments of files.read_file" in summary.text()
    else:
        assert summary.text().startswith("0 of 3 recorded calls would be decided differently (")
        assert "keyed on all" not in summary.text()


def test_reset_to_the_careful_default_and_an_agent_without_a_policy(
    qtbot: QtBot, tmp_path: Path
) -> None:
    path = tmp_path / "bare"
    create_agent(path, new_agent("Bare", "no policy", policy=False))
    editor = open_editor(qtbot, path)
    editor.show_section("Policy")
    assert editor.policy.add_policy.isVisibleTo(editor) and not editor.policy.body.isVisibleTo(
        editor
    )
    editor.policy.add_policy.click()
    assert editor.policy.body.isVisibleTo(editor)
    assert rule_names(editor) == [rule.name for rule in default_policy().rules]
    editor.policy.rules.selectRow(0)
    editor.policy.delete_rule.click()
    assert len(rule_names(editor)) == len(default_policy().rules) - 1
    editor.policy.reset.click()
    assert rule_names(editor) == [rule.name for rule in default_policy().rules]
    assert editor.undo_action.text().startswith("Undo: ")


def propose(qtbot: QtBot, editor: AgentEditor, params: dict[str, object]) -> PolicyRule | None:
    """The rule made from a call of `files.read_file` (selected once made), or None."""
    binding = editor.controller.policy
    binding.rule = None
    proposing = asyncio.ensure_future(binding.propose_rule("demo", "files.read_file", params, None))
    qtbot.waitUntil(proposing.done, timeout=10000)
    proposing.result()
    return None if binding.rule is None else policy(editor).rules[binding.rule]


def test_a_rule_made_from_a_call_through_a_link_names_the_folder_it_leads_to(
    qtbot: QtBot, tmp_path: Path
) -> None:
    """`escape` is a link out of the agent's folder: the rule must not say `within escape`,
    which would allow all of the folder outside, unseen; it names that folder."""
    path = with_file_server(make_agent(tmp_path / "linked"))
    outside = tmp_path / "outside" / "keys"
    outside.mkdir(parents=True)
    (path / "escape").symlink_to(outside, target_is_directory=True)
    editor = open_editor(qtbot, path)
    made = propose(qtbot, editor, {"path": "escape/key.pem"})
    assert made is not None and made.when is not None
    condition = made.when.all[0]
    assert (condition.param, condition.op, condition.value) == ("path", "within", str(outside))
    assert made.name.startswith("allow-files-read_file-in-keys")
    inside = propose(qtbot, editor, {"path": "notes/today.md"})  # relative to the workspace
    assert inside is not None and inside.when is not None
    assert inside.when.all[0].value == "notes"


def test_no_rule_is_made_from_a_call_whose_path_cannot_be_judged(
    qtbot: QtBot, tmp_path: Path
) -> None:
    path = with_file_server(make_agent(tmp_path / "looped"))
    (path / "loop").symlink_to(path / "loop")
    editor = open_editor(qtbot, path)
    names = rule_names(editor)
    assert propose(qtbot, editor, {"path": "loop/x"}) is None
    assert rule_names(editor) == names
    assert editor.policy.try_panel.verdict.text().startswith(
        "No rule was made from the approval: path"
    )


def test_each_rule_says_which_servers_it_covers(qtbot: QtBot, tmp_path: Path) -> None:
    editor = open_editor(qtbot, make_agent(tmp_path / "servers"))
    editor.show_section("Policy")
    servers = {name: cell(editor, row, 6) for row, name in enumerate(rule_names(editor))}
    hinted = next(rule for rule in policy(editor).rules if rule.hints)
    github = next(rule for rule in policy(editor).rules if rule.kind == "github")

    assert servers["ask-a-person-about-anything-else"] == "any"
    assert servers[github.name] == "github servers"
    assert all(f"{hint}: {str(value).lower()}" in servers[hinted.name]
               for hint, value in (hinted.hints or {}).items())  # fmt: skip
    editor.resize(1300, 700)
    qtbot.wait(50)
    save_screenshot(editor, tmp_path, "editor-policy-servers.png")
