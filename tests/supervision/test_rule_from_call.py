"""Rules proposed from an approval's call: what they allow, and what they never widen to."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from foundry.agent.models import PolicyConfig, PolicyRule
from foundry.supervision.policy import PolicyEngine
from foundry.supervision.rule_from_call import NoRuleProposed, rule_from_call


def decide(rule: PolicyRule, workspace: Path, tool: str, params: dict[str, object]) -> str:
    engine = PolicyEngine(PolicyConfig(rules=[rule]), workspace)
    return engine.decide("Demo", tool, params).action


def test_a_rule_from_a_write_allows_that_folder_and_nothing_beside_it(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (tmp_path / "secret").mkdir()
    (notes / "escape").symlink_to(tmp_path / "secret")
    rule = rule_from_call("Demo", "files.write_file", {"path": str(notes / "a.md")}, [])
    assert rule.name == "allow-files-write_file-in-notes" and rule.action == "allow"
    assert rule.agent == "Demo" and rule.tool == "files.write_file"
    write = "files.write_file"
    assert decide(rule, tmp_path, write, {"path": str(notes / "b.md")}) == "allow"
    assert decide(rule, tmp_path, write, {"path": str(tmp_path / "secret" / "x")}) == "deny"
    assert decide(rule, tmp_path, write, {"path": str(notes / ".." / "secret" / "x")}) == "deny"
    assert decide(rule, tmp_path, write, {"path": str(notes / "escape" / "x")}) == "deny"
    assert decide(rule, tmp_path, "files.delete_file", {"path": str(notes / "b.md")}) == "deny"
    assert decide(rule, tmp_path, write, {"content": "no path at all"}) == "deny"
    other = PolicyEngine(PolicyConfig(rules=[rule]), tmp_path)
    assert other.decide("Intruder", write, {"path": str(notes / "b.md")}).action == "deny"


def test_the_folder_is_normalised_so_the_person_sees_where_it_really_is() -> None:
    rule = rule_from_call("Demo", "fs.write", {"path": "/srv/app/../../etc/cron.d/x"}, [])
    assert rule.when is not None and rule.when.all[0].value == "/etc/cron.d"
    assert rule.name == "allow-fs-write-in-cron-d"


def test_a_call_without_a_path_gets_a_rule_for_the_tool_and_a_free_name() -> None:
    taken = ["allow-time-get_current_time"]
    rule = rule_from_call("Demo", "time.get_current_time", {"timezone": "Asia/Tokyo"}, taken)
    assert rule.when is None and rule.name == "allow-time-get_current_time-2"
    relative = rule_from_call("Demo", "fs.read", {"path": "a.md"}, [], workspace=Path.cwd())
    assert relative.name == "allow-fs-read-in-workspace"
    assert relative.when is not None and relative.when.all[0].value == "."


# --- a path that leads out through a link: the rule names where it leads, never the link --------


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """`ws` with `src/a.py`, a link `escape` to a folder outside, a link `src/link.py` to a file
    outside, a link loop; `outside` beside it."""
    ws = tmp_path.resolve() / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "a.py").write_text("a\n")
    outside = tmp_path.resolve() / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n")
    (outside / "other.txt").write_text("other\n")
    (ws / "escape").symlink_to(outside, target_is_directory=True)
    (ws / "src" / "link.py").symlink_to(outside / "secret.txt")
    (ws / "loop").symlink_to(ws / "loop")
    return ws


def proposed(call: dict[str, str], ws: Path | None, **places: Any) -> str:
    rule = rule_from_call("Demo", "fs.read", call, [], workspace=ws, **places)
    assert rule.when is not None
    return str(rule.when.all[0].value)


@pytest.mark.parametrize(
    ("path", "folder"),
    [
        ("src/a.py", "src"),
        ("./src/../src/a.py", "src"),
        ("$WS/src/a.py", "src"),
        ("new.txt", "."),
        ("src/new/b.py", "src/new"),
        ("escape/secret.txt", "$OUT"),  # not `escape`: the link's name hides where it leads
        ("$WS/escape/secret.txt", "$OUT"),
        ("escape/new.txt", "$OUT"),
        ("src/link.py", "$OUT"),  # a link to a file outside: the file's own folder
        ("../outside/secret.txt", "$OUT"),
    ],
)
def test_the_rule_names_the_folder_the_path_really_lies_in(
    workspace: Path, path: str, folder: str
) -> None:
    out = str(workspace.parent / "outside")
    call = {"path": path.replace("$WS", str(workspace))}
    assert proposed(call, workspace) == folder.replace("$OUT", out)


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("escape/../src/a.py", "after a symbolic link"),
        ("loop/x", "loop"),
        ("src/a.py\x00", "NUL"),
    ],
)
def test_no_rule_is_proposed_for_a_path_that_cannot_be_judged(
    workspace: Path, path: str, why: str
) -> None:
    with pytest.raises(NoRuleProposed, match=why):
        proposed({"path": path}, workspace)


def test_no_rule_is_proposed_for_a_relative_path_to_a_server_elsewhere(workspace: Path) -> None:
    with pytest.raises(NoRuleProposed, match="unknown"):
        proposed({"path": "src/a.py"}, workspace, server_folders={"fs": None})


def test_a_rule_from_a_path_through_a_link_allows_nothing_the_person_did_not_see(
    workspace: Path,
) -> None:
    """With the workspace, the rule says the real folder (outside, in plain sight); without it
    (a relative path cannot be placed) it allows that one path: never `within escape`, which
    reads as a folder of the workspace and allows all of the folder outside."""
    out = workspace.parent / "outside"
    for ws in (workspace, None):
        rule = rule_from_call("Demo", "fs.read", {"path": "escape/secret.txt"}, [], workspace=ws)
        assert rule.when is not None and rule.when.all[0].value != "escape"
        engine = PolicyEngine(PolicyConfig(rules=[rule]), workspace)
        seen = engine.decide("Demo", "fs.read", {"path": "escape/secret.txt"})
        beside = engine.decide("Demo", "fs.read", {"path": "escape/other.txt"})
        assert seen.action == "allow"
        assert beside.action == ("allow" if ws else "deny")
        if ws is not None:
            assert rule.when.all[0].value == str(out) and rule.name.endswith("-in-outside")
    blind = rule_from_call("Demo", "fs.read", {"path": "escape/secret.txt"}, [])
    assert blind.name == "allow-fs-read-on-secret-txt"
