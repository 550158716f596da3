"""Engine benchmarks, measured side by side in one run.

1. Embedded model: first-token latency and generation speed through Foundry (an engine session,
   tokens observed on the event bus after they are persisted) versus a direct call of the same
   llama.cpp runtime with the same messages and sampling settings. Target: overhead under 5%.
2. Events persisted per second: straight into the store, and through the engine (store + bus);
   metric events (a model call's figures) one commit each, without and with the dashboards'
   aggregates folded in the same transaction.

Run: python bench/engine.py [--rounds 5] [--tokens 64] [--events 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from foundry.llm.embedded import model_path
from foundry.runtime.engine import Engine
from foundry.session.events import ModelCallFinished, TokenDelta, TurnStarted
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


def direct_call(server: Any, max_tokens: int, text: str) -> tuple[float, float]:
    """(first-token seconds, tokens per second) of one streamed call of the runtime itself."""
    body = {
        "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": text}],
        "max_tokens": max_tokens,
        "temperature": 0.0,
        "top_p": 1.0,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    started = time.perf_counter()
    marks: dict[str, float] = {}
    usage: dict[str, Any] = {}

    def on_chunk(chunk: dict[str, Any]) -> bool:
        now = time.perf_counter()
        if any((c.get("delta") or {}).get("content") for c in chunk.get("choices") or []):
            marks.setdefault("first", now)
            marks["last"] = now
        usage.update(chunk.get("usage") or {})
        return False

    server.handle_chat_completions(body, on_chunk)
    return _rates(started, marks, int(usage.get("completion_tokens", 0)))


def _rates(started: float, marks: dict[str, float], tokens: int) -> tuple[float, float]:
    first = marks["first"] - started
    generating = marks["last"] - marks["first"]
    return first, (tokens - 1) / generating if generating > 0 else float("nan")


def foundry_call(engine: Engine, agent: Path, max_tokens: int, text: str) -> tuple[float, float]:
    """The same call as a user turn of an engine session, timed from the bus."""
    session_id = engine.submit(
        engine.open_session(agent, "embedded:smollm2", {"maxOutputTokens": max_tokens})
    ).result()
    marks: dict[str, float] = {}
    tokens = [0]
    done = threading.Event()

    def observe(event: Any) -> None:
        if event.session_id != session_id:
            return
        now = time.perf_counter()
        if isinstance(event.body, TurnStarted):
            marks["start"] = now
        elif isinstance(event.body, TokenDelta):
            marks.setdefault("first", now)
            marks["last"] = now
        elif isinstance(event.body, ModelCallFinished):
            tokens[0] = event.body.output_tokens
            done.set()

    unsubscribe = engine.bus.subscribe(observe)
    engine.submit(engine.send(session_id, text)).result(120)
    done.wait(10)
    unsubscribe()
    engine.submit(engine.close_session(session_id)).result()
    return _rates(marks["start"], marks, tokens[0])


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
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(model_path("smollm2"))
    params.n_ctx = 4096
    params.cpuparams.n_threads = 2
    params.verbosity = -1
    server = xllamacpp.Server(params)
    agent = write_agent(workdir / "agent")
    with Engine(Store.open(f"sqlite:///{workdir / 'bench.sqlite3'}")) as engine:
        foundry_call(engine, agent, max_tokens, prompt(0))  # warm up Foundry's own runtime
        direct_call(server, max_tokens, prompt(1))
        direct, through = [], []
        for number in range(rounds):  # alternate, so that drift hits both alike
            direct.append(direct_call(server, max_tokens, prompt(2 * number + 2)))
            through.append(foundry_call(engine, agent, max_tokens, prompt(2 * number + 3)))
    del server
    report("first token (s)", [d[0] for d in direct], [f[0] for f in through], lower_is_better=True)
    report("tokens per second", [d[1] for d in direct], [f[1] for f in through])


def report(
    name: str, direct: list[float], foundry: list[float], lower_is_better: bool = False
) -> None:
    d, f = statistics.median(direct), statistics.median(foundry)
    overhead = (f / d - 1) if lower_is_better else (d / f - 1)
    print(f"{name:20} direct {d:8.3f}   foundry {f:8.3f}   foundry overhead {overhead:+.1%}")


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--events", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        bench_model(args.rounds, args.tokens, Path(folder))
        bench_events(args.events, Path(folder))
        bench_metric_events(args.events, Path(folder))


if __name__ == "__main__":
    main()
