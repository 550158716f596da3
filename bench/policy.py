"""L0 policy benchmark: decisions per second with 10 and with 1,000 rules, in one run.

Every rule but the last has a tool glob the call does not match (and a condition that is never
reached); the last one matches. Loop detection and rate limits are off, so the figures are the
rule walk itself. The engine remembers which rules cover an (agent, tool) pair, as pairs repeat
in a session; a second line gives the first call of a new pair, which walks every glob.
The two sizes are measured in alternating rounds and the best round of each is kept.

Run: python bench/policy.py [--seconds 5]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from foundry.agent.models import PolicyCondition, PolicyConfig, PolicyMatch, PolicyRule
from foundry.supervision.policy import PolicyEngine

TOOL = "files.read_file"
PARAMS = [{"path": f"src/module_{number}.py", "limit": number} for number in range(256)]


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="time per size, all rounds")
    args = parser.parse_args()
    rounds = 3
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        few_engine = PolicyEngine(policy_of(10), root)
        many_engine = PolicyEngine(policy_of(1000), root)
        few = many = 0.0
        for _ in range(rounds):
            few = max(few, decisions_per_second(few_engine, args.seconds / rounds))
            many = max(many, decisions_per_second(many_engine, args.seconds / rounds))
        few_new = decisions_per_second(few_engine, args.seconds / rounds, new_pairs=True)
        many_new = decisions_per_second(many_engine, args.seconds / rounds, new_pairs=True)
    print(
        f"L0 decisions per second: 10 rules  {few:,.0f}/s   1000 rules  {many:,.0f}/s   "
        f"ratio {many / few:.3f}"
    )
    print(
        f"first call of an (agent, tool) pair: 10 rules  {few_new:,.0f}/s   "
        f"1000 rules  {many_new:,.0f}/s   ratio {many_new / few_new:.3f}"
    )


if __name__ == "__main__":
    main()
