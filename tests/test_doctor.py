"""`foundry doctor`: the real checks on this installation, and the failures it explains."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import pytest

from foundry.cli import main
from foundry.doctor import CHECKS, OLLAMA, SAMPLES, STORE, Check, CheckSpec, check_store, run_check

STATUSES = ("OK", "WARN", "FAIL")


@pytest.fixture(autouse=True)
def ollama_nowhere(monkeypatch: pytest.MonkeyPatch) -> str:
    """OLLAMA_HOST at a loopback port nothing listens on, so no test depends on a real Ollama."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    host = f"http://127.0.0.1:{port}"
    monkeypatch.setenv("OLLAMA_HOST", host)
    return host


def statuses_by_name(lines: list[str]) -> dict[str, str]:
    found = {}
    for line in lines:
        status, rest = line[:6].strip(), line[6:]
        name = next(spec.name for spec in CHECKS if rest.startswith(f"{spec.name} "))
        found[name] = status
    return found


def test_doctor_passes_here_with_one_line_per_check(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctor"]) == 0
    *lines, summary = capsys.readouterr().out.splitlines()
    assert len(lines) == len(CHECKS)
    assert all(line[:6].strip() in STATUSES for line in lines)
    found = statuses_by_name(lines)
    assert found.pop("Qt window") in ("OK", "WARN")
    assert found == {
        "embedded model": "OK",
        "data and store": "OK",
        "log file": "OK",
        "sample agents": "OK",
        "MCP server": "OK",
        "server confinement": "OK",  # this machine's kernel has Landlock (WARN where not)
        "MCP gateway": "OK",
        "Ollama": "WARN",
    }
    assert summary.startswith(f"{len(CHECKS)} checks:") and "0 FAIL" in summary


def test_broken_sample_fails_naming_the_file(
    sample_agents: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = sample_agents / "architect" / "tsagent.json"
    broken.write_text('{"metadata": {"name": "Architect"')
    monkeypatch.setenv("FOUNDRY_SAMPLES", str(sample_agents))
    assert main(["doctor", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    checks = {check["name"]: check for check in report["checks"]}
    assert report["ok"] is False
    assert checks[SAMPLES]["status"] == "FAIL"
    assert str(broken) in checks[SAMPLES]["detail"]
    assert "foundry validate" in checks[SAMPLES]["fix"]
    assert [check["status"] for check in report["checks"]].count("FAIL") == 1


def test_store_under_a_regular_file_fails_with_a_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("FOUNDRY_HOME", str(blocker / "home"))
    check = check_store()
    assert check.status == "FAIL"
    assert f"cannot write to {blocker / 'home' / 'config'}" in check.detail
    assert "FOUNDRY_HOME" in check.fix


def test_unreachable_ollama_is_a_warning_not_a_failure(ollama_nowhere: str) -> None:
    check = run_check(next(spec for spec in CHECKS if spec.name == OLLAMA))
    assert check.status == "WARN"
    assert check.detail == f"Ollama is not running at {ollama_nowhere}"
    assert "ollama serve" in check.fix


def test_a_check_that_raises_or_hangs_becomes_a_failure() -> None:
    def broken() -> Check:
        raise RuntimeError("disk on fire")

    def stuck() -> Check:
        time.sleep(5)
        raise AssertionError("the runner should have stopped waiting")

    raised = run_check(CheckSpec(STORE, broken, timeout_s=5))
    hung = run_check(CheckSpec(STORE, stuck, timeout_s=0.2))
    assert (raised.status, hung.status) == ("FAIL", "FAIL")
    assert "RuntimeError: disk on fire" in raised.detail
    assert "did not finish within 0.2 s" in hung.detail
