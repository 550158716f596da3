"""One loaded model per model file: the agent and its supervisors share it, however the file's
path is written."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from foundry.llm import embedded
from foundry.llm.embedded import EmbeddedRuntime, bundled_model_path, shared_runtime
from foundry.runtime.engine import Engine

from ..runtime.conftest import engine  # noqa: F401  (the fixture)


@pytest.fixture
def no_runtimes(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A process without loaded models; those made here are closed afterwards."""
    runtimes: dict[Path, EmbeddedRuntime] = {}
    monkeypatch.setattr(embedded, "_runtimes", runtimes)
    yield
    for runtime in runtimes.values():
        runtime.close()


def test_one_runtime_per_model_file_however_its_path_is_written(
    tmp_path: Path, no_runtimes: None
) -> None:
    model = tmp_path / "models" / "tiny.gguf"
    model.parent.mkdir()
    model.write_bytes(b"GGUF")
    (tmp_path / "link.gguf").symlink_to(model)

    first = shared_runtime(model)

    assert shared_runtime(tmp_path / "models" / ".." / "models" / "tiny.gguf") is first
    assert shared_runtime(tmp_path / "link.gguf") is first
    assert shared_runtime(tmp_path / "other.gguf") is not first


def write_embedded_agent(root: Path, supervisors: list[dict[str, Any]]) -> Path:
    root.mkdir(parents=True)
    settings = {"model": "embedded:smollm2", "maxOutputTokens": 4, "temperature": 0.0}
    config = {"metadata": {"name": root.name}, "settings": settings, "supervisors": supervisors}
    (root / "tsagent.json").write_text(json.dumps(config))
    (root / "prompt.md").write_text("You answer in one word.")
    return root


@pytest.mark.skipif(bundled_model_path() is None, reason="SmolLM2 is not installed")
def test_the_agent_and_its_supervisor_are_answered_by_one_loaded_model(
    engine: Engine,  # noqa: F811
    tmp_path: Path,
    no_runtimes: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    write_embedded_agent(tmp_path / "watcher", [])
    watched = {
        "type": "agent",
        "id": "watcher",
        "name": "Watcher",
        "config": {"agentPath": "../watcher", "allowedActions": ["READ_ONLY"]},
    }
    agent = write_embedded_agent(tmp_path / "worker", [watched])
    answered_by: list[EmbeddedRuntime] = []
    submit = EmbeddedRuntime.submit

    def recorded_submit(self: EmbeddedRuntime, *args: Any) -> Any:
        answered_by.append(self)
        return submit(self, *args)

    monkeypatch.setattr(EmbeddedRuntime, "submit", recorded_submit)

    session_id = engine.submit(engine.open_session(agent)).result(60)
    result = engine.submit(engine.send(session_id, "Hello")).result(600)

    assert result.ended_by == "reply"
    engine.submit(engine.settle(session_id)).result(600)  # a READ_ONLY watcher reviews after
    decided = engine.store.events.list(session_id, kinds=("supervisor_decided",))
    assert [record.payload["direction"] for record in decided] == ["request", "response"]
    assert len(answered_by) >= 3  # the worker's reply, the watcher on its request and reply
    assert len(set(map(id, answered_by))) == 1
