"""Runs a `foundry` command in the bundle's own interpreter and writes down which OpenTelemetry
(and Foundry telemetry) modules it imported, for check-linux.sh.

    foundry -m cProfile -o /dev/null packaging/import_probe.py OUT COMMAND [ARG...]

The bundle has no `python SCRIPT`; cProfile's command line runs a script, as Python's would.
When the command returns, or when the process is sent SIGTERM (for `gui`, which runs until it is
closed), OUT gets one imported module name a line, sorted, then the line `end`.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from types import FrameType

from foundry.launcher import main

WATCHED = ("opentelemetry", "google.protobuf", "foundry.telemetry")


def write_imported(out: Path) -> None:
    names = sorted(name for name in sys.modules if name.startswith(WATCHED))
    written = out.with_name(f"{out.name}.part")  # renamed once whole: the check waits for it
    written.write_text("".join(f"{name}\n" for name in [*names, "end"]), encoding="utf-8")
    written.rename(out)


def main_with_probe(out: Path, args: list[str]) -> int:
    def terminated(signum: int, frame: FrameType | None) -> None:
        write_imported(out)
        signal.signal(signum, signal.SIG_DFL)  # then ended by it, as without the probe
        os.kill(os.getpid(), signum)

    signal.signal(signal.SIGTERM, terminated)
    try:
        return main(args)
    finally:
        write_imported(out)


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit("usage: foundry -m cProfile -o /dev/null import_probe.py OUT COMMAND [ARG...]")
    sys.exit(main_with_probe(Path(sys.argv[1]), sys.argv[2:]))
