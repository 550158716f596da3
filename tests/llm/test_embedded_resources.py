"""After a completion the embedded runtime hands the memory the process freed back to the OS."""

from __future__ import annotations

import ctypes
import re
from pathlib import Path

import pytest

from foundry.llm.embedded import _malloc_trim, release_freed_memory

MIB = 2**20
BLOCK = 4096  # past pymalloc's 512 bytes and under mmap's threshold: glibc's heap holds it


def resident_anonymous() -> int:
    status = Path("/proc/self/status").read_text()
    return int(re.search(r"RssAnon:\s+(\d+) kB", status).group(1)) * 1024  # type: ignore[union-attr]


@pytest.mark.skipif(_malloc_trim() is None, reason="no glibc malloc_trim here")
def test_memory_freed_in_the_middle_of_the_heap_is_given_back() -> None:
    blocks = [ctypes.create_string_buffer(BLOCK) for _ in range(64 * MIB // BLOCK)]
    kept = blocks[-1]  # what is freed lies under it: glibc cannot shrink the heap by itself
    del blocks
    before = resident_anonymous()

    release_freed_memory()

    assert before - resident_anonymous() > 32 * MIB
    assert len(kept) == BLOCK
