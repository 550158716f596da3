"""The `foundry doctor` command: one line per installation check, exit 1 when one failed."""

from __future__ import annotations

import argparse
import json
from collections import Counter
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from foundry.doctor import Check


def format_check(check: Check, width: int) -> str:
    """`STATUS  name  detail`, with ` — fix` unless the check is OK."""
    line = f"{check.status:<6}{check.name:<{width}}  {check.detail}"
    return f"{line} — {check.fix}" if check.fix and check.status != "OK" else line


def summary_line(checks: list[Check]) -> str:
    counts = Counter(check.status for check in checks)
    figures = f"{counts['OK']} OK, {counts['WARN']} WARN, {counts['FAIL']} FAIL"
    if counts["FAIL"]:
        return f"{len(checks)} checks: {figures}; fix the FAIL lines above"
    return f"{len(checks)} checks: {figures}; Foundry is ready to use"


def doctor_command(args: argparse.Namespace) -> int:
    from foundry.doctor import CHECKS, run_checks

    if args.json:
        checks = run_checks()
        report = {"ok": _passed(checks), "checks": [check.model_dump() for check in checks]}
        print(json.dumps(report, indent=2))
    else:
        width = max(len(spec.name) for spec in CHECKS)
        checks = run_checks(on_result=lambda check: print(format_check(check, width), flush=True))
        print(summary_line(checks))
    return 0 if _passed(checks) else 1


def _passed(checks: list[Check]) -> bool:
    return all(check.status != "FAIL" for check in checks)


def add_doctor_commands(commands: Any) -> None:
    doctor = commands.add_parser(
        "doctor",
        help="check this installation and say how to fix what is wrong",
        description="Check that Qt can open a window, the embedded model answers, the data "
        "folders and the store are writable and migrated, the sample agents validate, the "
        "sample MCP server starts and Ollama is reachable (optional). One line per check; "
        "exit 0 when nothing failed (warnings are fine), 1 otherwise.",
    )
    doctor.add_argument(
        "--json", action="store_true", help="print one JSON object with every check"
    )
    doctor.set_defaults(handler=doctor_command)
