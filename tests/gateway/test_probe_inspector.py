"""What the MCP Inspector's CLI (a third-party client) sees of the probe server directly, it sees
through `foundry gateway`: listings but for the `probe__` names, results, resources, prompts, and
a server's error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.gateway.test_gateway_third_party import BIN, NPM
from tests.gateway.test_probe_gateway import PROBE, probe_agent

pytestmark = pytest.mark.skipif(
    not (BIN / "mcp-inspector").exists() and os.environ.get("FOUNDRY_REQUIRE_NPM") != "1",
    reason="the npm test parts are not installed: npm ci --prefix tests/gateway/npm",
)
LISTED = {"tools", "resources", "resourceTemplates", "prompts"}


# the gateway starts its servers before it answers: on a loaded machine that takes longer than
# the Inspector's 15 s default
CONNECT = ("--connect-timeout", "90000")


def inspect(target: list[str], home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            str(BIN / "mcp-inspector"),
            "--cli",
            *CONNECT,
            "-e",
            f"FOUNDRY_HOME={home}",
            *target,
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "FOUNDRY_HOME": str(home)},
        cwd=NPM,
    )


def as_the_gateway_names_them(answer: dict[str, Any]) -> dict[str, Any]:
    """A direct answer with each listed name as the gateway offers it (`probe__name`)."""
    return {
        key: [{**item, "name": f"probe__{item['name']}"} for item in value]
        if key in LISTED
        else value
        for key, value in answer.items()
    }


@pytest.fixture
def targets(tmp_path: Path) -> tuple[list[str], list[str]]:
    agent = probe_agent(tmp_path / "agent")
    direct = [sys.executable, PROBE]
    gateway = [sys.executable, "-m", "foundry.cli", "gateway", str(agent)]
    return direct, gateway


CASES = [
    (["--method", "tools/list"], []),
    (["--method", "tools/call", "--tool-name", "report", "--tool-arg", "topic=tides"], ["report"]),
    (["--method", "resources/list"], []),
    (["--method", "resources/templates/list"], []),
    (["--method", "resources/read", "--uri", "probe://notes/from-the-template"], []),
    (["--method", "resources/read", "--uri", "probe://logo.png"], []),
    (["--method", "prompts/list"], []),
    (["--method", "prompts/get", "--prompt-name", "greet", "--prompt-args", "who=Ann"], ["greet"]),
]


@pytest.mark.parametrize(("args", "named"), CASES, ids=lambda case: " ".join(case)[:40])
def test_the_inspector_sees_through_the_gateway_what_it_sees_directly(
    targets: tuple[list[str], list[str]], foundry_home: Path, args: list[str], named: list[str]
) -> None:
    direct, gateway = targets
    expected = inspect(direct, foundry_home, *args)
    through = inspect(gateway, foundry_home, *[f"probe__{a}" if a in named else a for a in args])
    assert expected.returncode == 0, expected.stderr
    assert through.returncode == 0, through.stderr
    assert json.loads(through.stdout) == as_the_gateway_names_them(json.loads(expected.stdout))


def test_the_inspector_sees_the_servers_error_through_the_gateway(
    targets: tuple[list[str], list[str]], foundry_home: Path
) -> None:
    direct, gateway = targets
    args = ["--method", "tools/call"]
    expected = inspect(direct, foundry_home, *args, "--tool-name", "fail")
    through = inspect(gateway, foundry_home, *args, "--tool-name", "probe__fail")
    assert expected.returncode == through.returncode != 0
    assert "the probe failed on purpose" in expected.stdout + expected.stderr
    error = _error_line(through.stdout + through.stderr)
    assert error == _error_line(expected.stdout + expected.stderr)


def _error_line(output: str) -> dict[str, Any]:
    start = output.rindex('{"error"')
    parsed: dict[str, Any] = json.loads(output[start:].splitlines()[0])
    return parsed
