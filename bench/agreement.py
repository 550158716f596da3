"""agent7's supervisor (github.com/KTCrisis/agent7), unchanged, in shadow mode: how often it agrees
with a person, per tool, measured by `foundry approvals agreement`.

As bench/agent7.py, in a fresh Foundry home in a temporary folder, but `foundry serve
--shadow-supervisors`: agent7 resolves as it always does (`POST /approvals/{id}/approve|deny`
naming itself `supervisor:agent7-bench`), Foundry keeps that as agent7's shadow verdict and the
call waits for a person. The calls, all at once through `foundry gateway`:
- writes of plans in the project: agent7 approves (rule project-writes), the person approves;
- writes of secrets in the project: agent7 approves them too, the person denies them (the calls
  a supervisor would have let through);
- a write under /etc: agent7 denies it (system-writes), so does the person;
- a write outside the project: agent7 has no rule and escalates, which the API never hears of
  (it gives no verdict); the person denies it.
The scripted person waits until agent7 has judged each call (its shadow verdict on the approval,
or its decision log's escalation), then decides with `foundry approvals approve/deny`, so that
every verdict comes before the person, as a supervisor polling every 250 ms would. The bench
prints `foundry approvals agreement` and checks its figures, that every call ran or was refused
as the person (never agent7) decided, and how often agent7 re-judged a call still pending.

Run: python bench/agreement.py --agent7 DIR --python PYTHON [--writes 6] [--secrets 2] [--keep DIR]
(agent7 and its Python as bench/agent7.py's HOW_TO_GET says)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import agent7 as mesh

from foundry.store import ApprovalRecord, Store

SHADOW_OPTION = "--shadow-supervisors"
SECRETS = 2
WRITES = 6


@dataclass(frozen=True)
class Question:
    """A call through the gateway, what agent7 should say and what the person decides."""

    what: str
    arguments: dict[str, Any]
    agent7: str  # approve, deny or escalate
    person: str  # approved or denied

    @property
    def path(self) -> str:
        return str(self.arguments["path"])


@dataclass
class Run:
    questions: list[Question]
    results: dict[str, tuple[bool, str]] = field(default_factory=dict)
    approvals: list[ApprovalRecord] = field(default_factory=list)
    report: str = ""
    figures: list[dict[str, Any]] = field(default_factory=list)
    agent7_lines: int = 0  # the decisions agent7 logged, re-judgements of pending calls included
    seconds: float = 0.0


def planned(project: Path, elsewhere: Path, writes: int, secrets: int) -> list[Question]:
    def write(what: str, path: Path, agent7: str, person: str) -> Question:
        return Question(what, {"path": str(path), "content": f"{what}\n"}, agent7, person)

    notes = project / "notes"
    return [
        *(write(f"plan {n}", notes / f"plan-{n}.md", "approve", "approved") for n in range(writes)),
        *(
            write(f"secret {n}", notes / f"key-{n}.pem", "approve", "denied")
            for n in range(secrets)
        ),
        write("under /etc", Path("/etc/foundry-agreement-bench.conf"), "deny", "denied"),
        write("outside the project", elsewhere / "handover.md", "escalate", "denied"),
    ]


async def judged_by_agent7(store: Store, decision_log: Path, expected: int) -> list[ApprovalRecord]:
    """The pending approvals once there are `expected` and agent7 has judged each: a shadow
    verdict kept, or an escalation in its log."""
    deadline = time.monotonic() + mesh.DECIDE_S
    while time.monotonic() < deadline:
        approvals = await asyncio.to_thread(store.approvals.list, "pending")
        escalated = {
            approval_id
            for approval_id, entry in mesh.agent7_decisions(decision_log).items()
            if entry.get("decision") == "escalated"
        }
        judged = [a for a in approvals if a.shadow_verdict is not None or a.id in escalated]
        if len(approvals) >= expected and len(judged) == len(approvals):
            return approvals
        await asyncio.sleep(0.1)
    raise RuntimeError(f"bench: agent7 did not judge {expected} approvals in {mesh.DECIDE_S:g} s")


def decide_as_the_person(env: dict[str, str], approval: ApprovalRecord, question: Question) -> None:
    if question.person == "approved":
        mesh.run_foundry(env, "approvals", "approve", approval.id, "--reasoning", "as planned")
    else:
        why = f"{question.what}: not to be written"
        mesh.run_foundry(env, "approvals", "deny", approval.id, "--reasoning", why)


async def run_bench(
    agent7: Path, python: str, folder: Path, writes: int = WRITES, secrets: int = SECRETS
) -> Run:
    started_at = time.perf_counter()
    project, elsewhere = folder / "project", folder / "elsewhere"
    elsewhere.mkdir(parents=True)
    env = mesh.foundry_environment(folder)
    mesh.make_agent(project, env)
    run = Run(questions=planned(project, elsewhere, writes, secrets))
    by_path = {question.path: question for question in run.questions}
    with (
        mesh.serving(folder, env, SHADOW_OPTION) as url,
        mesh.supervising(agent7, python, folder, url, project) as decision_log,
        Store.open(env["FOUNDRY_DATABASE_URL"]) as store,
    ):
        async with mesh.gateway(project, env, folder / "gateway.log") as session:
            calls = [
                mesh.Call(q.what, "fs__write_file", q.arguments, "human", q.person == "approved")
                for q in run.questions
            ]
            calling = asyncio.ensure_future(mesh.make_calls(session, calls))
            try:
                pending = await judged_by_agent7(store, decision_log, len(run.questions))
                for approval in pending:
                    question = by_path[str(approval.params.get("path"))]
                    await asyncio.to_thread(decide_as_the_person, env, approval, question)
                run.results = await asyncio.wait_for(calling, mesh.DECIDE_S)
            finally:
                calling.cancel()
        run.approvals = await asyncio.to_thread(store.approvals.list)
        run.agent7_lines = _lines(decision_log)
    run.report = mesh.run_foundry(env, "approvals", "agreement").rstrip()
    run.figures = json.loads(mesh.run_foundry(env, "approvals", "agreement", "--json"))
    run.seconds = time.perf_counter() - started_at
    return run


def _lines(decision_log: Path) -> int:
    if not decision_log.exists():
        return 0
    return sum(1 for line in decision_log.read_text().splitlines() if line.strip())


def problems(run: Run, writes: int, secrets: int) -> list[str]:
    """What is not as it should be: who decided, what ran, the report's figures."""
    found = []
    for question in run.questions:
        is_error, text = run.results.get(question.path, (True, "no result"))
        if is_error == (question.person == "approved"):
            found.append(f"{question.what}: {'refused' if is_error else 'ran'}, {text[:120]!r}")
    by_path = {question.path: question for question in run.questions}
    for approval in run.approvals:
        question = by_path[str(approval.params.get("path"))]
        if not (approval.resolved_by or "").startswith("human:cli:"):
            found.append(f"{question.what}: resolved by {approval.resolved_by}")
        said = (approval.shadow_verdict or {}).get("decision", "escalate")
        if said != question.agent7:
            found.append(f"{question.what}: agent7's verdict is {said}, not {question.agent7}")
    [every] = [row for row in run.figures if row["tool"] == "*"] or [{}]
    wanted = {
        "supervisor": mesh.RESOLVER,
        "verdicts": writes + secrets + 1,  # its escalation is never said to the API
        "let_through": secrets,
        "count_agreed": writes + 1,
        "safest_threshold": round(mesh.APPROVE_CONFIDENCE + 0.01, 2) if secrets else 0.0,
        "settled_at_threshold": 1 if secrets else writes + 1,
    }
    for name, value in wanted.items():
        if every.get(name) != value:
            found.append(f"the report's {name} is {every.get(name)!r}, not {value!r}")
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agent7", type=Path, default=os.environ.get("AGENT7_DIR") or None)
    parser.add_argument("--python", default=os.environ.get("AGENT7_PYTHON") or None)
    parser.add_argument("--writes", type=int, default=WRITES, help="plans the person approves")
    parser.add_argument("--secrets", type=int, default=SECRETS, help="writes the person denies")
    parser.add_argument("--keep", type=Path, help="run in this folder and leave it there")
    args = parser.parse_args()
    problem = mesh.problem_with(args.agent7, args.python)
    if problem is not None:
        print(f"bench: {problem}\n{mesh.HOW_TO_GET}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="bench-agreement-") as scratch:
        folder = args.keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        run = asyncio.run(
            run_bench(args.agent7.resolve(), args.python, folder, args.writes, args.secrets)
        )
    print(
        f"agent7 in shadow mode: {len(run.questions)} calls, each decided by a person; agent7 "
        f"logged {run.agent7_lines} decisions (it judges again a call still pending at each "
        f"poll, every {mesh.POLL}); the whole run {run.seconds:.1f} s\n"
    )
    print(run.report)
    found = problems(run, args.writes, args.secrets)
    print("\nchecks: " + ("all passed" if not found else "FAILED"))
    for problem in found:
        print(f"  {problem}")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
