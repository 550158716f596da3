"""Rules proposed from an approval's call: what they allow, and what they never widen to."""

from __future__ import annotations

from pathlib import Path

from foundry.agent.models import PolicyConfig, PolicyRule
from foundry.supervision.policy import PolicyEngine
from foundry.supervision.rule_from_call import rule_from_call


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
    relative = rule_from_call("Demo", "fs.read", {"path": "a.md"}, [])
    assert relative.name == "allow-fs-read-in-workspace"
    assert relative.when is not None and relative.when.all[0].value == "."
