"""Engine benchmarks, measured side by side in one run.

1. Embedded model: first-token latency and generation speed through Foundry (an engine session,
   timed from Send to the tokens observed on the event bus after they are persisted) versus a
   direct call of the same llama.cpp runtime, loaded with the same settings, given the same
   prompt with the same sampling settings (each side has its own runtime, so neither reuses the
   other's cached prompt). Target: overhead under 5%, as the median of the rounds' ratios (the
   rounds alternate which side goes first, so that drift under load hits both alike).
2. Events persisted per second: straight into the store, and through the engine (store + bus);
   metric events (a model call's figures) one commit each, without and with the dashboards'
   aggregates folded in the same transaction.
3. The sample assistant (guardian, context curator, architect, statistics, policy) versus the
   same agent without supervisors and the bare embedded model, on messages of the same shape
   (never the same one twice: the runtime would reuse a cached prompt): first token (target:
   within 1.25x), and from the reply's last token to the reply stored and to
   the turn's end, when Send is enabled again (target: within 0.3 s). The reviews that run
   after the reply are waited for between rounds, so that each round starts on an idle model.
4. (--memory) Resident memory of an engine process with the sample assistant after one reply
   (its supervisors use the same embedded model): anonymous and file-backed parts, and the
   model's weights mapped from its file among them; with a store made by an earlier process
   (every launch but the first) and with a new one, whose schema alembic creates. Target:
   under 300 MiB. The app's own figure is bench/ui.py's.

Run: python bench/engine.py [--rounds 5] [--tokens 64] [--events 2000] [--assistant-rounds 5]
                            [--only-model | --only-assistant | --memory]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from foundry.agent.document import load_agent
from foundry.agent.trust import TrustStore
from foundry.home import shipped_path
from foundry.llm.embedded import model_path, runtime_params
from foundry.runtime.engine import Engine
from foundry.runtime.journal import TOKEN_GROUP_S
from foundry.session.events import (
    ContextSelected,
    MessageAdded,
    ModelCallFinished,
    SupervisorDecided,
    TokenDelta,
    TurnFinished,
    TurnStarted,
)
from foundry.store import Store

SYSTEM = "You are a helpful assistant."
TOPICS = [
    "the sky is blue",
    "leaves fall",
    "bread rises",
    "ice floats",
    "the sea is salty",
    "cats purr",
    "stars twinkle",
    "rivers bend",
    "bees dance",
    "snow squeaks",
    "metal rusts",
    "birds migrate",
    "onions sting",
    "the moon has phases",
]


def prompt(number: int) -> str:
    """A prompt no earlier call has seen, so that neither side reuses a cached prompt."""
    return f"Explain in a few sentences why {TOPICS[number % len(TOPICS)]}. (question {number})"


@dataclass
class Streamed:
    """One streamed reply as its caller saw it: seconds to the first token, tokens per second
    after it, the longest wait between two tokens, and the text (the same prompt gives the
    same text on both sides)."""

    first_token_s: float
    tokens_per_s: float
    longest_gap_s: float
    text: str


def direct_call(server: Any, max_tokens: int, text: str) -> Streamed:
    """One streamed call of the runtime itself, timed from the call."""
    body = {
        "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": text}],
        "max_tokens": max_tokens,
        "temperature": 0.0,
        "top_p": 1.0,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    arrivals: list[float] = []
    usage: dict[str, Any] = {}
    pieces: list[str] = []

    def on_chunk(chunk: dict[str, Any]) -> bool:
        now = time.perf_counter()
        for choice in chunk.get("choices") or []:
            if content := (choice.get("delta") or {}).get("content"):
                pieces.append(content)
                arrivals.append(now)
        usage.update(chunk.get("usage") or {})
        return False

    started = time.perf_counter()
    server.handle_chat_completions(body, on_chunk)
    return _streamed(started, arrivals, int(usage.get("completion_tokens", 0)), "".join(pieces))


def _streamed(started: float, arrivals: list[float], tokens: int, text: str) -> Streamed:
    generating = arrivals[-1] - arrivals[0]
    rate = (tokens - 1) / generating if generating > 0 else float("nan")
    gap = max((b - a for a, b in itertools.pairwise(arrivals)), default=0.0)
    return Streamed(arrivals[0] - started, rate, gap, text)


def foundry_call(engine: Engine, agent: Path, max_tokens: int, text: str) -> Streamed:
    """The same call as a user turn of an engine session, timed from Send to the tokens as the
    bus delivers them (after they are stored)."""
    session_id = engine.submit(
        engine.open_session(agent, "embedded:smollm2", {"maxOutputTokens": max_tokens})
    ).result()
    arrivals: list[float] = []
    tokens = [0]
    pieces: list[str] = []
    done = threading.Event()

    def observe(event: Any) -> None:
        if event.session_id != session_id:
            return
        if isinstance(event.body, TokenDelta):
            pieces.append(event.body.text)
            arrivals.append(time.perf_counter())
        elif isinstance(event.body, ModelCallFinished):
            tokens[0] = event.body.output_tokens
            done.set()

    unsubscribe = engine.bus.subscribe(observe)
    started = time.perf_counter()
    engine.submit(engine.send(session_id, text)).result(120)
    done.wait(10)
    unsubscribe()
    engine.submit(engine.close_session(session_id)).result()
    return _streamed(started, arrivals, tokens[0], "".join(pieces))


def write_agent(root: Path) -> Path:
    root.mkdir(parents=True)
    config = {
        "metadata": {"name": "bench"},
        "settings": {"temperature": 0.0, "topP": 1.0, "model": "embedded:smollm2"},
    }
    (root / "tsagent.json").write_text(json.dumps(config))
    (root / "prompt.md").write_text(SYSTEM)
    return root


def bench_model(rounds: int, max_tokens: int, workdir: Path) -> None:
    """Each round asks both sides the same new prompt (each side has its own runtime, so
    neither reuses the other's cached prompt), which side goes first alternating."""
    server = open_runtime()
    agent = write_agent(workdir / "agent")
    load = os.getloadavg()[0]
    with Engine(Store.open(f"sqlite:///{workdir / 'bench.sqlite3'}")) as engine:
        foundry_call(engine, agent, max_tokens, prompt(0))  # warm up Foundry's own runtime
        direct_call(server, max_tokens, prompt(0))
        direct, through = [], []
        for number in range(1, rounds + 1):
            text = prompt(number)
            if number % 2:
                direct.append(direct_call(server, max_tokens, text))
                through.append(foundry_call(engine, agent, max_tokens, text))
            else:
                through.append(foundry_call(engine, agent, max_tokens, text))
                direct.append(direct_call(server, max_tokens, text))
    del server
    same = sum(d.text == f.text for d, f in zip(direct, through, strict=True))
    print(
        f"embedded model, bare runtime vs an engine session, same prompt both sides, "
        f"{rounds} rounds (load average {load:.1f} at start, {os.getloadavg()[0]:.1f} at end; "
        f"same reply in {same} of {rounds})"
    )
    firsts = ([d.first_token_s for d in direct], [f.first_token_s for f in through])
    report("first token (s)", *firsts, lower_is_better=True)
    rates = ([d.tokens_per_s for d in direct], [f.tokens_per_s for f in through])
    report("tokens per second", *rates)
    gaps = [statistics.median(s.longest_gap_s * 1000 for s in side) for side in (direct, through)]
    print(
        f"{'longest token gap':20} direct {gaps[0]:6.1f} ms   foundry {gaps[1]:6.1f} ms (median "
        f"of the rounds; tokens reach the bus in groups of up to {TOKEN_GROUP_S * 1000:.0f} ms)"
    )


def report(
    name: str, direct: list[float], foundry: list[float], lower_is_better: bool = False
) -> None:
    """Medians of each side, and the median of the rounds' ratios (target: within 5%)."""
    ratios = [f / d if lower_is_better else d / f for d, f in zip(direct, foundry, strict=True)]
    overhead = statistics.median(ratios) - 1
    print(
        f"{name:20} direct {statistics.median(direct):8.3f}   "
        f"foundry {statistics.median(foundry):8.3f}   "
        f"foundry overhead {overhead:+.1%} (median of the rounds' ratios; target: within 5%)"
    )


def bench_events(count: int, workdir: Path) -> None:
    store = Store.open(f"sqlite:///{workdir / 'events.sqlite3'}")
    payload = {"text": "token"}
    started = time.perf_counter()
    for _ in range(count):
        store.events.append("bench-store", "token", payload)
    direct = count / (time.perf_counter() - started)
    with Engine(store) as engine:
        started = time.perf_counter()
        engine.submit(_record_one_by_one(engine, count)).result()
        one_by_one = count / (time.perf_counter() - started)
        started = time.perf_counter()
        engine.submit(_record_streamed(engine, count)).result()
        streamed = count / (time.perf_counter() - started)
    print(f"{'events per second':20} store, one commit each {direct:8.0f}")
    print(f"{'':20} engine, each awaited   {one_by_one:8.0f}   ratio {one_by_one / direct:.2f}")
    print(
        f"{'':20} engine, streamed       {streamed:8.0f}   ratio {streamed / direct:.2f} "
        "(group commits, as for tokens)"
    )


def bench_metric_events(count: int, workdir: Path) -> None:
    from foundry.metrics import keep_aggregates
    from foundry.session.events import SessionStarted, event_payload

    call = event_payload(
        ModelCallFinished(
            model="embedded:smollm2",
            input_tokens=900,
            output_tokens=200,
            first_token_s=0.4,
            total_s=2.5,
            stop_reason="stop",
        )
    )
    opening = SessionStarted(agent_path="/a/coder", agent_name="coder", model="m")
    rates = []
    for name, keep in (("plain", False), ("kept", True)):
        store = Store.open(f"sqlite:///{workdir / f'metrics-{name}.sqlite3'}")
        if keep:
            keep_aggregates(store)
        store.events.append("bench-chat", opening.kind, event_payload(opening))
        started = time.perf_counter()
        for _ in range(count):
            store.events.append("bench-chat", "model_call", call)
        rates.append(count / (time.perf_counter() - started))
        store.close()
    print(
        f"{'':20} model calls, without aggregates {rates[0]:8.0f}   with {rates[1]:8.0f}   "
        f"ratio {rates[1] / rates[0]:.2f}"
    )


async def _record_one_by_one(engine: Engine, count: int) -> None:
    for _ in range(count):
        await engine.record("bench-engine", TokenDelta(text="token"))


async def _record_streamed(engine: Engine, count: int) -> None:
    pending = [engine.record("bench-stream", TokenDelta(text="token")) for _ in range(count)]
    await asyncio.gather(*pending)


def open_runtime() -> Any:
    """The bare runtime, loaded with the settings Foundry's own runtime uses."""
    import xllamacpp

    return xllamacpp.Server(runtime_params(model_path("smollm2")))


def assistant_call(engine: Engine, agent: Path, max_tokens: int, text: str) -> dict[str, float]:
    """A user turn of a new session of the sample assistant, timed from the bus: first token,
    last token, reply stored, turn ended, each from the turn's start; then the reviews after the
    reply are waited for (`after`, from the turn's end)."""
    overrides = {"maxOutputTokens": max_tokens}
    session_id = engine.submit(engine.open_session(agent, settings_overrides=overrides)).result()
    marks: dict[str, float] = {}

    def observe(event: Any) -> None:
        if event.session_id != session_id:
            return
        now = time.perf_counter()
        body = event.body
        if isinstance(body, TurnStarted):
            marks["start"] = now
        elif isinstance(body, ContextSelected):
            marks.setdefault("request", now)  # the model is asked from here on
        elif isinstance(body, TokenDelta):
            marks.setdefault("first", now)
            marks["last"] = now
        elif isinstance(body, MessageAdded) and body.message.role == "assistant":
            marks["stored"] = now
        elif isinstance(body, TurnFinished):
            marks["ended"] = now
        elif isinstance(body, SupervisorDecided) and body.background:
            marks["after"] = now

    unsubscribe = engine.bus.subscribe(observe)
    engine.submit(engine.send(session_id, text)).result(600)
    engine.submit(engine.settle(session_id)).result(900)
    unsubscribe()
    engine.submit(engine.close_session(session_id)).result()
    start = marks["start"]
    return {key: value - start for key, value in marks.items() if key != "start"}


def bare_call(server: Any, system: str, max_tokens: int, text: str) -> dict[str, float]:
    body = {
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": text}],
        "max_tokens": max_tokens,
        "temperature": 0.3,
        "top_p": 0.9,
        "stream": True,
    }
    started = time.perf_counter()
    marks: dict[str, float] = {}

    def on_chunk(chunk: dict[str, Any]) -> bool:
        if any((c.get("delta") or {}).get("content") for c in chunk.get("choices") or []):
            marks.setdefault("first", time.perf_counter() - started)
        return False

    server.handle_chat_completions(body, on_chunk)
    return marks


def unsupervised_copy(agent: Path, workdir: Path, trust: TrustStore) -> Path:
    """The same agent (prompt, rules, references, tools, settings) without its supervisors."""
    copy = workdir / "unsupervised-assistant"
    shutil.copytree(agent, copy)
    for name in ("tsagent.json", "foundry.json"):  # Foundry's own supervisors may be beside
        if (copy / name).exists():
            config = json.loads((copy / name).read_text())
            config["supervisors"] = []
            (copy / name).write_text(json.dumps(config))
    trust.grant(load_agent(copy))  # its time server, as the shipped agent's is trusted
    return copy


def bench_assistant(rounds: int, max_tokens: int, workdir: Path) -> None:
    """The sample assistant against the same agent without supervisors (both through Foundry)
    and against the bare model given the assistant's prompt, on messages of the same shape; the
    sample assistant's first turn in the engine is shown apart (the model already loaded)."""
    agent = shipped_path("agents") / "assistant"
    system = (agent / "prompt.md").read_text()
    trust = TrustStore(workdir / "trust.json")
    plain = unsupervised_copy(agent, workdir, trust)
    server = open_runtime()
    load = os.getloadavg()[0]
    store = Store.open(f"sqlite:///{workdir / 'assistant.sqlite3'}")
    with Engine(store, trust=trust) as engine:
        assistant_call(engine, plain, max_tokens, prompt(100))  # loads Foundry's runtime
        first = assistant_call(engine, agent, max_tokens, prompt(101))
        bare_call(server, system, max_tokens, prompt(102))
        bare, unsupervised, supervised = [], [], []
        for number in range(103, 103 + 3 * rounds, 3):  # alternate, so that drift hits all alike
            # a message no earlier call has seen (the runtime would reuse a cached prompt)
            bare.append(bare_call(server, system, max_tokens, prompt(number)))
            unsupervised.append(assistant_call(engine, plain, max_tokens, prompt(number + 1)))
            supervised.append(assistant_call(engine, agent, max_tokens, prompt(number + 2)))
    del server
    timed = [
        trio
        for trio in zip(bare, unsupervised, supervised, strict=True)
        if all("first" in m for m in trio)
    ]
    if len(timed) < rounds:  # SmolLM2 calls the time tool for most questions, a reply or not
        print(f"sample assistant: {rounds - len(timed)} of {rounds} rounds left out, a turn in "
              "them gave no reply text to time (the model only called tools)")  # fmt: skip
    if not timed:
        return
    bare, unsupervised, supervised = (list(series) for series in zip(*timed, strict=True))
    b, u, a = (statistics.median(m["first"] for m in ms) for ms in (bare, unsupervised, supervised))
    asked = [statistics.median(m["request"] for m in ms) for ms in (unsupervised, supervised)]
    stored = statistics.median(m["stored"] - m["last"] for m in supervised)
    ended = statistics.median(m["ended"] - m["last"] for m in supervised)
    after = [m["after"] - m["ended"] for m in supervised if "after" in m]
    print(f"sample assistant, median of {rounds} (load average {load:.1f} at start)")
    print(
        f"{'first token (s)':20} bare model {b:6.3f}   assistant without supervisors {u:6.3f}"
        f"   sample assistant {a:6.3f}"
    )
    print(
        f"{'':20} ratio to the unsupervised assistant {a / u:.2f}, to the bare model {a / b:.2f}"
        " (target: at most 1.25)"
    )
    print(
        f"{'model asked after':20} assistant without supervisors {asked[0] * 1000:6.1f} ms"
        f"   sample assistant {asked[1] * 1000:6.1f} ms (what supervision adds before the model)"
    )
    print(f"{'last token to':20} reply stored {stored:6.3f} s   turn ended (Send) {ended:6.3f} s")
    print(f"{'':20} (target: at most 0.3 s)")
    if after:
        print(f"{'reviews after reply':20} last decision {statistics.median(after):6.2f} s after")
    if "first" in first:
        print(
            f"{'its first turn':20} first token {first['first']:6.3f} s, "
            f"turn ended {first['ended'] - first['last']:6.3f} s after its last token"
        )


MEMORY_MESSAGE = "Hello! What time is it in Tokyo?"
TARGET_MEMORY_MIB = 300


def memory_mib(model: Path | None = None) -> dict[str, float]:
    """This process's resident memory, its anonymous and file-backed parts, and the pages of
    `model` (the weights, mapped from the file) among them, in MiB."""
    status = Path("/proc/self/status").read_text().splitlines()
    fields = dict(line.split(":", 1) for line in status if ":" in line)
    names = {"rss": "VmRSS", "anon": "RssAnon", "file": "RssFile"}
    figures = {name: int(fields[field].split()[0]) / 1024 for name, field in names.items()}
    if model is not None:
        figures["weights"] = _mapped_kib(str(model.resolve())) / 1024
    return figures


def _mapped_kib(path: str) -> int:
    total, inside = 0, False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        if not line[:1].isupper():  # a mapping's header: "start-end perms offset dev inode path"
            inside = line.endswith(path)
        elif inside and line.startswith("Rss:"):
            total += int(line.split()[1])
    return total


def memory_child(message: str, new_store: bool) -> None:
    """In a process of its own: the engine with the sample assistant (its supervisors on the
    same embedded model), one reply and the reviews after it, then its memory, as JSON. The
    store is new (its schema created here, with alembic) or made by an earlier process, as
    every launch after the first finds it."""
    from foundry.llm import embedded

    agent = shipped_path("agents") / "assistant"
    figures = {f"imported_{k}": v for k, v in memory_mib().items()}
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{Path(folder) / 'memory.sqlite3'}"
        if not new_store:
            made = f"from foundry.store import Store; Store.open({url!r}).close()"
            subprocess.run([sys.executable, "-c", made], check=True, timeout=300)
        trust = TrustStore(Path(folder) / "trust.json")
        trust.grant(load_agent(agent))
        with Engine(Store.open(url), trust=trust) as e:
            session_id = e.submit(e.open_session(agent)).result()
            e.submit(e.send(session_id, message)).result(900)
            e.submit(e.settle(session_id)).result(900)
            figures.update(memory_mib(model_path("smollm2")), runtimes=len(embedded._runtimes))
    print(json.dumps(figures))


def bench_memory(message: str) -> None:
    print(f"engine process with the sample assistant, after one reply to {message!r}")
    size = model_path("smollm2").stat().st_size / 2**20
    for new_store in (False, True):
        flag = ["--new-store"] if new_store else []
        child = [sys.executable, __file__, "--memory-child", message, *flag]
        done = subprocess.run(child, capture_output=True, text=True, timeout=1800, check=False)
        if done.returncode != 0:
            print(f"memory: the child process failed:\n{done.stderr[-2000:]}")
            return
        figures = json.loads(done.stdout.strip().splitlines()[-1])
        store = "a new store" if new_store else "a store made before"
        print(
            f"{'resident memory':20} {figures['rss']:6.0f} MiB (target {TARGET_MEMORY_MIB}) with "
            f"{store}: {figures['anon']:.0f} anonymous + {figures['file']:.0f} file-backed, "
            f"of which the weights mapped from the model file {figures['weights']:.0f} "
            f"(file {size:.0f} MiB)"
        )
    print(
        f"{'':20} {figures['imported_rss']:6.0f} MiB once Foundry is imported; "
        f"{figures['runtimes']} model loaded for the agent and its supervisors"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--assistant-rounds", type=int, default=5)
    parser.add_argument("--only-assistant", action="store_true", help="part 3 only")
    parser.add_argument("--only-model", action="store_true", help="part 1 only")
    parser.add_argument("--memory", action="store_true", help="part 4 only")
    parser.add_argument("--memory-child", help=argparse.SUPPRESS)
    parser.add_argument("--new-store", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory_child:
        return memory_child(args.memory_child, args.new_store)
    if args.memory:
        return bench_memory(MEMORY_MESSAGE)
    with tempfile.TemporaryDirectory() as folder:
        if not args.only_assistant:
            bench_model(args.rounds, args.tokens, Path(folder))
            if args.only_model:
                return
            bench_events(args.events, Path(folder))
            bench_metric_events(args.events, Path(folder))
        bench_assistant(args.assistant_rounds, args.tokens, Path(folder))


if __name__ == "__main__":
    main()
