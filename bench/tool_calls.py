"""Tool calls of the embedded model, asked as the sample assistant asks them.

Each question is the first message of a fresh session of the sample assistant (agents/assistant:
its policy, guardian and agent supervisors, the real time MCP server) on the embedded SmolLM2.
Printed: how many of 20 time questions ended in a call of time.get_current_time (and how many
with the city's time zone), how many of 10 questions that need no tool called one, and the
median seconds per answer (the whole turn: supervisors, the call, the final reply).

Baseline from the same run: the same questions with the tools offered the native way only, as
the embedded provider did before constrained tool calls (SmolLM2's template drops them).

Run: python bench/tool_calls.py [--time N] [--controls N] [--baseline N] [--temperature T]
                                [--without-agent-supervisors] [--model FILE.gguf]
(--without-agent-supervisors drops the architect and the context curator, whose own embedded
model calls make each turn several times longer, and keeps the guardian and the policy;
--model FILE.gguf runs the assistant and its supervisor agents on another embedded model.)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from foundry.agent.document import read_agent
from foundry.agent.trust import TrustStore
from foundry.home import shipped_path
from foundry.llm.embedded import model_path, shared_runtime
from foundry.runtime.engine import Engine
from foundry.session.events import ToolCallDecided
from foundry.store import Store

TIME_QUESTIONS = {  # a phrasing -> the time zone the call should name
    "What time is it in Tokyo?": "Asia/Tokyo",
    "What's the current time in London?": "Europe/London",
    "Can you tell me the time in New York right now?": "America/New_York",
    "What time is it now in Paris?": "Europe/Paris",
    "Tell me the current time in Sydney.": "Australia/Sydney",
    "Do you know what time it is in Berlin?": "Europe/Berlin",
    "I need the local time in Los Angeles, please.": "America/Los_Angeles",
    "How late is it in Singapore at the moment?": "Asia/Singapore",
    "What is the time right now in UTC?": "UTC",
    "Is it morning or evening in Mumbai right now?": "Asia/Kolkata",
    "Current time in Moscow?": "Europe/Moscow",
    "What's the clock showing in Cairo now?": "Africa/Cairo",
    "Could you check what time it is in Toronto?": "America/Toronto",
    "time in Mexico City now": "America/Mexico_City",
    "What hour is it in Seoul?": "Asia/Seoul",
    "Please look up the current time for Buenos Aires.": "America/Argentina/Buenos_Aires",
    "What time do they have in Dubai right now?": "Asia/Dubai",
    "Give me the present time in Rome.": "Europe/Rome",
    "Is it late at night in Honolulu now?": "Pacific/Honolulu",
    "Hey, what's the time in Johannesburg?": "Africa/Johannesburg",
}
CONTROL_QUESTIONS = [
    "What is the capital of France?",
    "Write a haiku about autumn.",
    "How many legs does a spider have?",
    "Translate 'good morning' into Spanish.",
    "What is 12 times 7?",
    "Give me a tip for a job interview.",
    "Who wrote Romeo and Juliet?",
    "What colour is the sky on a clear day?",
    "Suggest a name for a pet cat.",
    "Why do we have time zones?",
]
CLOCK = "time.get_current_time"


@dataclass
class Answer:
    calls: list[tuple[str, dict[str, object]]]
    seconds: float
    ended_by: str


def ask(engine: Engine, agent: Path, question: str, temperature: float) -> Answer:
    """One question as the first message of a new session; the calls its turn decided."""
    overrides = {"temperature": temperature}
    session_id = engine.submit(engine.open_session(agent, None, overrides)).result(120)
    started = time.perf_counter()
    result = engine.submit(engine.send(session_id, question)).result(1800)
    seconds = time.perf_counter() - started
    events = engine.submit(engine.events(session_id)).result()
    engine.submit(engine.close_session(session_id)).result(60)
    calls = [
        (event.body.call.name, dict(event.body.call.arguments))
        for event in events
        if isinstance(event.body, ToolCallDecided)
    ]
    return Answer(calls, seconds, result.ended_by)


def asked(engine: Engine, agent: Path, question: str, temperature: float, label: str) -> Answer:
    """`ask`, with a line of progress."""
    answer = ask(engine, agent, question, temperature)
    print(f"  [{label}] {answer.seconds:6.1f} s  {question!r} -> {answer.calls or answer.ended_by}")
    return answer


def run(
    engine: Engine, agent: Path, count: tuple[int, int], temperature: float, label: str
) -> None:
    """Ask the first `count` time and control questions and print what came of them."""
    time_answers = [
        (asked(engine, agent, question, temperature, label), zone)
        for question, zone in list(TIME_QUESTIONS.items())[: count[0]]
    ]
    controls = [
        asked(engine, agent, question, temperature, label)
        for question in CONTROL_QUESTIONS[: count[1]]
    ]
    right = sum(any(name == CLOCK for name, _ in a.calls) for a, _ in time_answers)
    zoned = sum((CLOCK, {"timezone": zone}) in a.calls for a, zone in time_answers)
    wrong = sum(bool(a.calls) for a in controls)
    seconds = _median([a.seconds for a, _ in time_answers])
    control_s = _median([a.seconds for a in controls])
    print(
        f"{label:12} time questions calling {CLOCK}: {right}/{len(time_answers)} "
        f"(with the city's zone: {zoned})   controls calling a tool: {wrong}/{len(controls)}   "
        f"median s per answer: time {seconds:.1f}, controls {control_s:.1f}"
    )


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def drop_agent_supervisors(agent: Path) -> None:
    config_file = agent / "tsagent.json"
    config = json.loads(config_file.read_text())
    config["supervisors"] = [s for s in config["supervisors"] if s["type"] != "agent"]
    config_file.write_text(json.dumps(config, indent=2))


def use_model(agents: Path, gguf: Path) -> None:
    """Every copied agent (the assistant and its supervisor agents) runs on the model in `gguf`."""
    for config_file in agents.glob("*/tsagent.json"):
        config = json.loads(config_file.read_text())
        config.setdefault("settings", {})["model"] = f"embedded:{gguf}"
        config_file.write_text(json.dumps(config, indent=2))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time", type=int, default=20, help="how many time questions")
    parser.add_argument("--controls", type=int, default=10, help="how many needing no tool")
    parser.add_argument("--baseline", type=int, help="time questions of the baseline (0: none)")
    parser.add_argument("--without-agent-supervisors", action="store_true")
    parser.add_argument("--temperature", type=float, default=0.3, help="the sample's is 0.3")
    parser.add_argument("--model", type=Path, help="a GGUF file instead of the bundled SmolLM2")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        os.environ["FOUNDRY_HOME"] = str(Path(folder) / "home")  # the trust file goes there
        agents = Path(folder) / "agents"
        shutil.copytree(shipped_path("agents"), agents)
        agent = agents / "assistant"
        if args.without_agent_supervisors:
            drop_agent_supervisors(agent)
        if args.model:
            use_model(agents, args.model.resolve())
        TrustStore.default().grant(read_agent(agent))
        runtime = shared_runtime(model_path(str(args.model.resolve()) if args.model else "smollm2"))
        with Engine(Store.open(f"sqlite:///{Path(folder) / 'bench.sqlite3'}")) as engine:
            run(engine, agent, (args.time, args.controls), args.temperature, "constrained")
            print(f"llama.cpp found native tool calling in the template: {runtime.native_tools}")
            baseline = args.time if args.baseline is None else args.baseline
            if baseline:
                runtime.native_tools = True  # as before: the tools go to the template only
                controls = args.controls * baseline // max(1, args.time)
                run(engine, agent, (baseline, controls), args.temperature, "baseline")


if __name__ == "__main__":
    main()
