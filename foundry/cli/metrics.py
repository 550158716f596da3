"""The metrics commands of `foundry`: export the dashboard series as CSV, rebuild the aggregates."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any


def export_command(args: argparse.Namespace) -> int:
    from foundry.home import database_url
    from foundry.metrics.export import export_csv
    from foundry.metrics.terms import MetricsFilter

    where = MetricsFilter(
        agents=frozenset(args.agent or ()),
        task_ids=frozenset(args.task or ()),
        since=args.since,
        until=args.until,
    )
    export = export_csv(Path(args.csv), database_url(), where)
    for event in export.skipped:
        print(f"foundry: left out the unreadable event {event}", file=sys.stderr)
    for written in export.written:
        rows = written.rows
        print(f"{written.path}  {rows:,} row{'' if rows == 1 else 's'}")
    return 0


def rebuild_command(args: argparse.Namespace) -> int:
    from foundry.metrics import keep_aggregates, rebuild_aggregates
    from foundry.store import Store

    def progress(done: int, total: int) -> None:
        print(f"\r{done:,} of {total:,} metric events", end="", flush=True)

    with Store.open() as store:
        folded = rebuild_aggregates(keep_aggregates(store), progress)
    print(f"\rRebuilt the metric aggregates from {folded:,} events")
    return 0


def _time(text: str) -> datetime:
    """An ISO 8601 time; one without a zone is local time."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"{text!r} is not a time like 2025-03-01T09:00") from error
    return moment.astimezone(UTC)


def add_metrics_commands(commands: Any) -> None:
    metrics = commands.add_parser(
        "metrics",
        help="export the figures of tasks and sessions",
        description="Metrics computed from the event log.",
    )
    actions = metrics.add_subparsers(title="actions", metavar="ACTION", required=True)
    export = actions.add_parser(
        "export",
        help="write the dashboard series as CSV files",
        description="Write one CSV per series (confidence, iterations, phase_shares, "
        "model_calls, resolutions, human_waits) with a header row into DIR.",
    )
    export.add_argument(
        "--csv", required=True, metavar="DIR", help="folder to write the CSV files into"
    )
    export.add_argument("--task", action="append", metavar="ID", help="only this task (repeatable)")
    export.add_argument(
        "--agent", action="append", metavar="NAME", help="only this agent (repeatable)"
    )
    export.add_argument("--since", type=_time, help="only from this time (ISO 8601)")
    export.add_argument("--until", type=_time, help="only up to this time (ISO 8601)")
    export.set_defaults(handler=export_command)
    rebuild = actions.add_parser(
        "rebuild",
        help="recompute the dashboards' aggregates from every event",
        description="Recompute the aggregates the dashboards draw from the whole event log, "
        "in one transaction (after an upgrade, or if a writer did not keep them); writers "
        "wait for it.",
    )
    rebuild.set_defaults(handler=rebuild_command)
