"""Injection detector benchmark: the time `find_injection` takes per call, for ordinary calls
(a path and a few options, an edit, a code or README write) and for writes past the scan caps.

Each figure is the best of several rounds of repeated calls, so other work on the machine
inflates it as little as possible.

Run: python bench/injection.py [--rounds 7] [--calls 50]
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from foundry.supervision.injection import find_injection

CODE = '''"""The approval store."""

from __future__ import annotations


def approve(store, approval_id: str, reviewer: str) -> None:
    """Approve one pending call; a second resolver gets a conflict."""
    # do not block the event loop: the write runs in an executor
    record = store.get(approval_id)
    if record.status != "pending":
        raise AlreadyResolved(record)
    store.resolve(approval_id, "approved", reviewer)
'''
README = (
    """# Foundry

Foundry is a desktop studio for building and supervising AI agents. Follow the installation
instructions below; the previous instructions for version 1 are kept in docs/old.md.

1. `pip install foundry-studio`
2. `foundry doctor`
"""
    * 4
)

CALLS: dict[str, dict[str, Any]] = {
    "read: a path": {"path": "src/foundry/store.py"},
    "read: a path and options": {"path": "src/a.py", "encoding": "utf-8", "head": 40},
    "edit: two short texts": {
        "path": "src/a.py",
        "edits": [{"oldText": "x = 1", "newText": "x = 2"}],
    },
    "write: 1.5 KB README": {"path": "README.md", "content": README},
    "write: 1.6 KB of code": {"path": "src/a.py", "content": CODE * 4},
    "write: 16 KB of code": {"path": "src/a.py", "content": CODE * 40},
    "write: 32 KB (the cap)": {"path": "big.py", "content": CODE * 80},
    "write: 1 MB (past the cap)": {"path": "big.py", "content": CODE * 2600},
}


def best_time(params: dict[str, Any], rounds: int, calls: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        for _ in range(calls):
            find_injection(params)
        best = min(best, (time.perf_counter() - started) / calls)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=50)
    options = parser.parse_args()
    for name, params in CALLS.items():
        seconds = best_time(params, options.rounds, options.calls)
        print(f"{name:28s} {seconds * 1e6:9.1f} µs per call")


if __name__ == "__main__":
    main()
