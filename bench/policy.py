"""Supervision benchmark: L0 decisions per second, and an approval's round trip through the API.

Every rule but the last has a tool glob the call does not match (and a condition that is never
reached); the last one matches. Loop detection and rate limits are off, so the figures are the
rule selection itself. Two cases: the same (agent, tool) pair again and again (the engine
remembers which rules cover a pair), and a new agent, tool and parameters on every call (the
rule index finds the rules that can match without looking at the others). Rates are decisions
per second of the process's own CPU time, steady on a shared machine; the sizes are measured in
alternating rounds and the best round of each is kept.

The round trip: a SupervisedGate whose policy sends the call to a human waits on its approval
(polling the store every --gate-poll s); a client polls GET /approvals?status=pending on the
approvals API (on loopback, every --client-poll s), approves with POST, and the gate returns;
then the tool runs for real (get_current_time of the time MCP server). Timed from the request to
the tool's result; a second line uses 10 ms polls on both sides, the machinery without waiting.

Run: python bench/policy.py [--seconds 5] [--rounds 20] [--gate-poll 0.25] [--client-poll 0.1]
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
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
from foundry.supervision.inbox import POLL_S
from foundry.supervision.policy import PolicyEngine
from foundry.tools import ToolHost

TOOL = "files.read_file"
NEW_CALLS_PER_BATCH = 20_000
PARAMS = [{"path": f"src/module_{number}.py", "limit": number} for number in range(256)]

TOKEN = secrets.token_urlsafe(32)  # the API wants 16 characters or more
CLIENT_POLL_S = 0.1
FAST_POLL_S = 0.01
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


async def first_pending(client: httpx.AsyncClient, poll_s: float) -> str:
    """Poll the API until an approval is pending; its id."""
    while True:
        response = await client.get("/approvals", params={"status": "pending"})
        waiting = response.raise_for_status().json()
        if waiting:
            approval_id: str = waiting[0]["id"]
            return approval_id
        await asyncio.sleep(poll_s)


async def one_round_trip(
    gate: SupervisedGate, tools: ToolHost, client: httpx.AsyncClient, poll_s: float
) -> RoundTrip:
    async def agent() -> float:
        decision = await gate.review(TIME_CALL, True)
        assert decision.allowed, decision.reason
        result = await tools.call(TIME_CALL.name, decision.arguments or TIME_CALL.arguments)
        assert not result.is_error, result.text
        return time.perf_counter()

    started = time.perf_counter()
    calling = asyncio.create_task(agent())
    approval_id = await first_pending(client, poll_s)
    visible = time.perf_counter()
    approve = await client.post(f"/approvals/{approval_id}/approve", json={"reasoning": "bench"})
    approve.raise_for_status()
    approved = time.perf_counter()
    ran = await calling
    return RoundTrip(visible - started, approved - started, ran - started)


async def round_trips(rounds: int, gate_poll_s: float, client_poll_s: float) -> list[RoundTrip]:
    """`rounds` approvals through a real API server, store, gate and MCP tool server."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        servers = TypeAdapter(dict[str, McpServerConfig]).validate_python(TIME_SERVER)
        with Store.open(f"sqlite:///{root / 'bench.sqlite3'}") as store:
            server = ApiServer(create_app(store, TOKEN))
            mesh_url = f"{await server.start()}/t/{TOKEN}"
            try:
                async with (
                    ToolHost(servers, root) as tools,
                    httpx.AsyncClient(base_url=mesh_url, timeout=10) as client,
                ):
                    gate = SupervisedGate(
                        store, TO_A_HUMAN, "bench", "bench", root, _ignore, poll_s=gate_poll_s
                    )
                    return [
                        await one_round_trip(gate, tools, client, client_poll_s)
                        for _ in range(rounds)
                    ]
            finally:
                await server.stop()


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20, method="inclusive")[-1]


def print_round_trips(trips: list[RoundTrip], gate_poll_s: float, client_poll_s: float) -> None:
    def ms(value: float) -> str:
        return f"{value * 1000:.0f} ms"

    ran = [trip.ran for trip in trips]
    print(
        f"approval round trip, gate polls every {ms(gate_poll_s)}, client every "
        f"{ms(client_poll_s)} ({len(trips)} rounds): tool ran median {ms(statistics.median(ran))}"
        f"  p95 {ms(p95(ran))}   (median: pending visible "
        f"{ms(statistics.median(t.visible for t in trips))}, approved "
        f"{ms(statistics.median(t.approved for t in trips))})"
    )


def api_figures(rounds: int, gate_poll_s: float, client_poll_s: float) -> None:
    for gate_s, client_s in ((gate_poll_s, client_poll_s), (FAST_POLL_S, FAST_POLL_S)):
        trips = asyncio.run(round_trips(rounds, gate_s, client_s))
        print_round_trips(trips, gate_s, client_s)


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
    parser.add_argument(
        "--gate-poll", type=float, default=POLL_S, help=f"gate's store poll, s ({POLL_S})"
    )
    parser.add_argument(
        "--client-poll",
        type=float,
        default=CLIENT_POLL_S,
        help=f"client's GET /approvals poll, s ({CLIENT_POLL_S})",
    )
    args = parser.parse_args()
    l0_figures(args.seconds)
    api_figures(args.rounds, args.gate_poll, args.client_poll)


if __name__ == "__main__":
    main()
