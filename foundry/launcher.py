"""The packaged app's entry point: the `foundry` command, or `-m MODULE` the way Python runs it.

A frozen bundle has no Python interpreter beside it, yet Foundry starts children as if it had
one: the sample agent's MCP server is `python -m mcp_server_time`, and the doctor's window
probe is `python -m foundry.ui.window_probe`, both run as `sys.executable`. In the bundle
`sys.executable` is this program, so it answers `-m` itself with the modules it carries.
"""

from __future__ import annotations

import importlib.util
import runpy
import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["-m"]:
        return run_module(args[1:])
    from foundry.cli import main as cli_main

    return cli_main(args)


def run_module(args: Sequence[str]) -> int:
    """Run a module as `__main__` with `args` after its name, as `python -m` would."""
    if not args:
        print("foundry: -m needs a module name", file=sys.stderr)
        return 2
    module, *rest = args
    if not _module_exists(module):
        print(f"foundry: no module named {module!r}", file=sys.stderr)
        return 1
    sys.argv = [module, *rest]  # run_module puts the module's file in sys.argv[0]
    runpy.run_module(module, run_name="__main__", alter_sys=True)
    return 0


def _module_exists(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package is missing, or the name is malformed
        return False
