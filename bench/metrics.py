"""`foundry metrics export --csv` over a generated store of 1,000,000 events, new and old.

The store is the dashboards benchmark's (bench/ui.py, part 6): generated task runs with their
chats, written with the aggregates kept as appends keep them, in a SQLite file of a temporary
folder. Each export is a real `foundry metrics export` process under /usr/bin/time (its wall
time and peak resident memory): this checkout's, and as the baseline the command as it was at
git revision --baseline (by default the last one before the export streamed rows), run on the
same store in the same run. Both wrote the same files if "same files" says so. A run on an
empty store shows what starting the command costs (its imports).

Targets (issue #16, 4b): under 5 s and under 500 MB over 1,000,000 events.

Run: python bench/metrics.py [--events 1000000] [--store SQLITE_FILE] [--runs 3]
                             [--baseline REV] [--baseline-events N] [--no-baseline]
"""

from __future__ import annotations

import argparse
import filecmp
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # measure this checkout, whichever copy of foundry is installed
BEFORE_STREAMING = "aab84f4"  # the export read every event as its pydantic type
TARGET_S = 5.0
TARGET_MB = 500.0
FILES = ("confidence", "iterations", "phase_shares", "model_calls", "resolutions", "human_waits")


@dataclass(frozen=True)
class Run:
    wall_s: float
    cpu_s: float
    peak_mb: float


def build_store(path: Path, events: int) -> None:
    """The dashboards benchmark's generated store of about `events` events."""
    sys.path.insert(0, str(REPO / "bench"))
    from ui import generated_chunks, write_timed_events

    from foundry.store import Store

    with Store.open(f"sqlite:///{path}") as store:
        for chunk in generated_chunks(events):
            write_timed_events(store, chunk)


def empty_store(path: Path) -> None:
    from foundry.store import Store

    Store.open(f"sqlite:///{path}").close()


def metric_events(path: Path) -> int:
    with closing(sqlite3.connect(path)) as connection, connection:
        (count,) = connection.execute("SELECT events FROM metrics_state").fetchone()
    return int(count)


def export(tree: Path, store: Path, target: Path, home: Path) -> Run:
    """`foundry metrics export --csv target` of `tree`'s Foundry over `store`, measured."""
    measured = target.with_suffix(".time")
    command = [
        "/usr/bin/time",
        "-f",
        "%e %U %S %M",
        "-o",
        str(measured),
        sys.executable,
        "-c",
        "import sys; from foundry.cli import main; sys.exit(main())",  # the `foundry` script
        *("metrics", "export", "--csv", str(target)),
    ]
    environment = {
        **os.environ,
        "PYTHONPATH": str(tree),
        "FOUNDRY_HOME": str(home),
        "FOUNDRY_DATABASE_URL": f"sqlite:///{store}",
    }
    # in `tree`: `python -c` imports from its working folder first, whatever PYTHONPATH says
    done = subprocess.run(
        command, env=environment, cwd=tree, capture_output=True, text=True, timeout=3600
    )
    if done.returncode != 0:
        raise RuntimeError(f"the export failed:\n{done.stderr[-2000:]}")
    wall, user, system, peak_kb = measured.read_text().split()[-4:]
    return Run(float(wall), float(user) + float(system), int(peak_kb) / 1024)


def as_known_to(tree: Path, store: Path, workdir: Path) -> Path:
    """`store`, or for an older tree a copy of it recording the newest schema revision that tree
    knows: an older Foundry refuses a store a newer one made (the tables it reads are as
    they were)."""
    if tree == REPO:
        return store
    versions = tree / "foundry" / "store" / "migrations" / "versions"
    known = max(path.name.split("_")[0] for path in versions.glob("[0-9]*_*.py"))
    copy = workdir / f"{tree.name}-{store.name}"
    if not copy.exists():
        shutil.copyfile(store, copy)
        with closing(sqlite3.connect(copy)) as connection, connection:
            connection.execute("UPDATE alembic_version SET version_num = ?", (known,))
    return copy


def baseline_tree(revision: str, workdir: Path) -> Path:
    tree = workdir / f"baseline-{revision}"
    if not tree.exists():
        tree.mkdir()
        archive = subprocess.run(
            ["git", "-C", str(REPO), "archive", revision], capture_output=True, check=True
        )
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    return tree


def same_files(first: Path, second: Path) -> str:
    differing = [
        name
        for name in FILES
        if not filecmp.cmp(first / f"{name}.csv", second / f"{name}.csv", shallow=False)
    ]
    return "yes" if not differing else "NO: " + ", ".join(differing)


def row(name: str, value: str, note: str = "") -> None:
    print(f"  {name:<44} {value:>10}  {note}")


def figures(run: Run) -> str:
    return f"peak {run.peak_mb:,.0f} MB, CPU {run.cpu_s:.2f} s"


def targets(run: Run) -> str:
    met = run.wall_s < TARGET_S and run.peak_mb < TARGET_MB
    return f"target < {TARGET_S:.0f} s and < {TARGET_MB:.0f} MB: {'met' if met else 'NOT met'}"


def bench(args: argparse.Namespace, workdir: Path) -> None:
    stores = {}
    for events in sorted({args.events, args.baseline_events or args.events}):
        path = args.store if args.store and events == args.events else workdir / f"{events}.db"
        if not path.exists():
            started = time.perf_counter()
            build_store(path, events)
            print(f"(store of {events:,} events written in {time.perf_counter() - started:.0f} s)")
        stores[events] = path
    empty = workdir / "empty.db"
    empty_store(empty)
    trees = {"new": REPO}
    if not args.no_baseline:
        trees[f"old ({args.baseline})"] = baseline_tree(args.baseline, workdir)
    print(f"\nfoundry metrics export --csv (load average before: {_load()})")
    outputs: dict[tuple[str, int], Path] = {}
    for name, tree in trees.items():
        start = export(
            tree,
            as_known_to(tree, empty, workdir),
            workdir / f"empty-{tree.name}",
            workdir / "home",
        )
        row(f"{name}: on an empty store (start-up)", f"{start.wall_s:.2f} s", figures(start))
        sizes = [args.events] if name == "new" else [args.baseline_events or args.events]
        for events in sizes:
            path = as_known_to(tree, stores[events], workdir)
            runs = []
            for number in range(args.runs if name == "new" else 1):
                target = workdir / f"out-{tree.name}-{events}-{number}"
                runs.append(export(tree, path, target, workdir / "home"))
                outputs[name, events] = target
            run = min(runs, key=lambda each: each.wall_s)
            label = f"{name}: {metric_events(path):,} metric events"
            walls = ", ".join(f"{each.wall_s:.2f}" for each in runs)
            row(label, f"{run.wall_s:.2f} s", f"{figures(run)} (best of {walls} s)")
            if name == "new":
                row("", "", targets(run))
    old = [key for key in outputs if key[0] != "new"]
    if old and old[0][1] == args.events:
        row("same files, new and old", same_files(outputs["new", args.events], outputs[old[0]]))
    print(f"(load average after: {_load()})")


def _load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000, help="events of the store")
    parser.add_argument("--store", type=Path, help="a store of --events events to use as is")
    parser.add_argument("--runs", type=int, default=3, help="runs of the new export (best)")
    parser.add_argument(
        "--baseline", default=BEFORE_STREAMING, metavar="REV", help="the old export's revision"
    )
    parser.add_argument(
        "--baseline-events", type=int, help="events of the old export's store (default --events)"
    )
    parser.add_argument("--no-baseline", action="store_true", help="the new export alone")
    return parser.parse_args()


def main() -> None:
    args = parse_arguments()
    print(f"Metrics export benchmark ({os.cpu_count()} CPUs)")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        bench(args, Path(folder))
    print(f"(whole run {time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
