"""Test isolation: every test gets its own Foundry home; the PostgreSQL URL is kept aside; a
test that leaves a store open or an engine running fails (tests/left_open.py)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SAMPLE_AGENTS = REPO / "agents"

# .ci/run points FOUNDRY_DATABASE_URL at a real PostgreSQL server. Tests that want it ask for it
# explicitly (see tests/store); every other test must use its own SQLite file.
POSTGRES_URL = os.environ.pop("FOUNDRY_DATABASE_URL", "") or os.environ.get(
    "FOUNDRY_TEST_POSTGRES_URL", ""
)


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.import_plugin("tests.left_open")


@pytest.fixture(autouse=True)
def foundry_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "foundry-home"
    monkeypatch.setenv("FOUNDRY_HOME", str(home))
    monkeypatch.delenv("FOUNDRY_DATABASE_URL", raising=False)
    for name in [name for name in os.environ if name.startswith("OTEL_")]:
        monkeypatch.delenv(name)  # a developer's own endpoint is not sent the tests' spans
    return home


@pytest.fixture
def sample_agents(tmp_path: Path) -> Path:
    """A writable copy of the sample agents that ship in agents/."""
    target = tmp_path / "agents"
    shutil.copytree(SAMPLE_AGENTS, target)
    return target
