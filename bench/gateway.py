"""Gateway benchmark: what the gateway adds to an allowed tool call, its throughput, and how soon
an escalated call is visible on the approvals API.

Side by side in one run, with the Python SDK's MCP client on stdio, the targets taking turns call
by call (the machine's speed drifts, so only calls made at the same moments compare):
- straight: the client calls the reference filesystem server (`read_text_file` of small files);
- the floor: a bare pass-through proxy made of the same SDK parts as the gateway (bench/
  bare_proxy.py: the SDK's server on stdio, a ClientSession to the same server, no decision, no
  recording), on the SDK's own stdio and on the gateway's; what the gateway adds beyond the
  second is Foundry's own (decision, recording, bookkeeping);
- through the gateway: the client calls `foundry gateway` in front of the same server, with the
  default policy (reads in the workspace are allowed by L0), every call decided and recorded.
Every call reads another file (the policy's loop detection denies a call repeated).
Latency is the median and p95 of --calls sequential calls after a warm-up; throughput is the
calls per second of --throughput-calls more with IN_FLIGHT of them under way at once on one
client's session (as a client that calls tools in parallel), the targets taking turns batch by
batch. A batch lasts seconds, so that the gateway's recording, gathered for up to 250 ms before
it is stored, falls mostly within its own batch and is counted (short batches left it to the
next target's turn, and the gateway measured up to 1.6 times its sustained rate).
Then the escalation: a policy that asks a person for every call; the time from sending the call
to its approval being listed by GET /approvals?status=pending on the API, calls taking turns
between asking again 1 ms after each empty answer and `wait=` (the API holds the request until
one appears, as a client that waits does); with when the gateway built the approval (its
created_at, before it is stored) and what one GET takes alone.
Without the npm parts (tests/gateway/npm), the time MCP server stands in for the filesystem.
With --against DIR (another checkout of Foundry, say the commit before a change), its gateway is
measured too, in the same run (its calls and escalations taking turns with this one's), and
printed beside this one.

Run: python bench/gateway.py [--calls 300] [--throughput-calls 3000] [--escalations 30]
     [--against DIR] [--quick]
(--quick: 50 calls, 400 for the throughput and 6 escalations, for a first look in a minute or
two; what it is doing is said on stderr as it goes)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
import zoneinfo
from collections.abc import AsyncIterator, Coroutine
from contextlib import AsyncExitStack, asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.stdio import get_default_environment

from foundry.agent.document import read_agent
from foundry.agent.trust import TrustStore
from foundry.api import ApiServer, create_app
from foundry.cli import main as foundry
from foundry.store import Store

REPO = Path(__file__).resolve().parents[1]
BIN = REPO / "tests" / "gateway" / "npm" / "node_modules" / ".bin"
TOKEN = "b" * 43
WARM_UP = 20
IN_FLIGHT = 16
BATCHES = 4  # of the throughput's calls, each target's batches taking turns
# the floor: the SDK's parts relaying calls, nothing decided or recorded (bench/bare_proxy.py)
GATEWAY_FLOOR = "bare SDK proxy, the gateway's stdio"
FLOORS = {"bare SDK proxy, the SDK's stdio": [], GATEWAY_FLOOR: ["--loop-stdio"]}
Calls = list[dict[str, Any]]


def upstream(folder: Path, count: int) -> tuple[dict[str, Any], str, Calls]:
    """The server config, the tool and the arguments of `count` different calls."""
    if (BIN / "mcp-server-filesystem").exists():
        notes = folder / "agent" / "notes"
        notes.mkdir(parents=True, exist_ok=True)
        for number in range(count):
            (notes / f"note{number}.txt").write_text(f"note {number}\n")
        server = {"command": str(BIN / "mcp-server-filesystem"), "args": [str(folder)]}
        calls = [{"path": str(notes / f"note{number}.txt")} for number in range(count)]
        return server, "read_text_file", calls
    server = {"command": sys.executable, "args": ["-m", "mcp_server_time"]}
    zones = sorted(zoneinfo.available_timezones())[:count]
    if len(zones) < count:  # each call must differ (loop detection), and zones run out
        progress(
            f"without the npm parts the time server stands in for the filesystem: "
            f"{len(zones)} calls of the {count} asked (one per time zone)"
        )
    return server, "get_current_time", [{"timezone": zone} for zone in zones]


def progress(message: str) -> None:
    """What the bench is doing, on stderr: a run lasts minutes before its first figure."""
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


@asynccontextmanager
async def connect(
    command: str, args: list[str], root: Path | None = None
) -> AsyncIterator[ClientSession]:
    """A client of the server; `python -m` imports Foundry from `root` when given."""
    env = {**get_default_environment(), "FOUNDRY_HOME": os.environ["FOUNDRY_HOME"]}
    params = StdioServerParameters(command=command, args=args, env=env, cwd=root)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


async def timed_calls(
    targets: dict[str, tuple[ClientSession, str]], calls: Calls, count: int
) -> dict[str, list[float]]:
    """Each target's call times, the targets taking turns call by call (the machine's speed
    drifts: a target measured minutes after another would be measured on another machine)."""
    for client, tool in targets.values():
        for arguments in calls[:WARM_UP]:
            await client.call_tool(tool, arguments)
    times: dict[str, list[float]] = {name: [] for name in targets}
    for arguments in calls[WARM_UP : WARM_UP + count]:
        for name, (client, tool) in targets.items():
            started = time.perf_counter()
            result = await client.call_tool(tool, arguments)
            times[name].append(time.perf_counter() - started)
            assert not result.is_error, result
    return times


def make_agent(folder: Path, server: dict[str, Any], ask: bool) -> Path:
    agent = folder / "agent"
    foundry(["create-agent", str(agent), "--name", "Bench"])
    config = json.loads((agent / "tsagent.json").read_text())
    defaults = {"include": "always", "permissionRequired": False}
    config["mcpServers"] = {"fs": {**server, "serverToolDefaults": defaults}}
    (agent / "tsagent.json").write_text(json.dumps(config))
    if ask:  # the policy lives beside the agent, where create-agent wrote the careful default
        beside = agent / "foundry.json"
        kept = json.loads(beside.read_text())
        (policy,) = [entry for entry in kept["supervisors"] if entry["type"] == "policy"]
        policy["config"] = {"rules": [{"name": "ask-a-person", "tool": "*", "action": "human"}]}
        beside.write_text(json.dumps(kept))
    TrustStore.default().grant(read_agent(agent))
    return agent


def summary(name: str, times: list[float]) -> str:
    ordered = sorted(times)
    p95 = ordered[int(len(ordered) * 0.95) - 1] * 1000
    median, rate = statistics.median(times) * 1000, len(times) / sum(times)
    shown = f"{name:<38} median {median:6.2f} ms  p95 {p95:6.2f} ms"
    return f"{shown}  {rate:4.0f} calls/s one at a time,"


def bare_proxy(server: dict[str, Any], stdio: list[str]) -> list[str]:
    return ["-m", "bench.bare_proxy", *stdio, "--", server["command"], *server["args"]]


def gateway(agent: Path) -> list[str]:
    return ["-m", "foundry.cli", "gateway", str(agent)]


async def throughput(
    targets: dict[str, tuple[ClientSession, str]], calls: Calls
) -> dict[str, float]:
    """Each target's calls per second with IN_FLIGHT calls under way at once."""
    spent = dict.fromkeys(targets, 0.0)
    size = len(calls) // BATCHES
    for batch in (calls[start : start + size] for start in range(0, size * BATCHES, size)):
        for name, (client, tool) in targets.items():
            started = time.perf_counter()
            results = await in_flight(client, tool, batch)
            spent[name] += time.perf_counter() - started
            assert not any(result.is_error for result in results), name
    return {name: size * BATCHES / seconds for name, seconds in spent.items()}


async def in_flight(client: ClientSession, tool: str, calls: Calls) -> list[Any]:
    slots = asyncio.Semaphore(IN_FLIGHT)

    async def call(arguments: dict[str, Any]) -> Any:
        async with slots:
            return await client.call_tool(tool, arguments)

    return await asyncio.gather(*(call(arguments) for arguments in calls))


async def latency(folder: Path, count: int, throughput_count: int, roots: dict[str, Path]) -> None:
    server, tool, calls = upstream(folder, WARM_UP + count + throughput_count)
    agent = make_agent(folder, server, ask=False)
    straight = f"straight to {Path(server['command']).name}"
    commands: dict[str, tuple[str, list[str], Path | None, str]] = {
        straight: (server["command"], server["args"], None, tool)
    }
    for name, stdio in FLOORS.items():
        commands[name] = (sys.executable, bare_proxy(server, stdio), REPO, tool)
    for name, root in roots.items():  # each gateway its own process: loop detection starts anew
        commands[f"through the gateway{name}"] = (
            sys.executable,
            gateway(agent),
            root,
            f"fs__{tool}",
        )
    async with AsyncExitStack() as stack:
        progress(f"starting {len(commands)} targets: {', '.join(commands)}")
        targets = {
            name: (await stack.enter_async_context(connect(command, args, root)), called)
            for name, (command, args, root, called) in commands.items()
        }
        measured = calls[WARM_UP : WARM_UP + count]
        progress(f"latency: {WARM_UP} + {len(measured)} calls to each target, taking turns")
        times = await timed_calls(targets, calls, count)
        rest = calls[WARM_UP + count :]
        progress(f"throughput: {len(rest) // BATCHES * BATCHES} calls to each, {IN_FLIGHT} at once")
        rates = await throughput(targets, rest)
    for name, measured in times.items():
        print(f"{summary(name, measured)}   {rates[name]:6.0f} calls/s, {IN_FLIGHT} in flight")
    direct, floor = statistics.median(times[straight]), statistics.median(times[GATEWAY_FLOOR])
    print(f"the floor: the SDK's relaying adds {(floor - direct) * 1000:.2f} ms at the median")
    for name in roots:
        measured = times[f"through the gateway{name}"]
        added = (statistics.median(measured) - direct) * 1000
        own = (statistics.median(measured) - floor) * 1000
        rate = rates[f"through the gateway{name}"]
        print(f"through the gateway{name}: adds {added:.2f} ms at the median (target < 2 ms), "
              f"Foundry's own {own:.2f} ms of it (beyond the floor); {rate:.0f} allowed calls/s "
              f"through one gateway with {IN_FLIGHT} in flight (target >= 500; the floor "
              f"{rates[GATEWAY_FLOOR]:.0f})")  # fmt: skip


async def escalation(folder: Path, count: int, roots: dict[str, Path]) -> None:
    server, tool, calls = upstream(folder, count)
    agent = make_agent(folder, server, ask=True)
    store = Store.open()
    api = ApiServer(create_app(store, TOKEN))
    url = await api.start()
    seen: dict[tuple[str, str], list[float]] = {(name, how): [] for name in roots for how in LOOKS}
    built: dict[str, list[float]] = {name: [] for name in roots}
    headers = {"Authorization": f"Bearer {TOKEN}"}
    try:
        async with (
            AsyncExitStack() as stack,
            httpx.AsyncClient(base_url=url, headers=headers) as http,
        ):
            clients = {
                name: await stack.enter_async_context(connect(sys.executable, gateway(agent), root))
                for name, root in roots.items()
            }
            one_get = await get_alone(http)
            progress(f"escalation: {count} calls asking a person, to each gateway")
            for number in range(count):  # the gateways, and the ways to look, taking turns
                how = POLLED if number % 2 else WAITED
                for name, client in clients.items():
                    call = client.call_tool(f"fs__{tool}", calls[number])
                    waited, made = await visible(http, how, call)
                    seen[name, how].append(waited)
                    built[name].append(made)
    finally:
        await api.stop()
        store.close()
    for (name, how), times in seen.items():
        median, worst = statistics.median(times) * 1000, max(times) * 1000
        print(f"escalation visible on the API{name}, {how}: median {median:.1f} ms, max "
              f"{worst:.1f} ms over {len(times)} calls (target < 10 ms median)")  # fmt: skip
    for name, times in built.items():
        print(f"  the gateway{name} built the approval (its created_at, before storing it) "
              f"after a median {statistics.median(times) * 1000:.1f} ms")  # fmt: skip
    print(f"  one GET /approvals alone takes a median {one_get * 1000:.1f} ms")


async def visible(
    http: httpx.AsyncClient, how: str, call: Coroutine[Any, Any, Any]
) -> tuple[float, float]:
    """Send the call that asks a person, then approve it once the API lists it: how long until
    it was listed, and until the gateway built it."""
    looking = asyncio.ensure_future(LOOKS[how](http))
    started, sent = time.perf_counter(), datetime.now(UTC)
    waiting = asyncio.ensure_future(call)
    approval = await looking
    waited = time.perf_counter() - started
    await http.post(f"/approvals/{approval['id']}/approve")
    await waiting
    return waited, (created_at(approval) - sent).total_seconds()


async def first_polled(http: httpx.AsyncClient) -> dict[str, Any]:
    """The first pending approval, asking again 1 ms after each empty answer."""
    while True:
        pending = (await http.get("/approvals", params={"status": "pending"})).json()
        if pending:
            return dict(pending[0])
        await asyncio.sleep(0.001)


async def first_waited(http: httpx.AsyncClient) -> dict[str, Any]:
    """The first pending approval, the API holding the request until one appears."""
    while True:
        params: dict[str, str | int] = {"status": "pending", "wait": LONG_POLL_S}
        pending = (await http.get("/approvals", params=params, timeout=LONG_POLL_S + 5)).json()
        if pending:
            return dict(pending[0])


POLLED = "GET polled every 1 ms"
WAITED = "GET ?wait= held until it appears"
LOOKS = {POLLED: first_polled, WAITED: first_waited}
LONG_POLL_S = 10


async def get_alone(http: httpx.AsyncClient, count: int = 50) -> float:
    """The median time of one GET /approvals?status=pending with nothing else under way."""
    times = []
    for _ in range(count):
        started = time.perf_counter()
        await http.get("/approvals", params={"status": "pending"})
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def created_at(approval: dict[str, Any]) -> datetime:
    created = datetime.fromisoformat(approval["created_at"])
    return created if created.tzinfo else created.replace(tzinfo=UTC)


def run() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--throughput-calls", type=int, default=3000)
    parser.add_argument("--escalations", type=int, default=30, help="0: latency only")
    parser.add_argument("--against", type=Path, help="another checkout's gateway, beside this one")
    parser.add_argument("--quick", action="store_true", help="fewer calls: a first look")
    options = parser.parse_args()
    if options.quick:
        options.calls, options.throughput_calls, options.escalations = 50, 400, 6
    roots: dict[str, Path] = {"": REPO}
    if options.against is not None:
        roots[f" of {options.against}"] = options.against.resolve()
    with tempfile.TemporaryDirectory() as folder:
        os.environ["FOUNDRY_HOME"] = str(Path(folder) / "home")
        allowed = Path(folder) / "allowed"
        asyncio.run(latency(allowed, options.calls, options.throughput_calls, roots))
        if options.escalations > 0:
            asyncio.run(escalation(Path(folder) / "asked", options.escalations, roots))


if __name__ == "__main__":
    run()
