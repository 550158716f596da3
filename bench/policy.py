"""Supervision benchmark: L0 decisions per second, and an approval's round trip through the API.

Every rule but the last has a tool glob the call does not match (and a condition that is never
reached); the last one matches. Loop detection and rate limits are off, so the figures are the
rule walk itself. The engine remembers which rules cover an (agent, tool) pair, as pairs repeat
in a session; a second line gives the first call of a new pair, which walks every glob.
The two sizes are measured in alternating rounds and the best round of each is kept.

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
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

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
PARAMS = [{"path": f"src/module_{number}.py", "limit": number} for number in range(256)]

TOKEN = "bench-token"
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


def decisions_per_second(engine: PolicyEngine, seconds: float, new_pairs: bool = False) -> float:
    """Decide repeatedly, in batches, until the time is up; the rate over the whole time.

    With new_pairs every call comes from an agent not seen before.
    """
    count = 0
    started = time.perf_counter()
    while (elapsed := time.perf_counter() - started) < seconds:
        for params in PARAMS:
            agent = f"bench-{count}" if new_pairs else "bench"
            decision = engine.decide(agent, TOOL, params)
            count += 1
    assert decision.action == "allow", decision.reason
    return count / elapsed


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
        few_engine = PolicyEngine(policy_of(10), root)
        many_engine = PolicyEngine(policy_of(1000), root)
        few = many = 0.0
        for _ in range(rounds):
            few = max(few, decisions_per_second(few_engine, seconds / rounds))
            many = max(many, decisions_per_second(many_engine, seconds / rounds))
        few_new = decisions_per_second(few_engine, seconds / rounds, new_pairs=True)
        many_new = decisions_per_second(many_engine, seconds / rounds, new_pairs=True)
    print(
        f"L0 decisions per second: 10 rules  {few:,.0f}/s   1000 rules  {many:,.0f}/s   "
        f"ratio {many / few:.3f}"
    )
    print(
        f"first call of an (agent, tool) pair: 10 rules  {few_new:,.0f}/s   "
        f"1000 rules  {many_new:,.0f}/s   ratio {many_new / few_new:.3f}"
    )


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
