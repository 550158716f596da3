"""Escape campaign: attempts to reach outside a server's workspace, with and without the kernel.

The campaign of tests/tools/escapes.py (no policy in the way: each call goes straight to the
server), run twice in one process on fresh folders: the servers confined as Foundry starts them,
and the same servers with the confinement off (as Foundry ran them before, and still runs them
where the kernel has no Landlock). Prints the attempts and escapes of each kind, side by side.

Run: python bench/escapes.py [--races 60]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from foundry.tools import confinement
from tests.tools.escapes import Tally, make_place, run_campaign


async def campaign(races: int, confined: bool) -> Tally:
    support = confinement.kernel_support
    if not confined:
        confinement.kernel_support = lambda: confinement.KernelSupport(0)  # type: ignore[assignment]
    try:
        with tempfile.TemporaryDirectory() as folder:
            os.environ["FOUNDRY_HOME"] = str(Path(folder) / "foundry-home")
            return await run_campaign(make_place(Path(folder)), races)
    finally:
        confinement.kernel_support = support  # type: ignore[assignment]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--races", type=int, default=60, help="swaps per racing kind")
    options = parser.parse_args()
    print(confinement.kernel_support().describe())
    confined = asyncio.run(campaign(options.races, confined=True))
    bare = asyncio.run(campaign(options.races, confined=False))
    print(f"{'kind of attempt':28} {'attempts':>8} {'escapes':>8} {'unconfined':>11}")
    for kind, attempts in confined.attempts.items():
        escaped, before = confined.escapes[kind], bare.escapes[kind]
        print(f"{kind:28} {attempts:8} {escaped:8} {before:11}")
    print(f"{'all':28} {confined.total:8} {confined.escaped:8} {bare.escaped:11}")
    for example in confined.examples:
        print("ESCAPED:", example)


if __name__ == "__main__":
    main()
