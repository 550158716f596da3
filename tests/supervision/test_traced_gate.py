"""Decisions of the toolPermission gate (terminal y/N, --yes) leave a trace like the hierarchy's."""

from __future__ import annotations

from pathlib import Path

import pytest

from foundry.agent.models import ToolPermission
from foundry.cli import main
from foundry.llm.base import ToolCall
from foundry.session.gate import GateDecision, PermissionGate
from foundry.store import Store
from foundry.supervision.tracing import TracedGate
from tests.runtime.conftest import TIME_SERVER, TOKYO_TURNS, write_agent

SECRET = "s3cr3t-" + "x" * 300  # long enough to be redacted


async def refuse(call: ToolCall) -> GateDecision:
    return GateDecision(allowed=False, by="human:terminal", reason="refused")


async def test_a_person_answering_at_the_terminal_is_traced_without_the_content(
    tmp_path: Path,
) -> None:
    with Store.open(f"sqlite:///{tmp_path / 's.db'}") as store:
        gate = TracedGate(PermissionGate(ToolPermission.ALWAYS, refuse), store, "helper", "s1")
        call = ToolCall(id="c1", name="fs.write_file", arguments={"path": "a", "content": SECRET})
        decision = await gate.review(call, permission_required=True)
        [trace] = store.traces.list("helper")
    assert not decision.allowed
    assert (trace.decision, trace.resolved_level, trace.resolved_by) == (
        "deny",
        "human",
        "human:terminal",
    )
    assert SECRET not in str(trace.params)


async def test_a_call_the_permission_lets_through_is_traced_as_policy(tmp_path: Path) -> None:
    with Store.open(f"sqlite:///{tmp_path / 's.db'}") as store:
        gate = TracedGate(PermissionGate(ToolPermission.NEVER), store, "helper", "s1")
        await gate.review(ToolCall(id="c1", name="time.now", arguments={}), False)
        [trace] = store.traces.list("helper")
    assert (trace.resolved_level, trace.resolved_by) == ("policy", "policy:toolPermission")


def test_run_yes_leaves_an_audit_trace(
    tmp_path: Path, foundry_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = {
        **TIME_SERVER,
        "serverToolDefaults": {"permissionRequired": True, "include": "always"},
    }
    agent = write_agent(tmp_path / "tokyo", TOKYO_TURNS, servers={"time": server})
    assert main(["run", str(agent), "-m", "What time is it in Tokyo?", "--yes"]) == 0
    capsys.readouterr()
    assert main(["audit", "export"]) == 0
    out = capsys.readouterr().out
    assert '"resolved_by": "cli:--yes"' in out and '"tool": "time.get_current_time"' in out
