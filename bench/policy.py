"""Supervision benchmark: L0 decisions per second, and an approval's round trip through the API.

Every rule but the last has a tool glob the call does not match (and a condition that is never
reached); the last one matches. Loop detection and rate limits are off, so the figures are the
rule selection itself. Two cases: the same (agent, tool) pair again and again (the engine
remembers which rules cover a pair), and a new agent, tool and parameters on every call (the
rule index finds the rules that can match without looking at the others). Rates are decisions
per second of the process's own CPU time, steady on a shared machine; the sizes are measured in
alternating rounds and the best round of each is kept.

The round trip: a SupervisedGate whose policy sends the call to a human waits on its approval
(default settings: woken by the store's change watch); a client asks GET /approvals?status=pending
on the approvals API (on loopback), approves with POST, and the gate returns; then the tool runs
for real (get_current_time of the time MCP server). Timed from the request to the tool's result.
The client runs in a process of its own (bench/approver.py: httpx, nothing of Foundry), as every
client of the API does (the app's inbox, agent-mesh, a script); its times (when it saw the
approval, when its approval was answered) come on the machine's monotonic clock. A first round,
the client's start-up, is not counted. Four lines, on SQLite and (when FOUNDRY_DATABASE_URL
names one) PostgreSQL: the client polling every 100 ms as before `wait=` (the baseline), the
client waiting with `wait=` and the API in this process (target: under 15 ms median), the API
served by `foundry serve` in another process over the same store (the gate told within 100 ms),
and, for comparison with earlier runs, the client in the gate's process as this bench had it
(its HTTP work then takes the same CPU as the call's).

Run: python bench/policy.py [--seconds 5] [--rounds 20]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from approver import approve_next
from pydantic import TypeAdapter

from foundry.agent.models import (
    McpServerConfig,
    PolicyCondition,
    PolicyConfig,
    PolicyMatch,
    PolicyRule,
)
from foundry.api import ApiServer, create_app
from foundry.llm.base import ToolCall
from foundry.session.events import EventBody
from foundry.store import Store
from foundry.supervision.hierarchy import SupervisedGate
from foundry.supervision.policy import PolicyEngine
from foundry.tools import ToolHost

TOOL = "files.read_file"
NEW_CALLS_PER_BATCH = 20_000
PARAMS = [{"path": f"src/module_{number}.py", "limit": number} for number in range(256)]

TOKEN = secrets.token_urlsafe(32)  # the API wants 16 characters or more
CLIENT_POLL_S = 0.1
APPROVER = Path(__file__).with_name("approver.py")  # the client, in a process of its own
SERVE = "import sys; from foundry.cli import main; sys.argv[0] = 'foundry'; sys.exit(main())"
TIME_CALL = ToolCall(id="bench", name="time.get_current_time", arguments={"timezone": "UTC"})
TIME_SERVER = {"time": {"command": "python", "args": ["-m", "mcp_server_time"]}}
TO_A_HUMAN = PolicyConfig(
    rules=[PolicyRule(name="ask-a-person", tool="*", action="human")], loop_detection=False
)


def policy_of(size: int) -> PolicyConfig:
    """size rules: size - 1 that never match this tool, then one that does."""
    misses = [
        PolicyRule(
            name=f"miss-{number}",
            tool=f"service{number}.op_*",
            when=PolicyMatch(all=[PolicyCondition(param="limit", op="<", value=number)]),
            action="deny",
        )
        for number in range(size - 1)
    ]
    last = PolicyRule(name="reads", tool="files.*", action="allow")
    return PolicyConfig(rules=[*misses, last], loop_detection=False)


def decisions_per_second(engine: PolicyEngine, seconds: float) -> float:
    """The same agent and tool, in batches, until the time is up; the rate over the CPU time."""
    count = 0
    started = time.process_time()
    while (elapsed := time.process_time() - started) < seconds:
        for params in PARAMS:
            decision = engine.decide("bench", TOOL, params)
            count += 1
    assert decision.action == "allow", decision.reason
    return count / elapsed


def new_calls(batch: int, size: int) -> list[tuple[str, str, dict[str, Any]]]:
    """`size` calls no engine has seen: each with its own agent, tool and parameters."""
    return [
        (f"agent-{batch}-{number}", f"files.op_{batch}_{number}", {"path": f"src/{number}.py"})
        for number in range(size)
    ]


def new_calls_per_second(engine: PolicyEngine, seconds: float, batch: int) -> float:
    """A new (agent, tool, parameters) every call, until the time is up; batches of calls are
    made between timings, so only deciding is timed."""
    count, spent = 0, 0.0
    while spent < seconds:
        batch += 1
        calls = new_calls(batch, NEW_CALLS_PER_BATCH)
        started = time.process_time()
        for agent, tool, params in calls:
            decision = engine.decide(agent, tool, params)
        spent += time.process_time() - started
        count += len(calls)
        assert decision.action == "allow", decision.reason
    return count / spent


@dataclass(frozen=True)
class RoundTrip:
    """Seconds from the tool call's request until each step of one approval's round trip."""

    visible: float
    approved: float
    ran: float


async def _ignore(body: EventBody) -> None:
    return None


async def one_round_trip(gate: SupervisedGate, tools: ToolHost, client: Approver) -> RoundTrip:
    started = time.monotonic()
    decision = await gate.review(TIME_CALL, True)
    assert decision.allowed, decision.reason
    result = await tools.call(TIME_CALL.name, decision.arguments or TIME_CALL.arguments)
    assert not result.is_error, result.text
    ran = time.monotonic()
    visible, approved = await client.approved()
    return RoundTrip(visible - started, approved - started, ran - started)


class Approver:
    """The approving client: in a process of its own, or in this one (as the bench had it
    before: its HTTP work then shares this process's CPU with the call's)."""

    def __init__(self, base_url: str, poll_s: float | None, apart: bool) -> None:
        self._base_url, self._poll_s, self._apart = base_url, poll_s, apart
        self._process: asyncio.subprocess.Process | None = None
        self._here: httpx.AsyncClient | None = None
        self._approving: asyncio.Task[tuple[float, float]] | None = None

    async def __aenter__(self) -> Approver:
        if self._apart:
            poll = ["--poll", str(self._poll_s)] if self._poll_s is not None else []
            command = [sys.executable, str(APPROVER), self._base_url, *poll]
            self._process = await asyncio.create_subprocess_exec(
                *command, stdin=subprocess.PIPE, stdout=subprocess.PIPE
            )
        else:
            self._here = httpx.AsyncClient(base_url=self._base_url, timeout=60)
            self._approving = asyncio.create_task(approve_next(self._here, self._poll_s))
        return self

    async def approved(self) -> tuple[float, float]:
        """When the approval of the call just made was seen and approved."""
        if self._process is not None:
            assert self._process.stdout is not None
            visible, approved = json.loads(await self._process.stdout.readline())
            return float(visible), float(approved)
        assert self._here is not None and self._approving is not None
        times = await self._approving
        self._approving = asyncio.create_task(approve_next(self._here, self._poll_s))
        return times

    async def __aexit__(self, *exc: object) -> None:
        if self._process is not None:
            self._process.kill()
            await self._process.wait()
        if self._approving is not None:
            self._approving.cancel()
            await asyncio.gather(self._approving, return_exceptions=True)
        if self._here is not None:
            await self._here.aclose()


@dataclass(frozen=True)
class Setting:
    """How one line of round trips is run."""

    label: str
    client_poll_s: float | None  # None: GET /approvals?wait=
    api_elsewhere: bool  # the API served by `foundry serve` in another process
    client_apart: bool = True  # the approving client in a process of its own


SETTINGS = (
    Setting("before: the client polls every 100 ms, API in this process", CLIENT_POLL_S, False),
    Setting("pushed: the client waits (wait=), API in this process", None, False),
    Setting("pushed: the client waits (wait=), API in another process", None, True),
    Setting("pushed, the client in this process too (as measured before)", None, False, False),
)


async def round_trips(rounds: int, url: str, setting: Setting) -> list[RoundTrip]:
    """`rounds` approvals through a real API server, store, gate and MCP tool server."""
    servers = TypeAdapter(dict[str, McpServerConfig]).validate_python(TIME_SERVER)
    with tempfile.TemporaryDirectory() as folder, Store.open(url) as store:
        root = Path(folder)
        async with (
            api(store, url, root, setting.api_elsewhere) as base_url,
            ToolHost(servers, root) as tools,
            Approver(
                f"{base_url}/t/{TOKEN}", setting.client_poll_s, setting.client_apart
            ) as client,
        ):
            gate = SupervisedGate(store, TO_A_HUMAN, "bench", "bench", root, _ignore)
            await one_round_trip(gate, tools, client)  # not counted: the client's start-up
            return [await one_round_trip(gate, tools, client) for _ in range(rounds)]


@contextlib.asynccontextmanager
async def api(store: Store, url: str, root: Path, elsewhere: bool) -> AsyncIterator[str]:
    """The base URL of the approvals API over the store: served here, or by `foundry serve`."""
    if not elsewhere:
        server = ApiServer(create_app(store, TOKEN))
        try:
            yield await server.start()
        finally:
            await server.stop()
        return
    port = free_port()
    environment = {
        **os.environ,
        "FOUNDRY_DATABASE_URL": url,
        "FOUNDRY_API_TOKEN": TOKEN,
        "FOUNDRY_HOME": str(root / "home"),
    }
    command = [sys.executable, "-c", SERVE, "serve", "--port", str(port)]
    serving = subprocess.Popen(command, env=environment, stdout=subprocess.DEVNULL)
    try:
        base_url = f"http://127.0.0.1:{port}"
        await until_healthy(base_url)
        yield base_url
    finally:
        serving.terminate()
        serving.wait(30)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


async def until_healthy(base_url: str) -> None:
    async with httpx.AsyncClient(base_url=base_url) as client:
        for _ in range(600):
            with contextlib.suppress(httpx.TransportError):
                if (await client.get("/health")).status_code == 200:
                    return
            await asyncio.sleep(0.1)
    raise RuntimeError("foundry serve did not start within a minute")


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20, method="inclusive")[-1]


def print_round_trips(trips: list[RoundTrip], setting: Setting, database: str) -> None:
    def ms(value: float) -> str:
        return f"{value * 1000:.0f} ms"

    ran = [trip.ran for trip in trips]
    print(
        f"approval round trip on {database}, {setting.label} ({len(trips)} rounds): tool ran "
        f"median {ms(statistics.median(ran))}  p95 {ms(p95(ran))}   (median: pending visible "
        f"{ms(statistics.median(t.visible for t in trips))}, approved "
        f"{ms(statistics.median(t.approved for t in trips))})"
    )


def api_figures(rounds: int) -> None:
    """Each setting on SQLite, and on PostgreSQL when FOUNDRY_DATABASE_URL names one; targets:
    under 15 ms median with the API in this process, the gate told within 100 ms otherwise."""
    databases: list[tuple[str, str | None]] = [("SQLite", None)]
    if os.environ.get("FOUNDRY_DATABASE_URL", "").startswith("postgres"):
        databases.append(("PostgreSQL", os.environ["FOUNDRY_DATABASE_URL"]))
    for name, configured in databases:
        for setting in SETTINGS:
            with tempfile.TemporaryDirectory() as folder:
                url = configured or f"sqlite:///{Path(folder) / 'bench.sqlite3'}"
                trips = asyncio.run(round_trips(rounds, url, setting))
            print_round_trips(trips, setting, name)


def l0_figures(seconds: float) -> None:
    rounds = 3
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        engines = {size: PolicyEngine(policy_of(size), root) for size in (10, 1000)}
        same = dict.fromkeys(engines, 0.0)
        new = dict.fromkeys(engines, 0.0)
        for round_number in range(rounds):
            for size, engine in engines.items():
                same[size] = max(same[size], decisions_per_second(engine, seconds / rounds / 2))
                batch = round_number * 1_000_000
                rate = new_calls_per_second(engine, seconds / rounds / 2, batch)
                new[size] = max(new[size], rate)
    for title, rates in (("the same (agent, tool) pair", same), ("a new call every time", new)):
        print(
            f"L0 decisions per CPU second, {title}: 10 rules  {rates[10]:,.0f}/s   "
            f"1000 rules  {rates[1000]:,.0f}/s   ratio {rates[1000] / rates[10]:.3f}"
        )
    print(f"1000 rules, a new call every time / the same pair: {new[1000] / same[1000]:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="time per size, all rounds")
    parser.add_argument("--rounds", type=int, default=20, help="approval round trips (20)")
    args = parser.parse_args()
    l0_figures(args.seconds)
    api_figures(args.rounds)


if __name__ == "__main__":
    main()
