"""Injection detector benchmark: what it flags and what it costs.

Prints
- the twenty encodings of one injection in a workspace write (issue #35), flagged or not, and
  with `--before REV` the same for the detector as it was at that git revision;
- the labelled set (tests/supervision/injection_cases.py): injections flagged by how they were
  hidden, ordinary texts flagged; and the three sets written after the detector was (measured
  here, asserted nowhere; the third never tuned on);
- with `--corpus DIR ...`: how many real files (text, at most 1 MiB each) read as an injection,
  and which;
- the time `find_injection` takes per call (ordinary calls to past the caps) and
  `find_injection_in_text` per text (100 KiB and 1 MiB of ordinary and hostile content).

Each time is the best of several rounds, so other work on the machine inflates it as little as
possible.

Run: python bench/injection.py [--rounds 5] [--calls 20] [--before REV] [--corpus DIR ...]
"""

from __future__ import annotations

import argparse
import base64
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # measure this checkout, whichever copy of foundry is installed

from foundry.supervision.injection import find_injection, find_injection_in_text  # noqa: E402
from tests.supervision import injection_cases as cases  # noqa: E402

Detector = Callable[[Any], Any]

CALLS: dict[str, dict[str, Any]] = {
    "read: a path": {"path": "src/foundry/store.py"},
    "read: a path and options": {"path": "src/a.py", "encoding": "utf-8", "head": 40},
    "edit: two short texts": {
        "path": "src/a.py",
        "edits": [{"oldText": "x = 1", "newText": "x = 2"}],
    },
    "write: 1.6 KB of code": {"path": "src/a.py", "content": cases.PYTHON * 4},
    "write: 16 KB of code": {"path": "src/a.py", "content": cases.PYTHON * 40},
    "write: 32 KB (the cap)": {"path": "big.py", "content": cases.PYTHON * 80},
    "write: 1 MB (past the cap)": {"path": "big.py", "content": cases.PYTHON * 2600},
}


def filled(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def texts(size: int) -> dict[str, str]:
    """Texts of `size` characters: ordinary ones, and ones made to cost the most."""
    return {
        "code": filled(cases.PYTHON, size),
        "logs": filled(cases.LOG, size),
        "Chinese prose": filled(cases.CHINESE_PROSE, size),
        "Russian prose": filled(cases.RUSSIAN_PROSE, size),
        "base64 of random bytes": base64.b64encode(os.urandom(size))[:size].decode(),
        "'ignore ' repeated": filled("ignore ", size),
        "spaced letters": filled("a b ", size),
        "nested encodings": filled("%41&amp;\\u0041 ", size),
        "leetspeak": filled("h4x0r n00b 1337 ", size),
    }


def load_detector_at(revision: str) -> Detector:
    """find_injection as it was at a git revision (its own module, this checkout's imports)."""
    source = subprocess.run(
        ["git", "-C", str(REPO), "show", f"{revision}:foundry/supervision/injection.py"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as file:
        file.write(source)
    spec = importlib.util.spec_from_file_location("injection_before", file.name)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    os.unlink(file.name)
    return module.find_injection  # type: ignore[no-any-return]


def write_flagged(detector: Detector, text: str) -> bool:
    return detector({"path": "notes.md", "content": text}) is not None


def print_twenty(before: Detector | None) -> None:
    print("The twenty encodings of one injection in a workspace write")
    now_total = before_total = 0
    for name, text in cases.twenty_encodings().items():
        now = write_flagged(find_injection, text)
        now_total += now
        line = f"  {name:24s} now: {'flagged' if now else 'NOT flagged'}"
        if before is not None:
            was = write_flagged(before, text)
            before_total += was
            line += f"   before: {'flagged' if was else 'NOT flagged'}"
        print(line)
    summary = f"  flagged now: {now_total} of 20"
    print(summary + (f"; before: {before_total} of 20" if before is not None else ""))


def print_labelled(before: Detector | None) -> None:
    print("\nThe labelled set (find_injection_in_text; before: find_injection on a write)")
    hidden_ways: Counter[str] = Counter()
    flagged_ways: Counter[str] = Counter()
    was_flagged: Counter[str] = Counter()
    for how, text in cases.labelled_injections():
        hidden_ways[how] += 1
        flagged_ways[how] += find_injection_in_text(text) is not None
        if before is not None:
            was_flagged[how] += write_flagged(before, text)
    for how, count in hidden_ways.items():
        line = f"  {how:24s} {flagged_ways[how]:3d} of {count}"
        print(line + (f"   before: {was_flagged[how]:3d}" if before is not None else ""))
    total = sum(hidden_ways.values())
    line = f"  injections flagged: {sum(flagged_ways.values())} of {total}"
    print(line + (f"; before: {sum(was_flagged.values())}" if before is not None else ""))
    print_benign("ordinary texts", [text for _, text in cases.BENIGN], before)
    for name, injections, benign in (
        ("set written after the detector", cases.HELD_OUT_INJECTIONS, cases.HELD_OUT_BENIGN),
        ("second set written after it", cases.FRESH_INJECTIONS, cases.FRESH_BENIGN),
        ("third set, never tuned on", cases.LAST_INJECTIONS, cases.LAST_BENIGN),
    ):
        found = sum(find_injection_in_text(text) is not None for text in injections)
        line = f"  {name}: injections flagged {found} of {len(injections)}"
        if before is not None:
            line += f" (before: {sum(write_flagged(before, text) for text in injections)})"
        print(line)
        print_benign(f"  {name}: ordinary texts", benign, before)


def print_benign(name: str, benign: list[str], before: Detector | None) -> None:
    flagged = [text for text in benign if find_injection_in_text(text) is not None]
    line = f"  {name} flagged: {len(flagged)} of {len(benign)}"
    if before is not None:
        line += f" (before: {sum(write_flagged(before, text) for text in benign)})"
    print(line)
    for text in flagged:
        signal = find_injection_in_text(text)
        print(f"    {text[:60]!r}: {signal.describe() if signal else ''}")


def corpus_files(folders: list[str]) -> list[Path]:
    found: list[Path] = []
    for folder in folders:
        for root, _, names in os.walk(folder):
            found.extend(Path(root, name) for name in names)
    return sorted(found)


def print_corpus(folders: list[str]) -> None:
    read = flagged = 0
    started = time.perf_counter()
    for path in corpus_files(folders):
        try:
            if path.is_symlink() or path.stat().st_size > 1024 * 1024:
                continue
            text = path.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        read += 1
        signal = find_injection_in_text(text, where=str(path))
        if signal is not None:
            flagged += 1
            print(f"  {signal.describe()[:200]}")
    seconds = time.perf_counter() - started
    print(f"\nCorpus: {flagged} of {read} text files flagged ({seconds:.0f} s)")


def best_time(run: Callable[[], object], rounds: int, calls: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        for _ in range(calls):
            run()
        best = min(best, (time.perf_counter() - started) / calls)
    return best


def print_times(rounds: int, calls: int) -> None:
    print("\nfind_injection, per call")
    for name, params in CALLS.items():
        seconds = best_time(lambda params=params: find_injection(params), rounds, calls)
        print(f"  {name:28s} {seconds * 1e6:9.1f} µs")
    for label, size, repeat in (("100 KiB", 100 * 1024, max(calls // 5, 1)), ("1 MiB", 1 << 20, 1)):
        print(f"\nfind_injection_in_text, per text of {label}")
        for name, text in texts(size).items():
            seconds = best_time(lambda text=text: find_injection_in_text(text), rounds, repeat)
            print(f"  {name:28s} {seconds * 1e3:9.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--before", help="a git revision to compare the detector with")
    parser.add_argument("--corpus", nargs="*", default=[], help="folders of real files to read")
    options = parser.parse_args()
    before = load_detector_at(options.before) if options.before else None
    print_twenty(before)
    print_labelled(before)
    if options.corpus:
        print_corpus(options.corpus)
    print_times(options.rounds, options.calls)


if __name__ == "__main__":
    main()
