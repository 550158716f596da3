"""The guard of tests/left_open.py: a test that leaves a store open or an engine running fails."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from tests.conftest import REPO
from tests.processes import run_to_the_end

LEAKY_TESTS = """
import pytest

from foundry.runtime.engine import Engine
from foundry.store import Store


@pytest.fixture
def forgotten_store(tmp_path):
    return Store.open(f"sqlite:///{tmp_path / 'forgotten.sqlite3'}")


@pytest.fixture
def closed_store(tmp_path):
    with Store.open(f"sqlite:///{tmp_path / 'closed.sqlite3'}") as store:
        yield store


@pytest.fixture(scope="module")
def module_store(tmp_path_factory):
    return Store.open(f"sqlite:///{tmp_path_factory.mktemp('m') / 'module.sqlite3'}")


def test_leaves_its_fixture_store_open(forgotten_store):
    pass


def test_closes_its_store(closed_store):
    pass


def test_leaves_an_engine_running(closed_store):
    Engine(closed_store).start()


def test_uses_the_module_store(module_store):
    pass
"""


def test_what_a_test_leaves_open_fails_it_and_what_a_module_leaves_fails_the_session(
    tmp_path: Path,
) -> None:
    (tmp_path / "test_leaky.py").write_text(LEAKY_TESTS)
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "tests.left_open",
        "-q",
        "-p",
        "no:cacheprovider",
    ]
    env = {**os.environ, "PYTHONPATH": str(REPO), "FOUNDRY_HOME": str(tmp_path / "home")}
    done = run_to_the_end([*command, str(tmp_path / "test_leaky.py")], cwd=tmp_path, env=env)
    said = done.stdout
    assert done.returncode == 1, said
    assert "4 passed, 2 errors" in said  # each test passed; two left something open
    assert "ERROR at teardown of test_leaves_its_fixture_store_open" in said
    assert "ERROR at teardown of test_leaves_an_engine_running" in said
    assert "a store opened by test_leaky.py::test_leaves_its_fixture_store_open, still open" in said
    assert (
        "an engine started by test_leaky.py::test_leaves_an_engine_running, still running" in said
    )
    assert "LEFT OPEN at the end of the session" in said
    assert "a store opened by the module fixture 'module_store', still open" in said
