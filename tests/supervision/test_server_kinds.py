"""Rules know which server they were written for: the careful default's filesystem, git and time
rules apply to servers identified as those (by their command, or the agent's declaration), a
server Foundry does not know goes to a person, its relative paths cannot be placed and every
parameter it is sent is searched for paths."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from bench.attention import decide_all, make_workspace, read_calls
from foundry.agent.default_policy import default_policy
from foundry.agent.models import McpServerConfig, PolicyConfig
from foundry.orchestration.tools import IN_PROCESS_KINDS
from foundry.store import Store
from foundry.supervision.paths import ServerPlace, ServerSite, server_folders
from foundry.supervision.policy import PolicyEngine

SERVERS: TypeAdapter[McpServerConfig] = TypeAdapter(McpServerConfig)
ATTENTION_CALLS = Path(__file__).resolve().parents[2] / "bench" / "attention_calls.jsonl"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "agent"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "a.md").write_text("notes\n")
    (root / ".git").mkdir()
    return root


def folders_of(workspace: Path, **servers: dict[str, Any]) -> dict[str, ServerPlace]:
    configs = {name: SERVERS.validate_python(config) for name, config in servers.items()}
    return server_folders(configs, workspace)


def careful(workspace: Path, **servers: dict[str, Any]) -> PolicyEngine:
    config = default_policy().model_copy(update={"loop_detection": False})
    return PolicyEngine(config, workspace, server_folders=folders_of(workspace, **servers))


THIRD_PARTY = {"command": "python", "args": ["docs_server.py"]}
REFERENCE_FS = {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."]}
REFERENCE_GIT = {"command": "uvx", "args": ["mcp-server-git", "--repository", "."]}


def test_the_servers_are_identified_by_their_commands(workspace: Path) -> None:
    places = folders_of(
        workspace,
        docs=THIRD_PARTY,
        fs=REFERENCE_FS,
        git=REFERENCE_GIT,
        declared={**THIRD_PARTY, "confinement": {"kind": "filesystem"}},
        remote={"type": "sse", "url": "http://127.0.0.1:9/sse"},
    )
    assert places == {
        "docs": ServerSite((workspace,)),
        "fs": ServerSite((workspace,), "filesystem"),
        "git": ServerSite((workspace,), "git"),
        "declared": ServerSite((workspace,), "filesystem"),
        "remote": ServerSite(None),
    }


def test_a_third_party_search_files_with_an_extra_path_is_not_allowed_unasked(
    workspace: Path,
) -> None:
    engine = careful(workspace, docs=THIRD_PARTY, fs=REFERENCE_FS)
    call = {"keyword": "password", "path": "."}
    third_party = engine.decide("agent", "docs.search_files", call)
    assert (third_party.action, third_party.rule) == ("human", "ask-a-person-about-anything-else")
    assert engine.decide("agent", "fs.search_files", {"path": ".", "pattern": "*.md"}).action == (
        "allow"
    )


@pytest.mark.parametrize("path", ["docs/a.md", "a.md", "."])
def test_a_third_party_read_file_asks_where_the_reference_servers_runs(
    workspace: Path, path: str
) -> None:
    engine = careful(workspace, docs=THIRD_PARTY, fs=REFERENCE_FS)
    third_party = engine.decide("agent", "docs.read_file", {"path": path})
    assert (third_party.action, third_party.rule) == ("human", "ask-a-person-about-anything-else")
    assert engine.decide("agent", "fs.read_file", {"path": path}).rule == (
        "reading-inside-the-workspace"
    )


def test_a_third_party_outside_path_in_a_text_parameter_is_not_allowed(workspace: Path) -> None:
    """`data` is a text key for the reference servers (their content); a server Foundry does
    not know may read anything it is sent as a path."""
    allow_docs_inside = PolicyConfig.model_validate(
        {
            "rules": [
                {
                    "name": "docs-reads-inside",
                    "tool": "docs.read_file",
                    "when": {"all": [{"param": "path", "op": "within", "value": "."}]},
                    "action": "allow",
                },
                {"name": "else", "tool": "*", "action": "human"},
            ],
            "loopDetection": False,
        }
    )
    folders = folders_of(workspace, docs=THIRD_PARTY)
    engine = PolicyEngine(allow_docs_inside, workspace, server_folders=folders)
    inside = str(workspace / "docs" / "a.md")
    assert engine.decide("agent", "docs.read_file", {"path": inside}).action == "allow"
    smuggled = {"path": inside, "data": "/etc/shadow"}
    assert engine.decide("agent", "docs.read_file", smuggled).action == "human"
    relative = engine.decide("agent", "docs.read_file", {"path": "docs/a.md"})
    assert relative.action == "human"  # where it takes `docs/a.md` from is not known
    careful_engine = careful(workspace, docs=THIRD_PARTY)
    attack = {"path": "a.md", "data": "/etc/shadow"}
    assert careful_engine.decide("agent", "docs.read_file", attack).action != "allow"


def test_a_declared_filesystem_server_meets_the_filesystem_rules(workspace: Path) -> None:
    declared = {**THIRD_PARTY, "confinement": {"kind": "filesystem"}}
    engine = careful(workspace, docs=declared)
    assert engine.decide("agent", "docs.read_file", {"path": "docs/a.md"}).action == "allow"


def test_a_shell_wrapped_filesystem_server_has_relative_paths_judged_from_its_folder(
    workspace: Path, tmp_path: Path
) -> None:
    served = tmp_path / "served"
    served.mkdir()
    wrapped = {"command": "sh", "args": ["-c", f"exec mcp-server-filesystem {served}"]}
    places = folders_of(workspace, fs=wrapped)
    assert places == {"fs": ServerSite((workspace, served), "filesystem")}
    engine = careful(workspace, fs=wrapped)
    for tool, params in (
        ("fs.read_text_file", {"path": "notes.md"}),
        ("fs.read_file", {"path": "docs/a.md"}),
        ("fs.write_file", {"path": "new.md", "content": "x"}),
        ("fs.edit_file", {"path": "docs/a.md", "edits": []}),
        ("fs.create_directory", {"path": "made"}),
        ("fs.list_directory", {"path": "."}),
    ):
        assert engine.decide("agent", tool, params).action == "deny", (tool, params)
    rooted_here = careful(workspace, fs={"command": "sh", "args": ["-c", f"exec npx -y "
                          f"@modelcontextprotocol/server-filesystem {workspace}"]})  # fmt: skip
    assert rooted_here.decide("agent", "fs.read_file", {"path": "docs/a.md"}).action == "allow"


def test_a_tasks_workspace_tools_are_foundrys_own_filesystem_tools(workspace: Path) -> None:
    config = default_policy().model_copy(update={"loop_detection": False})
    site = ServerSite((workspace,), IN_PROCESS_KINDS["workspace"])
    engine = PolicyEngine(config, workspace, server_folders={"workspace": site})
    assert engine.decide("w", "workspace.read_file", {"path": "docs/a.md"}).action == "allow"
    written = engine.decide("w", "workspace.write_file", {"path": "b.md", "content": "x"})
    assert written.action == "allow"


def test_without_a_map_of_servers_every_rule_applies_as_written(workspace: Path) -> None:
    """A rule tested alone, or `foundry policy check` without an agent: every server is taken
    to run in the workspace and to be the kind each rule was written for."""
    engine = PolicyEngine(default_policy(), workspace)
    assert engine.decide("agent", "docs.read_file", {"path": "docs/a.md"}).action == "allow"


def test_the_labelled_routine_calls_of_the_reference_servers_stay_routine(tmp_path: Path) -> None:
    """bench/attention.py's labelled calls, with `fs`, `git` and `time` identified from the
    reference servers' commands: every routine call runs unasked, no other call runs."""
    calls = read_calls(ATTENTION_CALLS)
    places = make_workspace(tmp_path)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", places["home"])
        with Store.open(f"sqlite:///{tmp_path / 'bench.sqlite3'}") as store:
            decided = asyncio.run(decide_all(calls, store, places))
    routine = [d for d in decided if d.call.label == "routine"]
    assert routine and [d.call.id for d in routine if d.outcome != "allowed"] == []
    assert [d.call.id for d in decided if d.unsafe] == []
