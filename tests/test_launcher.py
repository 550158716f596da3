"""The packaged app's entry point: the foundry command, or a bundled module run with `-m`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from foundry import __version__
from foundry.agent.models import StdioServer
from foundry.launcher import main
from foundry.tools import ToolHost

REPO = Path(__file__).resolve().parent.parent

# What the frozen executable does when it is started as `sys.executable -m ...`.
FROZEN_EXECUTABLE = ["-c", "import sys; from foundry.launcher import main; sys.exit(main())"]

ARGV_PROBE = """
import json, sys
from pathlib import Path
Path(sys.argv[1]).write_text(json.dumps({"name": __name__, "argv": sys.argv}))
"""


@pytest.fixture
def probe_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "argv_probe.py").write_text(ARGV_PROBE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "argv", list(sys.argv))
    return tmp_path / "argv_probe.py"


def test_dash_m_runs_the_module_as_main_with_its_arguments(
    probe_module: Path, tmp_path: Path
) -> None:
    report = tmp_path / "report.json"

    assert main(["-m", "argv_probe", str(report), "--flag"]) == 0

    seen = json.loads(report.read_text())
    assert seen == {"name": "__main__", "argv": [str(probe_module), str(report), "--flag"]}


@pytest.mark.parametrize("module", ["no_such_module", "no_such_package.module"])
def test_unknown_module_fails_naming_it(module: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-m", module]) == 1
    assert capsys.readouterr().err.strip() == f"foundry: no module named {module!r}"


def test_dash_m_without_a_module_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-m"]) == 2
    assert "needs a module name" in capsys.readouterr().err


def test_other_arguments_go_to_the_foundry_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.strip() == f"foundry {__version__}"


async def test_sample_time_server_answers_when_python_is_the_launcher(tmp_path: Path) -> None:
    server = StdioServer(
        command=sys.executable,
        args=[*FROZEN_EXECUTABLE, "-m", "mcp_server_time", "--local-timezone", "UTC"],
        env={"PYTHONPATH": str(REPO)},
    )
    async with ToolHost({"time": server}, tmp_path) as host:
        assert {tool.name for tool in host.tools()} == {
            "time.get_current_time",
            "time.convert_time",
        }
        result = await host.call("time.get_current_time", {"timezone": "Europe/Paris"})
    assert not result.is_error
    assert "Europe/Paris" in result.text
