"""`foundry policy check` with the tools' definitions as the live gate has them: annotations and
input schemas on a call's line or in a server's tools/list (`--tools [SERVER=]FILE`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from foundry.cli import main

READ_ONLY_LOCAL = {"readOnlyHint": True, "openWorldHint": False}
NOTES_SCHEMA = {"type": "object", "properties": {"topic": {"type": "string"}}}


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, foundry_home: Path) -> Path:
    folder = tmp_path / "workspace"
    (folder / "src").mkdir(parents=True)
    monkeypatch.chdir(folder)
    return folder


def write_lines(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def checked(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, dict[str, Any]]:
    assert main(["policy", "check", *argv, "--no-l1", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    return {row["id"]: row for row in rows}


def test_a_calls_own_annotations_count_as_its_servers(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = [
        {"id": "declared", "tool": "notes.lookup", "params": {"topic": "x"},
         "annotations": READ_ONLY_LOCAL, "inputSchema": NOTES_SCHEMA},
        {"id": "undeclared", "tool": "wiki.lookup", "params": {"topic": "x"}},
        {"id": "open-world", "tool": "web.lookup", "params": {"topic": "x"},
         "annotations": {"readOnlyHint": True}},
    ]  # fmt: skip
    rows = checked(capsys, "--calls", str(write_lines(workspace.parent / "c.jsonl", calls)))
    assert rows["declared"]["outcome"] == "allow"
    assert rows["declared"]["rule"] == "tools-their-server-declares-read-only"
    assert rows["undeclared"]["outcome"] == "human"
    assert rows["open-world"]["outcome"] == "human"  # MCP's default: open-world


def test_a_lying_read_only_hint_does_not_carry_a_path_outside(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = [
        {"id": "inside", "tool": "notes.lookup", "params": {"path": "src/a.md"},
         "annotations": READ_ONLY_LOCAL},
        {"id": "outside", "tool": "notes.lookup", "params": {"path": "/etc/shadow"},
         "annotations": READ_ONLY_LOCAL},
        {"id": "hidden", "tool": "notes.lookup", "params": {"text": "see ../../etc/shadow"},
         "annotations": READ_ONLY_LOCAL},
    ]  # fmt: skip
    rows = checked(capsys, "--calls", str(write_lines(workspace.parent / "c.jsonl", calls)))
    assert rows["outside"]["outcome"] != "allow"
    assert rows["hidden"]["outcome"] != "allow"
    # an unknown server's relative path cannot be placed either: it is not judged inside
    assert rows["inside"]["outcome"] != "allow"


def test_a_servers_tools_list_gives_the_definitions_by_server(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    listing = {"tools": [{"name": "lookup", "inputSchema": NOTES_SCHEMA,
                          "annotations": READ_ONLY_LOCAL},
                         {"name": "erase", "inputSchema": NOTES_SCHEMA,
                          "annotations": {"destructiveHint": True}}]}  # fmt: skip
    tools = workspace.parent / "notes-tools.json"
    tools.write_text(json.dumps(listing))
    calls = [
        {"id": "lookup", "tool": "notes.lookup", "params": {"topic": "x"}},
        {"id": "erase", "tool": "notes.erase", "params": {"topic": "x"}},
        {"id": "elsewhere", "tool": "other.lookup", "params": {"topic": "x"}},
    ]
    path = str(write_lines(workspace.parent / "c.jsonl", calls))
    rows = checked(capsys, "--calls", path, "--tools", f"notes={tools}")
    assert (rows["lookup"]["outcome"], rows["erase"]["outcome"]) == ("allow", "human")
    assert rows["elsewhere"]["outcome"] == "human"  # the listing is the notes server's


def test_without_an_agent_a_server_is_the_kind_its_name_says(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = [
        {"id": "github", "tool": "github.get_issue", "params": {"owner": "a", "repo": "b",
                                                              "issue_number": 1}},
        {"id": "weather", "tool": "weather.get_forecast", "params": {"city": "Oslo"}},
        {"id": "fetch", "tool": "fetch.fetch", "params": {"url": "https://docs.python.org/3/"}},
        {"id": "metadata", "tool": "fetch.fetch", "params": {"url": "http://2852039166/"}},
    ]  # fmt: skip
    rows = checked(capsys, "--calls", str(write_lines(workspace.parent / "c.jsonl", calls)))
    assert (rows["github"]["outcome"], rows["github"]["rule"]) == (
        "allow",
        "github-get-tools-are-routine",
    )
    assert rows["weather"]["outcome"] == "human"
    assert rows["fetch"]["outcome"] == "allow"
    assert rows["metadata"]["outcome"] == "deny"


def test_a_tools_file_that_is_no_listing_is_one_line_and_a_failure(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tools = workspace.parent / "tools.json"
    tools.write_text('{"tools": [{"inputSchema": {}}]}')
    calls = write_lines(workspace.parent / "c.jsonl", [{"tool": "a.b"}])
    assert main(["policy", "check", "--calls", str(calls), "--tools", str(tools)]) == 1
    assert capsys.readouterr().err.strip() == f"foundry: {tools}: tool 1 has no name"
