"""agent7's supervisor (github.com/KTCrisis/agent7), unchanged, against `foundry serve`: who
Foundry records as having decided, at which level, with what confidence, and what the dashboards
count.

agent7 was written for agent-mesh's approvals protocol: it polls `GET /approvals?status=pending`,
reads each approval, decides by first-match rules (or asks Ollama when none matches), and
resolves with `POST /approvals/{id}/approve|deny` naming itself `supervisor:<agent_id>`. In a
fresh Foundry home in a temporary folder the bench:
- starts `foundry serve --port 0` (a free loopback port) and takes the capability URL it prints
  (agent7 sends no Authorization header: the token goes in the path);
- starts agent7's supervisor as agent7 runs it (`python -m backend.app.services.supervisor
  --config supervisor.yaml`, in its folder, on its own Python) with a config the bench writes:
  rules that match the calls below; Ollama, agent-mesh's process management and memory-mcp off;
- starts `foundry gateway` for an agent whose policy lets reads run and sends every other call of
  the reference filesystem server to a person, and makes all the calls at once through it with
  the MCP SDK's client: each write waits in the store as a pending approval, as a session's do;
- waits for agent7's decisions: writes in the project approved (rule project-writes), one under
  /etc denied (system-writes), one elsewhere escalated (no rule matches: agent7 leaves it to a
  person), which a person then denies with `foundry approvals deny`;
- checks who resolved each approval, the traces' level and confidence, and what `foundry metrics
  export` and the dashboards' figures (foundry.metrics.read_figures) count at each level; prints
  the figures, and stops every process it started.

agent7 is not Foundry's and is not in the repo (HOW_TO_GET). The filesystem server comes from
the npm test parts (npm ci --prefix tests/gateway/npm).

Run: python bench/agent7.py --agent7 DIR --python PYTHON [--writes 8] [--keep DIR]
     (or AGENT7_DIR and AGENT7_PYTHON in the environment; --keep leaves the home, the logs and
     agent7's decision log in DIR, for the dashboards to be looked at)
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.stdio import get_default_environment

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from foundry.metrics import read_figures  # noqa: E402
from foundry.store import ApprovalRecord, Store, TraceRecord  # noqa: E402

HOW_TO_GET = """\
agent7 is needed and is not part of Foundry. Get it and a Python for its supervisor:
  git clone https://github.com/KTCrisis/agent7 /tmp/agent7
  python3 -m venv /tmp/agent7-venv
  /tmp/agent7-venv/bin/pip install "httpx>=0.27,<1.0" "pydantic>=2.5,<3.0" "pyyaml>=6.0,<7.0"
then: python bench/agent7.py --agent7 /tmp/agent7 --python /tmp/agent7-venv/bin/python
(or set AGENT7_DIR and AGENT7_PYTHON)"""
FILESYSTEM_SERVER = (
    REPO / "tests" / "gateway" / "npm" / "node_modules" / ".bin" / "mcp-server-filesystem"
)
SUPERVISOR_MODULE = "backend.app.services.supervisor"
SUPERVISOR_SOURCE = Path("backend", "app", "services", "supervisor", "runner.py")
NAME = "agent7-bench"  # agent7's agent_id: it resolves as supervisor:agent7-bench
RESOLVER = f"supervisor:{NAME}"
APPROVE_CONFIDENCE = 0.92
DENY_CONFIDENCE = 0.99
POLL = "250ms"  # agent7's poll_interval (its default is 2s)
WRITES = 8
START_S = 60.0
DECIDE_S = 120.0
STOP_S = 10.0
PERSON = "a person, with foundry approvals deny"
REACHED = "agent-mesh already running"  # agent7's log line once GET /health answered
UNREACHED = "agent-mesh not reachable"
T = TypeVar("T")

SUPERVISOR_YAML = """\
# agent7's supervisor config, written by Foundry's bench/agent7.py
supervisor:
  mesh_url: {url}
  agent_id: {name}
  poll_interval: {poll}
  confidence_threshold: 0.8
  project_dirs: [{project}]
  decision_log: {decisions}
  ollama:  # off: the rules decide, and what no rule matches is escalated to a person
    enabled: false
    url: http://127.0.0.1:{unused_port}
  mesh_process:  # off: foundry serve is the server, agent7 must not spawn agent-mesh
    enabled: false
  memory:  # off: memory-mcp is a tool agent7 calls through agent-mesh's /tool route
    enabled: false
  rules:
    - name: project-writes
      description: writes inside the project are routine
      condition: params.path starts_with project_dir
      action: approve
      confidence: {approve}
    - name: system-writes
      description: writes to system folders are refused
      condition: params.path starts_with /etc
      action: deny
      confidence: {deny}
"""
POLICY_RULES = [
    {"name": "reads-are-routine", "tool": "fs.read_*", "action": "allow"},
    {"name": "other-calls-ask-a-person", "tool": "*", "action": "human"},
]


@dataclass(frozen=True)
class Call:
    """A tool call the client makes through the gateway, and who should decide it."""

    what: str
    tool: str  # as the gateway offers it
    arguments: dict[str, Any]
    level: str  # the level expected to decide it (foundry.metrics.LEVELS)
    allowed: bool
    confidence: float | None = None  # agent7's, when it decides

    @property
    def path(self) -> str:
        return str(self.arguments["path"])


@dataclass(frozen=True)
class Decided:
    """An approval as the store holds it once decided, with agent7's own account of it."""

    call: Call
    approval: ApprovalRecord
    trace: TraceRecord | None
    agent7: dict[str, Any] | None  # agent7's decision log line for it

    @property
    def waited_ms(self) -> float:
        resolved = self.approval.resolved_at or self.approval.created_at
        return (resolved - self.approval.created_at).total_seconds() * 1000


@dataclass
class Outcome:
    calls: list[Call]
    results: dict[str, tuple[bool, str]] = field(default_factory=dict)  # path: is_error, text
    decided: list[Decided] = field(default_factory=list)
    policy_traces: list[TraceRecord] = field(default_factory=list)
    exported: Counter[str] = field(default_factory=Counter)  # resolutions.csv's rows by level
    figures: dict[str, int] = field(default_factory=dict)  # the dashboards' level/outcome counts
    human_waits: int = 0  # the approvals the dashboards count as waits for a person
    url: str = ""
    seconds: float = 0.0


def problem_with(agent7: Path | None, python: str | None) -> str | None:
    """Why the bench cannot run here, or None."""
    if agent7 is None or python is None:
        return "give --agent7 and --python (or AGENT7_DIR and AGENT7_PYTHON)"
    if not (agent7 / SUPERVISOR_SOURCE).is_file():
        return f"{agent7} is not a checkout of agent7 (no {SUPERVISOR_SOURCE})"
    if not FILESYSTEM_SERVER.exists():
        return "the npm test parts are not installed: npm ci --prefix tests/gateway/npm"
    check = [python, "-c", f"import {SUPERVISOR_MODULE}"]
    try:
        done = subprocess.run(check, cwd=agent7, capture_output=True, text=True, timeout=60)
    except OSError as error:
        return f"cannot run {python}: {error}"
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["?"])[-1]
        return f"{python} cannot import agent7's supervisor: {last}"
    return None


def planned_calls(project: Path, elsewhere: Path, writes: int) -> list[Call]:
    read = Call(
        "read the brief",
        "fs__read_text_file",
        {"path": str(project / "brief.md")},
        "policy",
        allowed=True,
    )
    plans = [
        Call(
            f"write plan {number}",
            "fs__write_file",
            {"path": str(project / "notes" / f"plan-{number}.md"), "content": f"step {number}\n"},
            "supervisor",
            allowed=True,
            confidence=APPROVE_CONFIDENCE,
        )
        for number in range(1, writes + 1)
    ]
    system = Call(
        "write under /etc",
        "fs__write_file",
        {"path": "/etc/foundry-agent7-bench.conf", "content": "mode = open\n"},
        "supervisor",
        allowed=False,
        confidence=DENY_CONFIDENCE,
    )
    outside = Call(
        "write outside the project",
        "fs__write_file",
        {"path": str(elsewhere / "handover.md"), "content": "for the other team\n"},
        "human",
        allowed=False,
    )
    return [read, *plans, system, outside]


def run_database(folder: Path) -> str:
    """The database of a run in `folder` (its home's), for the dashboards to be shown over."""
    return f"sqlite:///{folder / 'home' / 'data' / 'foundry.sqlite3'}"


def foundry_environment(folder: Path) -> dict[str, str]:
    """What Foundry's processes run with: the run's home and its database, a token of their
    own (made by foundry serve on its first start)."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("FOUNDRY_")}
    home = {"FOUNDRY_HOME": str(folder / "home"), "FOUNDRY_DATABASE_URL": run_database(folder)}
    return {**env, **home, "PYTHONUNBUFFERED": "1"}


def foundry_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "foundry.cli", *args]


def run_foundry(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        foundry_command(*args), env=env, cwd=REPO, capture_output=True, text=True, timeout=120
    )
    if done.returncode != 0:
        raise RuntimeError(f"foundry {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout


def make_agent(project: Path, env: dict[str, str]) -> Path:
    """A new agent in `project` (its workspace) whose server is the reference filesystem server
    rooted there, its policy the bench's, trusted."""
    run_foundry(env, "create-agent", str(project), "--name", "Project writer")
    config_file = project / "tsagent.json"
    config = json.loads(config_file.read_text())
    config["mcpServers"] = {
        "fs": {
            "type": "stdio",
            "command": str(FILESYSTEM_SERVER),
            "args": [str(project)],
            "serverToolDefaults": {"include": "always", "permissionRequired": False},
        }
    }
    config_file.write_text(json.dumps(config, indent=2))
    beside = project / "foundry.json"
    kept = json.loads(beside.read_text())
    policy = {"rules": POLICY_RULES, "approvalTimeoutSeconds": DECIDE_S, "onTimeout": "deny"}
    kept["supervisors"] = [
        {
            "position": 0,
            "type": "policy",
            "id": "tool-policy",
            "name": "Tool approvals",
            "config": policy,
        }
    ]
    beside.write_text(json.dumps(kept, indent=2))
    (project / "notes").mkdir()
    (project / "brief.md").write_text("Write the plan, one step per file.\n")
    run_foundry(env, "trust", "--yes", str(project))
    return project


def unused_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def supervisor_yaml(url: str, project: Path, decisions: Path) -> str:
    return SUPERVISOR_YAML.format(
        url=url,
        name=NAME,
        poll=POLL,
        project=json.dumps(str(project)),
        decisions=json.dumps(str(decisions)),
        unused_port=unused_port(),
        approve=APPROVE_CONFIDENCE,
        deny=DENY_CONFIDENCE,
    )


@contextmanager
def started(command: list[str], log: Path, **options: Any) -> Iterator[subprocess.Popen[bytes]]:
    """A process writing to `log`, stopped (SIGTERM, then killed) when the block ends."""
    with log.open("wb") as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, **options)
        try:
            yield process
        finally:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
            try:
                process.wait(STOP_S)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def until(
    found: Callable[[], T | None],
    process: subprocess.Popen[bytes],
    log: Path,
    what: str,
    timeout_s: float = START_S,
) -> T:
    """What `found` returns once it is not None; fails, with the end of the log, if the process
    ends first or `timeout_s` passes."""
    deadline = time.monotonic() + timeout_s
    while (value := found()) is None:
        if process.poll() is not None or time.monotonic() > deadline:
            ended = "ended" if process.poll() is not None else f"not within {timeout_s:g} s"
            tail = "\n".join(log.read_text(errors="replace").splitlines()[-15:])
            raise RuntimeError(f"bench: {what}: {ended}; its log:\n{tail}")
        time.sleep(0.05)
    return value


@contextmanager
def serving(folder: Path, env: dict[str, str], *options: str) -> Iterator[str]:
    """`foundry serve` on a free loopback port (with `options`); the capability URL it prints."""
    log = folder / "serve.log"

    def capability_url() -> str | None:
        for line in log.read_text(errors="replace").splitlines():
            if line.startswith("capability URL:"):
                return line.partition(":")[2].strip()
        return None

    command = foundry_command("serve", "--port", "0", *options)
    with started(command, log, env=env, cwd=REPO) as process:
        yield until(capability_url, process, log, "foundry serve's capability URL")


@contextmanager
def supervising(agent7: Path, python: str, folder: Path, url: str, project: Path) -> Iterator[Path]:
    """agent7's supervisor, unchanged, run as agent7 runs it; its decision log."""
    config, decisions, log = (
        folder / name for name in ("supervisor.yaml", "agent7-decisions.jsonl", "agent7.log")
    )
    config.write_text(supervisor_yaml(url, project, decisions))
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(folder), "PYTHONUNBUFFERED": "1"}
    command = [python, "-m", SUPERVISOR_MODULE, "--config", str(config)]

    def reached() -> bool | None:
        text = log.read_text(errors="replace")
        if UNREACHED in text:
            raise RuntimeError(f"bench: agent7 could not reach {url}:\n{text}")
        return True if REACHED in text else None

    with started(command, log, env=env, cwd=agent7) as process:
        until(reached, process, log, "agent7 reaching foundry serve")
        yield decisions


@asynccontextmanager
async def gateway(agent: Path, env: dict[str, str], log: Path) -> AsyncIterator[ClientSession]:
    """A client of `foundry gateway AGENT`, started as an MCP client starts it."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "foundry.cli", "gateway", str(agent)],
        env={**get_default_environment(), **{k: v for k, v in env.items() if "FOUNDRY_" in k}},
        cwd=REPO,
    )
    with log.open("w") as errors:
        async with (
            stdio_client(params, errlog=errors) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session


def agent7_decisions(decision_log: Path) -> dict[str, dict[str, Any]]:
    """agent7's decision log: each approval's last line."""
    if not decision_log.exists():
        return {}
    lines = decision_log.read_text().splitlines()
    entries = [json.loads(line) for line in lines if line.strip()]
    return {entry["approval_id"]: entry for entry in entries}


async def decided_or_escalated(store: Store, decision_log: Path, expected: int) -> list[str]:
    """Wait until agent7 has resolved or escalated each of the `expected` approvals; the ids of
    those it escalated."""
    deadline = time.monotonic() + DECIDE_S
    while time.monotonic() < deadline:
        approvals = await asyncio.to_thread(store.approvals.list)
        seen = agent7_decisions(decision_log)
        pending = [a.id for a in approvals if a.status == "pending"]
        escalated = [one for one in pending if seen.get(one, {}).get("decision") == "escalated"]
        if len(approvals) >= expected and escalated == pending:
            return escalated
        await asyncio.sleep(0.1)
    raise RuntimeError(f"bench: agent7 did not decide {expected} approvals in {DECIDE_S:g} s")


async def make_calls(session: ClientSession, calls: list[Call]) -> dict[str, tuple[bool, str]]:
    async def one(call: Call) -> tuple[str, tuple[bool, str]]:
        result = await session.call_tool(call.tool, call.arguments)
        text = " ".join(getattr(part, "text", "") for part in result.content)
        return call.path, (bool(result.is_error), text)

    return dict(await asyncio.gather(*(one(call) for call in calls)))


async def run_bench(agent7: Path, python: str, folder: Path, writes: int = WRITES) -> Outcome:
    """The whole run in `folder` (left there: the home, the logs, agent7's decisions)."""
    started_at = time.perf_counter()
    project, elsewhere = folder / "project", folder / "elsewhere"
    elsewhere.mkdir(parents=True)
    env = foundry_environment(folder)
    make_agent(project, env)
    outcome = Outcome(calls=planned_calls(project, elsewhere, writes))
    asked = sum(call.level != "policy" for call in outcome.calls)
    with (
        serving(folder, env) as url,
        supervising(agent7, python, folder, url, project) as decision_log,
        Store.open(env["FOUNDRY_DATABASE_URL"]) as store,
    ):
        outcome.url = url.rsplit("/t/", 1)[0]
        async with gateway(project, env, folder / "gateway.log") as session:
            calling = asyncio.ensure_future(make_calls(session, outcome.calls))
            try:
                for approval_id in await decided_or_escalated(store, decision_log, asked):
                    why = "outside the project: agent7 has no rule for it"
                    await asyncio.to_thread(
                        run_foundry, env, "approvals", "deny", approval_id, "--reasoning", why
                    )
                outcome.results = await asyncio.wait_for(calling, DECIDE_S)
            finally:
                calling.cancel()  # when the run failed before the calls came back
        read_outcome(store, outcome, agent7_decisions(decision_log))
    outcome.exported = exported_levels(env, folder / "metrics")
    outcome.seconds = time.perf_counter() - started_at
    return outcome


def read_outcome(store: Store, outcome: Outcome, agent7: dict[str, dict[str, Any]]) -> None:
    """Each approval as the store holds it, its trace, agent7's line; the dashboards' counts."""
    by_path = {call.path: call for call in outcome.calls}
    traces = store.traces.list(limit=1000)
    traced = {trace.approval_id: trace for trace in traces if trace.approval_id}
    for approval in sorted(store.approvals.list(), key=lambda record: record.created_at):
        call = by_path[str(approval.params.get("path"))]
        decided = Decided(call, approval, traced.get(approval.id), agent7.get(approval.id))
        outcome.decided.append(decided)
    outcome.policy_traces = [trace for trace in traces if trace.resolved_level == "policy"]
    figures = read_figures(store)
    outcome.figures = dict(figures.resolutions)
    outcome.human_waits = sum(time_bin.merged().count for time_bin in figures.human_waits)


def exported_levels(env: dict[str, str], folder: Path) -> Counter[str]:
    """`foundry metrics export`'s resolutions.csv, its rows counted by level."""
    run_foundry(env, "metrics", "export", "--csv", str(folder))
    with (folder / "resolutions.csv").open(newline="") as rows:
        return Counter(row["level"] for row in csv.DictReader(rows))


def expected_figures(calls: list[Call]) -> Counter[str]:
    return Counter(f"{c.level}/{'allowed' if c.allowed else 'denied'}" for c in calls)


def problems(outcome: Outcome) -> list[str]:
    """What is not as it should be: who resolved, the traces, the results, the counts."""
    found = [problem for decided in outcome.decided for problem in _decision_problems(decided)]
    for call in outcome.calls:
        is_error, text = outcome.results.get(call.path, (True, "no result"))
        if is_error == call.allowed:
            found.append(f"{call.what}: {'refused' if is_error else 'ran'}, {text[:120]!r}")
    if len(outcome.decided) != sum(call.level != "policy" for call in outcome.calls):
        found.append(f"{len(outcome.decided)} approvals in the store")
    wanted_levels = Counter(call.level for call in outcome.calls)
    if outcome.exported != wanted_levels:
        found.append(
            f"foundry metrics export counts {dict(outcome.exported)}, not {dict(wanted_levels)}"
        )
    wanted = expected_figures(outcome.calls)
    counted = Counter({key: count for key, count in outcome.figures.items() if count})
    if counted != wanted:
        found.append(f"the dashboards count {dict(counted)}, not {dict(wanted)}")
    if outcome.human_waits != wanted_levels["human"]:
        found.append(f"the dashboards count {outcome.human_waits} waits for a person")
    return found


def _decision_problems(decided: Decided) -> list[str]:
    call, approval, trace = decided.call, decided.approval, decided.trace
    status = "approved" if call.allowed else "denied"
    resolver = RESOLVER if call.level == "supervisor" else "human:cli:"
    found = []
    if approval.status != status or not (approval.resolved_by or "").startswith(resolver):
        found.append(f"{call.what}: {approval.status} by {approval.resolved_by}")
    if trace is None:
        return [*found, f"{call.what}: no trace of its approval"]
    if trace.resolved_level != call.level or trace.confidence != call.confidence:
        found.append(f"{call.what}: traced at {trace.resolved_level} with {trace.confidence}")
    return found


def report(outcome: Outcome) -> str:
    lines = [
        f"agent7's supervisor against foundry serve on {outcome.url}: "
        f"{len(outcome.calls)} calls through foundry gateway, {len(outcome.decided)} approvals",
        "",
        f"{'call':28} {'resolved by':28} {'status':9} {'conf.':>5} {'trace level':12} "
        f"{'waited':>8} {'agent7 rule':15} {'agent7 ms':>9}",
    ]
    for decided in outcome.decided:
        approval, trace, own = decided.approval, decided.trace, decided.agent7 or {}
        confidence = "" if approval.confidence is None else f"{approval.confidence:.2f}"
        lines.append(
            f"{decided.call.what:28} {approval.resolved_by or '':28} {approval.status:9} "
            f"{confidence:>5} {trace.resolved_level if trace else '-':12} "
            f"{decided.waited_ms:6.0f}ms {own.get('rule_matched') or '-':15} "
            f"{own.get('evaluation_ms', '-'):>9}"
        )
    for trace in outcome.policy_traces:
        lines.append(f"{trace.tool:28} {trace.resolved_by:28} {trace.decision:9} (no approval)")
    lines += ["", *_figures(outcome)]
    return "\n".join(lines)


def _figures(outcome: Outcome) -> list[str]:
    by_agent7 = [d for d in outcome.decided if d.approval.resolved_by == RESOLVER]
    waits = [d.waited_ms for d in by_agent7] or [0.0]
    own = [d.agent7 for d in outcome.decided if d.agent7]
    escalated = sum(entry["decision"] == "escalated" for entry in own)
    traced = Counter(
        d.trace.confidence for d in by_agent7 if d.trace and d.trace.resolved_level == "supervisor"
    )
    exported = dict(sorted(outcome.exported.items()))
    counted = {key: count for key, count in sorted(outcome.figures.items()) if count}
    return [
        f"agent7 resolved {len(by_agent7)} approvals and escalated {escalated} (polling every "
        f"{POLL}): created to resolved median {statistics.median(waits):.0f} ms, max "
        f"{max(waits):.0f} ms; its own evaluation at most "
        f"{max((int(entry['evaluation_ms']) for entry in own), default=0)} ms",
        f"traces at the supervisor level, by agent7's confidence: {dict(traced)}",
        f"foundry metrics export (resolutions.csv), rows by level: {exported}",
        f"the dashboards' figures (read_figures), decisions by level/outcome: {counted}; "
        f"approvals that waited for a person: {outcome.human_waits}",
        f"the whole run: {outcome.seconds:.1f} s",
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--agent7",
        type=Path,
        default=os.environ.get("AGENT7_DIR") or None,
        help="agent7's checkout (AGENT7_DIR)",
    )
    parser.add_argument(
        "--python",
        default=os.environ.get("AGENT7_PYTHON") or None,
        help="a Python with agent7's supervisor's packages (AGENT7_PYTHON)",
    )
    parser.add_argument("--writes", type=int, default=WRITES, help="writes in the project")
    parser.add_argument("--keep", type=Path, help="run in this folder and leave it there")
    args = parser.parse_args()
    problem = problem_with(args.agent7, args.python)
    if problem is not None:
        print(f"bench: {problem}\n{HOW_TO_GET}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="bench-agent7-") as scratch:
        folder = args.keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        outcome = asyncio.run(run_bench(args.agent7.resolve(), args.python, folder, args.writes))
    print(report(outcome))
    found = problems(outcome)
    print("\nchecks: " + ("all passed" if not found else "FAILED"))
    for problem in found:
        print(f"  {problem}")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
