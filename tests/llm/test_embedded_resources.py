"""How the embedded runtime uses the machine: the threads it runs the model on, and the memory
it hands back to the OS after a completion."""

from __future__ import annotations

import ctypes
import os
import re
from pathlib import Path

import pytest

from foundry.llm import embedded
from foundry.llm.embedded import _malloc_trim, model_threads, release_freed_memory

MIB = 2**20
BLOCK = 4096  # past pymalloc's 512 bytes and under mmap's threshold: glibc's heap holds it


def resident_anonymous() -> int:
    status = Path("/proc/self/status").read_text()
    return int(re.search(r"RssAnon:\s+(\d+) kB", status).group(1)) * 1024  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("cpus", "threads"), [(1, 1), (2, 1), (3, 2), (5, 4), (64, embedded.MAX_MODEL_THREADS)]
)
def test_the_model_leaves_a_cpu_to_foundry(
    monkeypatch: pytest.MonkeyPatch, cpus: int, threads: int
) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cpus)), raising=False)

    assert model_threads() == threads


def test_without_cpu_affinity_the_cpu_count_decides(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 4)

    assert model_threads() == 3


def test_the_runtime_loads_the_model_on_those_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedded, "model_threads", lambda: 3)

    assert embedded.runtime_params(Path("model.gguf")).cpuparams.n_threads == 3


@pytest.mark.skipif(_malloc_trim() is None, reason="no glibc malloc_trim here")
def test_memory_freed_in_the_middle_of_the_heap_is_given_back() -> None:
    blocks = [ctypes.create_string_buffer(BLOCK) for _ in range(64 * MIB // BLOCK)]
    kept = blocks[-1]  # what is freed lies under it: glibc cannot shrink the heap by itself
    del blocks
    before = resident_anonymous()

    release_freed_memory()

    assert before - resident_anonymous() > 32 * MIB
    assert len(kept) == BLOCK


def test_the_runtime_reads_prompts_in_small_steps_and_keeps_few_copies() -> None:
    params = embedded.runtime_params(Path("model.gguf"))

    assert params.n_ubatch == embedded.MICRO_BATCH <= params.n_batch  # smaller buffers
    assert params.cache_ram_mib == embedded.PROMPT_CACHE_MIB
