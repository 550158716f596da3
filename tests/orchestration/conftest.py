"""Tasks with scripted agents: each agent replays its own turns, so every path is deterministic."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from foundry.runtime.engine import Engine
from foundry.store import Store
from tests.runtime.conftest import write_agent

GREET_CODE = 'def greet(name):\n    return f"Hello, {name}!"\n'


def write(name: str, content: str) -> dict[str, Any]:
    """A scripted tool call that writes a workspace file."""
    return {"name": "workspace.write_file", "arguments": {"path": name, "content": content}}


def agent(root: Path, turns: list[dict[str, Any]], **settings: Any) -> Path:
    """A scripted agent with no MCP servers whose tool calls run without asking."""
    return write_agent(
        root, {"turns": turns}, servers={}, settings={"toolPermission": "never", **settings}
    )


def task_file(folder: Path, **fields: Any) -> Path:
    spec = {
        "name": "greeting",
        "goal": "Add a function `greet` to greetings.py that returns a greeting.",
        "criteria": [
            {
                "text": "greetings.py defines greet",
                "checks": [
                    {"ast": {"file": "greetings.py", "function": "greet"}},
                    {"keywords": ["Hello"]},
                ],
            }
        ],
        "operators": ["agents/coder"],
        "limits": {"stepTimeouts": [20], "maxIterations": 4},
    }
    spec.update(fields)
    path = folder / "task.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


def turns_of(path: Path) -> list[dict[str, Any]]:
    return json.loads(path.read_text())["turns"]


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    with (
        Store.open(f"sqlite:///{tmp_path / 'foundry.db'}") as store,
        Engine(store, retry_delays_s=(0.01,)) as running,
    ):
        yield running
