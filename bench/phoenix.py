"""Foundry's spans in Arize Phoenix: a supervised session exported live and from the store, read
back through Phoenix's REST API, and what the live export costs per event.

Phoenix is not Foundry's and is not a dependency: install it in a venv of its own first,
    python -m venv /tmp/phoenix && /tmp/phoenix/bin/pip install arize-phoenix
In a temporary folder the bench:
- starts `phoenix serve` on loopback (PHOENIX_PORT, PHOENIX_GRPC_PORT and PHOENIX_WORKING_DIR
  set to free ports and a temporary folder, its own telemetry off) and waits for it;
- records a supervised chat in a fresh Foundry home on an engine whose live export sends to
  Phoenix (OTEL_EXPORTER_OTLP_ENDPOINT, project `foundry-live`): a scripted model calls the real
  time server three times; the policy allows one call, denies one and sends one to a person, who
  approves it;
- runs `foundry sessions export ID --otlp` against Phoenix (project `foundry-export`) and prints
  what it says;
- reads both projects' spans back (GET /v1/projects/NAME/spans) and prints the count of each
  span name and a few attributes of the decisions;
- replays the session's events through a live export into memory many times to measure what
  an event costs the engine's loop (the bus subscriber's queue) and the export's own thread;
- with --screenshot FILE, takes a picture of the trace's page with headless chromium;
- stops Phoenix.

Run: python bench/phoenix.py [--phoenix /tmp/phoenix/bin/phoenix] [--screenshot FILE] [--keep DIR]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CAPTURE_CONTENT = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"  # the messages shown
TIME_SERVER = {
    "type": "stdio",
    "command": sys.executable,
    "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"],
    "serverToolDefaults": {"permissionRequired": False, "include": "always"},
}
TOKYO = {"name": "time.get_current_time", "arguments": {"timezone": "Asia/Tokyo"}}
UTC = {"name": "time.get_current_time", "arguments": {"timezone": "UTC"}}
CONVERT = {
    "name": "time.convert_time",
    "arguments": {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"},
}
TURNS = {
    "turns": [
        {"text": "Checking. ", "tool_calls": [UTC]},
        {"tool_calls": [CONVERT]},
        {"tool_calls": [TOKYO]},
        {"text": "It is noon in UTC and evening in Tokyo."},
    ]
}
POLICY = {
    "type": "policy",
    "id": "tool-policy",
    "config": {
        "rules": [
            {
                "name": "tokyo-asks",
                "tool": "time.get_current_time",
                "when": {"all": [{"param": "timezone", "op": "==", "value": "Asia/Tokyo"}]},
                "action": "human",
            },
            {"name": "time-is-fine", "tool": "time.get_current_time", "action": "allow"},
            {"name": "no-conversions", "tool": "time.convert_time", "action": "deny"},
        ],
        "loopDetection": False,
    },
}
LIVE, EXPORTED = "foundry-live", "foundry-export"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as answer:
        return json.load(answer)


def start_phoenix(phoenix: str, work: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {
        **os.environ,
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(free_port()),
        "PHOENIX_WORKING_DIR": str(work / "phoenix"),
        "PHOENIX_TELEMETRY_ENABLED": "false",
        "PHOENIX_ALLOW_EXTERNAL_RESOURCES": "false",
    }
    log = (work / "phoenix.log").open("wb")
    process = subprocess.Popen([phoenix, "serve"], env=env, stdout=log, stderr=log)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"phoenix serve ended ({process.returncode}): see {work}/phoenix.log")
        try:
            get_json(f"{url}/v1/projects")
            return process, url
        except OSError:
            time.sleep(0.5)
    process.terminate()
    raise SystemExit("phoenix serve did not answer in 120 s")


def write_agent(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "turns.json").write_text(json.dumps(TURNS))
    config = {
        "metadata": {"name": "clock"},
        "settings": {"model": "scripted:turns.json", "toolPermission": "tool"},
        "mcpServers": {"time": TIME_SERVER},
        "supervisors": [POLICY],
    }
    (root / "tsagent.json").write_text(json.dumps(config))
    (root / "prompt.md").write_text("You tell the time.")
    return root


def record_session(agent: Path, phoenix_url: str) -> str:
    """The supervised chat, recorded on an engine that exports it live to Phoenix; its id."""
    from foundry.agent.document import read_agent
    from foundry.agent.trust import TrustStore
    from foundry.runtime.engine import Engine
    from foundry.supervision.resolution import resolve_approval

    os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] = phoenix_url
    os.environ["OTEL_RESOURCE_ATTRIBUTES"] = f"openinference.project.name={LIVE}"
    os.environ[CAPTURE_CONTENT] = "true"  # the demo shows the messages (the user opts in)
    TrustStore.default().grant(read_agent(agent))
    try:
        with Engine() as engine:
            session_id = engine.submit(engine.open_session(agent)).result(60)
            turn = engine.submit(engine.send(session_id, "What time is it in UTC and Tokyo?"))
            deadline = time.monotonic() + 60
            while not (pending := engine.store.approvals.list(status="pending")):
                if time.monotonic() > deadline:
                    raise SystemExit("no approval reached the inbox")
                time.sleep(0.05)
            resolve_approval(engine.store, pending[0].id, "approved", "human:bench", "fine")
            turn.result(60)
    finally:
        for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_RESOURCE_ATTRIBUTES", CAPTURE_CONTENT):
            del os.environ[name]
    return session_id


def export_session(session_id: str, phoenix_url: str) -> str:
    env = {
        **os.environ,
        "OTEL_EXPORTER_OTLP_ENDPOINT": phoenix_url,
        "OTEL_RESOURCE_ATTRIBUTES": f"openinference.project.name={EXPORTED}",
        CAPTURE_CONTENT: "true",
        "PYTHONPATH": str(REPO),
    }
    command = [sys.executable, "-m", "foundry.cli", "sessions", "export", session_id, "--otlp"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise SystemExit(f"the export failed ({done.returncode}): {done.stderr.strip()}")
    return done.stdout.strip()


def read_spans(phoenix_url: str, project: str, expected: int) -> list[dict[str, Any]]:
    """The project's spans as Phoenix's REST API gives them, once it has stored `expected`."""
    deadline = time.monotonic() + 60
    spans: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        try:
            spans = get_json(f"{phoenix_url}/v1/projects/{project}/spans?limit=1000")["data"]
        except OSError:  # the project appears with its first span
            spans = []
        if len(spans) >= expected:
            return spans
        time.sleep(0.5)
    return spans


def show(project: str, spans: list[dict[str, Any]]) -> None:
    names = collections.Counter(span["name"] for span in spans)
    traces = len({span["context"]["trace_id"] for span in spans})
    print(f"\n{project}: {len(spans)} spans in {traces} trace(s)")
    for name, count in sorted(names.items()):
        print(f"  {count:3d}  {name}")
    for span in sorted(spans, key=lambda s: s["start_time"]):
        attributes = span["attributes"]
        if "gen_ai.security.verdict.type" in attributes:
            print(
                f"  {span['name']}: verdict {attributes['gen_ai.security.verdict.type']}, "
                f"action {attributes['gen_ai.security.action.type']}, "
                f"level {attributes.get('foundry.decision.level')}"
            )


def live_cost(session_id: str, rounds: int) -> None:
    """The session's events replayed `rounds` times through a live export into memory: what
    the subscriber costs the engine's loop per event, and what making the spans costs."""
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from foundry.runtime.bus import EventBus
    from foundry.store import Store
    from foundry.telemetry.export import stored_events
    from foundry.telemetry.live import LiveExport

    with Store.open() as store:
        events = stored_events(store, session_id)
        bus, collected = EventBus(), InMemorySpanExporter()
        live = LiveExport(store, bus.subscribe, collected)
        copies = [
            [e.model_copy(update={"session_id": f"{session_id}-{n}"}) for e in events]
            for n in range(rounds)
        ]
        published = []
        started = time.perf_counter()
        for copy in copies:
            for event in copy:
                before = time.perf_counter()
                bus.publish(event)
                published.append(time.perf_counter() - before)
        live.close()
        total = time.perf_counter() - started
    count = rounds * len(events)
    print(f"\nlive export, {count} events ({rounds} sessions of {len(events)}):")
    median_us = statistics.median(published) * 1e6
    print(f"  on the engine's loop (bus publish): median {median_us:.1f} µs")
    print(f"  made into spans and exported: {total / count * 1e6:.0f} µs an event on its thread")
    print(f"  {len(collected.get_finished_spans())} spans, {total:.2f} s in all")


def screenshot(phoenix_url: str, trace_id: str, path: Path) -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("no chromium: apt-get install -y chromium")
    profile = tempfile.mkdtemp()
    url = f"{phoenix_url}/redirects/traces/{trace_id}"
    command = [
        chromium,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        "--window-size=1440,900",
        "--virtual-time-budget=20000",
        f"--screenshot={path}",
        url,
    ]
    try:
        subprocess.run(command, capture_output=True, timeout=120, check=True)
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    print(f"\nscreenshot of {url}: {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--phoenix", default=os.environ.get("PHOENIX", "/tmp/phoenix/bin/phoenix"))
    parser.add_argument("--screenshot", type=Path, help="PNG of the trace's page in Phoenix")
    parser.add_argument("--rounds", type=int, default=200, help="replays for the live cost")
    parser.add_argument("--keep", type=Path, help="leave the homes and Phoenix's log here")
    args = parser.parse_args()
    if not Path(args.phoenix).exists():
        raise SystemExit(f"no {args.phoenix}: install arize-phoenix in a venv of its own first")
    work = Path(tempfile.mkdtemp(prefix="foundry-phoenix-"))
    os.environ["FOUNDRY_HOME"] = str(work / "home")
    phoenix, url = start_phoenix(args.phoenix, work)
    try:
        print(f"phoenix serve at {url}")
        started = time.perf_counter()
        session_id = record_session(write_agent(work / "clock"), url)
        print(f"recorded session {session_id} in {time.perf_counter() - started:.1f} s")
        print(export_session(session_id, url))
        exported = read_spans(url, EXPORTED, 12)
        show(LIVE, read_spans(url, LIVE, 12))
        show(EXPORTED, exported)
        live_cost(session_id, args.rounds)
        if args.screenshot:
            [root] = [s for s in exported if s["name"] == "invoke_agent clock"]
            screenshot(url, root["context"]["trace_id"], args.screenshot)
    finally:
        phoenix.terminate()
        phoenix.wait(30)
        if args.keep:
            shutil.copytree(work, args.keep, dirs_exist_ok=True)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
