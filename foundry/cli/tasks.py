"""The task commands of `foundry`: run (resume, replay), list, and show a task's metrics."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from foundry.cli.terminal import escaped
from foundry.cli.trust import add_trust_flag, ensure_trusted

if TYPE_CHECKING:
    from foundry.session.events import Event


def _progress_line(body: object) -> str | None:
    """What a task is doing, one line per phase and decision (task events only)."""
    from foundry.orchestration.events import (
        CriterionScored,
        PhaseFinished,
        PhaseStarted,
        RescueDecided,
        RetryDecided,
        TaskResumed,
        WorkerFinished,
    )

    if isinstance(body, PhaseStarted):
        return f"[{body.iteration}] {body.phase.replace('_', ' ')} {body.label}".rstrip() + " ..."
    if isinstance(body, PhaseFinished) and body.summary:
        return f"[{body.iteration}]   {'ok' if body.ok else 'not yet'}: {body.summary}"
    if isinstance(body, CriterionScored):
        cached = ", cached" if body.cached else ""
        return f"      {body.level:9} {body.score:5.1f}  {body.criterion} ({body.by}{cached})"
    if isinstance(body, RetryDecided):
        return f"    next: {body.approach} ({body.reason})"
    if isinstance(body, RescueDecided):
        return f"    rescue: {body.action} ({body.analysis})"
    if isinstance(body, WorkerFinished):
        return f"    worker {body.worker} answered ({len(body.output)} characters)"
    if isinstance(body, TaskResumed):
        return f"resuming at step {body.from_step}"
    return None


def _show_progress(event: Event) -> None:
    line = _progress_line(event.body)
    if line:
        print(line, file=sys.stderr, flush=True)


def run_command(args: argparse.Namespace) -> int:
    from foundry.agent.trust import TrustStore
    from foundry.cli.sessions import approve_everything
    from foundry.orchestration.journal import JournalError
    from foundry.orchestration.taskfile import load_task
    from foundry.runtime.engine import Engine

    trust = TrustStore.default()
    for agent in load_task(Path(args.file)).agent_paths():
        refused = ensure_trusted(agent, args.trust, trust)
        if refused is not None:
            return refused
    with Engine(trust=trust) as engine:
        if not args.quiet:
            engine.bus.subscribe(_show_progress)
        ask = approve_everything if args.yes else None
        work = engine.run_task(Path(args.file), replay=args.replay, new=args.new, ask=ask)
        try:
            outcome = engine.submit(work).result()
        except JournalError as error:
            print(f"foundry: {args.file}: {error}", file=sys.stderr)
            return 1
    mode = f"replayed {outcome.replayed_steps} steps, " if args.replay else ""
    print(escaped(outcome.output, lines=True))
    print(
        f"\ntask {outcome.task_id}: {outcome.status} after {outcome.iterations} iteration(s); "
        f"{mode}{outcome.supervisor_calls} supervisor call(s), {outcome.model_calls} message(s) "
        "to agents",
        file=sys.stderr,
    )
    return 0 if outcome.status == "succeeded" else 1


def list_command(args: argparse.Namespace) -> int:
    from foundry.store import Store

    with Store.open() as store:
        tasks = store.tasks.list(args.limit)
    if not tasks:
        print("no tasks have run yet; start one with `foundry task run FILE`", file=sys.stderr)
        return 0
    print(f"{'ID':32}  {'STATUS':9}  {'STARTED':16}  NAME")
    for task in tasks:
        started = task.created_at.astimezone().strftime("%Y-%m-%d %H:%M")
        print(f"{task.id:32}  {task.status:9}  {started:16}  {escaped(task.name)}")
    return 0


def metrics_command(args: argparse.Namespace) -> int:
    from foundry.metrics import format_task_metrics, load_task_log, task_metrics
    from foundry.store import Store

    with Store.open() as store:
        store.tasks.get(args.id)  # a clear error for an unknown id
        events = load_task_log(store, args.id)
    print(format_task_metrics(task_metrics(events, args.id), as_json=args.json))
    return 0


def add_task_commands(commands: Any) -> None:
    task = commands.add_parser(
        "task",
        help="run supervised tasks and read their figures",
        description="Tasks: a goal with acceptance criteria, worked on by operator agents under "
        "a supervisor, validated against a workspace (see docs/tasks.md).",
    )
    actions = task.add_subparsers(title="actions", metavar="ACTION", required=True)
    run = actions.add_parser(
        "run",
        help="run a task file (an unfinished run of it is resumed)",
        description="Run FILE. If an earlier run of it was interrupted, it resumes from its last "
        "completed phase; --new starts afresh; --replay re-runs the last run from its journal "
        "without calling any model.",
    )
    run.add_argument("file", metavar="FILE", help="the task file (YAML)")
    run.add_argument("--replay", action="store_true", help="replay the last run from its journal")
    run.add_argument("--new", action="store_true", help="start a new run even if one is unfinished")
    run.add_argument("--yes", action="store_true", help="approve tool calls that ask for approval")
    run.add_argument("--quiet", action="store_true", help="print only the final answer")
    add_trust_flag(run)
    run.set_defaults(handler=run_command)
    listing = actions.add_parser("list", help="list task runs, newest first")
    listing.add_argument("--limit", type=int, default=50, help="how many (default 50)")
    listing.set_defaults(handler=list_command)
    metrics = actions.add_parser("metrics", help="a task's metrics, from its event log")
    metrics.add_argument("id", metavar="ID", help="the task's id (see `foundry task list`)")
    metrics.add_argument("--json", action="store_true", help="as JSON")
    metrics.set_defaults(handler=metrics_command)
