"""The policy supervisor's shadow-mode switch: off by default, saved in the sidecar, its cost said
beside it (or why it cannot run)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from foundry.agent.document import read_agent
from foundry.agent.models import PolicyConfig
from foundry.agent.templates import create_agent, new_agent
from foundry.store import ApprovalRecord
from foundry.ui.bridge import EngineBridge
from foundry.ui.editor import AgentEditor

from .conftest import save_screenshot
from .test_editor import open_editor, save

pytestmark = pytest.mark.usefixtures("gui_loop")


def agents(tmp_path: Path, judge_model: str | None) -> Path:
    """A worker whose policy names a supervisor agent judging with `judge_model` (None: the
    worker has no supervisor)."""
    worker = new_agent("Worker")
    if judge_model is not None:
        judge = new_agent("Judge")
        judge.settings.model = judge_model
        create_agent(tmp_path / "judge", judge)
        policy = worker.supervisors[0].config
        assert isinstance(policy, PolicyConfig)
        policy.supervisor_agent_path = "../judge"
    create_agent(tmp_path / "worker", worker)
    return tmp_path / "worker"


def policy_form(qtbot: QtBot, editor: AgentEditor) -> object:
    editor.show_section("Supervisors")
    editor.supervisors.entries.setCurrentRow(0)
    form = editor.supervisors.forms.policy
    qtbot.waitUntil(lambda: editor.supervisors.forms.stack.currentWidget() is form)
    return form


def test_shadow_mode_is_off_and_turned_on_in_the_form_it_is_saved(
    qtbot: QtBot, tmp_path: Path
) -> None:
    path = agents(tmp_path, None)
    editor = open_editor(qtbot, path)
    form = editor.supervisors.forms.policy
    policy_form(qtbot, editor)
    assert not form.shadow_mode.isChecked()
    assert form.shadow_cost.text().startswith("No L1 supervisor is set")
    form.shadow_mode.setChecked(True)
    save(qtbot, editor)

    sidecar = json.loads((path / "foundry.json").read_text())
    [entry] = [item for item in sidecar["supervisors"] if item["type"] == "policy"]
    assert entry["config"]["shadowMode"] is True
    saved = read_agent(path).agent
    assert saved is not None
    policy = saved.supervisors[0].config
    assert isinstance(policy, PolicyConfig) and policy.shadow_mode


def test_the_embedded_model_is_said_to_be_unable_to_judge(qtbot: QtBot, tmp_path: Path) -> None:
    editor = open_editor(qtbot, agents(tmp_path, "embedded:smollm2"))
    form = editor.supervisors.forms.policy
    policy_form(qtbot, editor)
    qtbot.waitUntil(lambda: form.shadow_cost.text() != "")
    assert form.shadow_cost.text().startswith("The embedded model cannot judge calls")


def test_the_cost_so_far_is_read_from_the_recorded_verdicts(
    qtbot: QtBot, tmp_path: Path, bridge: EngineBridge
) -> None:
    store = bridge.engine.store
    for seconds, tokens in ((1.0, 100), (2.0, 140), (4.0, 180)):
        approval = store.approvals.create(
            ApprovalRecord(agent_id="Worker", tool="notes.add", params={})
        )
        verdict = {
            "decision": "approve",
            "confidence": 0.9,
            "reasoning": "r",
            "supervisor": "agent:supervisor",
            "seconds": seconds,
            "tokens": tokens,
        }
        store.approvals.keep_shadow_verdict(approval.id, verdict)
        store.approvals.resolve(approval.id, "approved", "human:ana")
    editor = open_editor(qtbot, agents(tmp_path, "ollama:llama3.2"), bridge)
    form = editor.supervisors.forms.policy
    policy_form(qtbot, editor)
    qtbot.waitUntil(lambda: "so far" in form.shadow_cost.text())
    assert form.shadow_cost.text() == (
        "One supervisor model call per question; so far: median 2.0 s, 140 tokens."
    )
    form.shadow_mode.setChecked(True)
    save_screenshot(editor.supervisors, tmp_path, "policy-shadow-mode.png")
    editor.controller.undo_stack.setClean()  # closing asks nothing
