"""The session commands of `foundry`: run a turn, chat in the terminal, list and export sessions."""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from foundry.cli.terminal import escaped
from foundry.cli.trust import add_trust_flag, ensure_trusted

if TYPE_CHECKING:
    from foundry.llm.base import ToolCall
    from foundry.runtime.engine import Engine
    from foundry.session.chat import TurnResult
    from foundry.session.context import ItemKind
    from foundry.session.events import Event, SupervisorDecided
    from foundry.session.gate import AskUser, GateDecision
    from foundry.store import EventRecord
    from foundry.supervision.outgoing import OutgoingMask


async def approve_everything(call: ToolCall) -> GateDecision:
    from foundry.session.gate import GateDecision

    return GateDecision(allowed=True, by="cli:--yes", reason="approved on the command line")


async def ask_in_terminal(call: ToolCall) -> GateDecision:
    import asyncio

    from foundry.session.gate import GateDecision
    from foundry.supervision.secrets import mask_secrets

    shown = json.dumps(mask_secrets(call.arguments))  # a terminal's scrollback is kept
    question = f"\nAllow {call.name}({shown})? [y/N] "
    answer = await asyncio.get_running_loop().run_in_executor(None, input, question)
    allowed = answer.strip().lower() in ("y", "yes")
    return GateDecision(allowed=allowed, by="human:terminal", reason="" if allowed else "refused")


def event_printer(show_tokens: bool) -> Callable[[Event], None]:
    """What `run` and `chat` print of a session's events: the reply as it streams (with
    `show_tokens`), and on stderr what a person must know: failures, fallbacks, waits, saves."""
    from foundry.session.events import (
        AgentApplied,
        ApprovalRequested,
        ErrorOccurred,
        SupervisorDecided,
        SupervisorDeferred,
        SupervisorOff,
        TokenDelta,
        ToolCallFinished,
    )

    def show(event: Event) -> None:
        body = event.body
        if isinstance(body, TokenDelta) and show_tokens:
            sys.stdout.write(escaped(body.text, lines=True))
            sys.stdout.flush()
        elif isinstance(body, ToolCallFinished):
            mark = "failed" if body.is_error else "done"
            print(f"\n[{escaped(body.name)} {mark} in {body.duration_s:.2f} s]", file=sys.stderr)
        elif isinstance(body, ErrorOccurred):
            print(
                f"\n[{body.where or 'error'}] {escaped(body.message, lines=True)}", file=sys.stderr
            )
        elif isinstance(body, SupervisorDecided) and body.fallback:
            print(f"\n[supervisor fallback] {escaped(_fallback_line(body))}", file=sys.stderr)
        elif isinstance(body, SupervisorDeferred):
            print(f"\n[supervisor deferred] {escaped(body.reason)}", file=sys.stderr)
        elif isinstance(body, AgentApplied):
            restart = f"leave, then `foundry chat --session {event.session_id}` runs it"
            print(f"\n[agent saved] {body.describe(restart)}", file=sys.stderr)
        elif isinstance(body, SupervisorOff):
            print(
                f"\n[supervisor off] {escaped(body.supervisor)}: {escaped(body.reason)}",
                file=sys.stderr,
            )
        elif isinstance(body, ApprovalRequested):
            print(
                f"\n[waiting for a person] {escaped(body.tool)}: approve or deny it in the app's "
                f"inbox, or with `foundry approvals approve {body.approval_id}` / `deny`",
                file=sys.stderr,
            )

    return show


def _fallback_line(body: SupervisorDecided) -> str:
    """What a supervisor that failed did instead, in one line."""
    reason = "; ".join(body.reasons) or "no reason given"
    return f"{body.supervisor} on the {body.direction}: {reason}"


def _turn(engine: Engine, session_id: str, text: str | None) -> TurnResult:
    """Run a turn (or resume one, when `text` is None); Ctrl+C cancels it and keeps the session."""
    work = engine.send(session_id, text) if text is not None else engine.resume(session_id)
    future = engine.submit(work)
    try:
        return future.result()
    except KeyboardInterrupt:
        engine.submit(engine.cancel(session_id)).result()
        return future.result()


REVIEW_GRACE_S = 1.0  # reviews after the reply that end this soon are kept without waiting


def _settle(engine: Engine, session_id: str, wait: bool) -> None:
    """The supervisors' reviews after the reply: waited for with `wait` (Ctrl+C stops them);
    otherwise given REVIEW_GRACE_S to end, and the rest stopped, each recorded as stopped
    before it finished, and said. The session is kept either way."""
    reviewers = engine.submit(engine.later_reviewers(session_id)).result()
    if not reviewers:
        return
    if not wait:
        _stop_reviews(engine, session_id)
        return
    print(
        f"\n[after the reply] waiting for {escaped(', '.join(reviewers))} to finish reviewing "
        "(Ctrl+C stops them)",
        file=sys.stderr,
    )
    try:
        engine.submit(engine.settle(session_id)).result()
    except KeyboardInterrupt:
        engine.submit(engine.settle(session_id, timeout_s=0)).result()


def _stop_reviews(engine: Engine, session_id: str) -> None:
    """Stop the reviews still running after REVIEW_GRACE_S, saying which first."""
    chain = engine.session(session_id).chain
    late = engine.submit(chain.wait_for_reviews(REVIEW_GRACE_S)).result()
    if late:
        print(
            f"\n[after the reply] not waiting for {escaped(', '.join(late))}: stopped, and "
            "recorded as not finished (--wait-reviews waits for them)",
            file=sys.stderr,
        )
    engine.submit(engine.settle(session_id, timeout_s=0)).result()


def run_command(args: argparse.Namespace) -> int:
    from foundry.agent.trust import TrustStore
    from foundry.runtime.engine import Engine

    ask: AskUser | None = approve_everything if args.yes else None
    trust = TrustStore.default()
    refused = ensure_trusted(Path(args.agent), args.trust, trust)
    if refused is not None:
        return refused
    with Engine(trust=trust) as engine:
        session_id = engine.submit(
            engine.open_session(Path(args.agent), args.model, ask=ask)
        ).result()
        engine.bus.subscribe(event_printer(show_tokens=not args.json))
        result = _turn(engine, session_id, args.message)
        _settle(engine, session_id, wait=args.wait_reviews)
        if args.json:
            print(json.dumps(_summary(engine, session_id, result), indent=2))
        else:
            print()
    return 0 if result.ended_by in ("reply", "cancelled") else 1


def _summary(engine: Engine, session_id: str, result: TurnResult) -> dict[str, Any]:
    return {
        "reply": result.reply,
        "session_id": session_id,
        "ended_by": result.ended_by,
        "error": result.error,
        "model_calls": result.model_calls,
        "input_tokens": result.input_tokens,
        "output_tokens": result.output_tokens,
        "tool_calls": result.tool_calls,
        "supervisor_fallbacks": _fallbacks(engine, session_id),
        "events": engine.store.events.last_seq(session_id),
    }


def _fallbacks(engine: Engine, session_id: str) -> list[dict[str, Any]]:
    """Each supervisor that failed in the session and the fallback it applied."""
    from foundry.session.events import SupervisorDecided

    records = engine.store.events.list(session_id, kinds=("supervisor_decided",))
    decided = [SupervisorDecided.model_validate(record.payload) for record in records]
    return [
        {
            "supervisor": body.supervisor,
            "direction": body.direction,
            "action": body.action,
            "reason": "; ".join(body.reasons),
        }
        for body in decided
        if body.fallback
    ]


CHAT_HELP = """Type a message and press Enter. Ctrl+C stops a reply; Ctrl+D or /quit leaves.
/include rule:NAME, /exclude ref:NAME  put an item into or out of the context
@rule:NAME or @ref:NAME in a message    include that item from then on"""


def chat_command(args: argparse.Namespace) -> int:
    if not args.agent and not args.session:
        print("foundry chat: give an AGENT, or --session ID to reopen a session", file=sys.stderr)
        return 2
    from foundry.agent.trust import TrustStore
    from foundry.runtime.engine import Engine

    trust = TrustStore.default()
    with Engine(trust=trust) as engine:
        agent = Path(args.agent) if args.agent else _agent_of(engine, args.session)
        refused = ensure_trusted(agent, args.trust, trust)
        if refused is not None:
            return refused
        if args.session:
            engine.submit(engine.reopen_session(args.session, ask=ask_in_terminal)).result()
            session_id = args.session
        else:
            session_id = engine.submit(
                engine.open_session(Path(args.agent), args.model, ask=ask_in_terminal)
            ).result()
        engine.bus.subscribe(event_printer(show_tokens=True))
        print(f"session {session_id}\n{CHAT_HELP}", file=sys.stderr)
        if engine.session(session_id).needs_resume:
            print("[resuming the interrupted turn]", file=sys.stderr)
            _chat_turn(engine, session_id, None)
        _chat_loop(engine, session_id)
    return 0


def _agent_of(engine: Engine, session_id: str) -> Path:
    """The agent a stored session was started with."""
    return Path(engine.store.sessions.get(session_id).agent_path)


def _chat_loop(engine: Engine, session_id: str) -> None:
    while True:
        try:
            text = input("\n> ").strip()
        except (EOFError, KeyboardInterrupt):
            print()
            return
        if text in ("/quit", "/exit"):
            return
        if text.startswith(("/include ", "/exclude ")):
            _change_context(engine, session_id, text)
        elif text:
            _chat_turn(engine, session_id, text)


def _chat_turn(engine: Engine, session_id: str, text: str | None) -> None:
    """A turn of the chat, unless another Foundry process is running one of this session."""
    from foundry.runtime.engine import SessionRunningElsewhere

    try:
        _turn(engine, session_id, text)
    except SessionRunningElsewhere as error:
        print(f"[{error}]", file=sys.stderr)


def _change_context(engine: Engine, session_id: str, command: str) -> None:
    verb, _, target = command.partition(" ")
    kind, _, name = target.strip().partition(":")
    items: dict[str, ItemKind] = {"rule": "rule", "ref": "reference", "tool": "tool"}
    item = items.get(kind)
    if item is None or not name:
        print("use /include rule:NAME, ref:NAME or tool:SERVER.TOOL", file=sys.stderr)
        return
    chat = engine.session(session_id)
    engine.submit(chat.set_included(item, name, verb == "/include")).result()
    done = "included" if verb == "/include" else "excluded"
    print(f"[{done} {item} {escaped(name)}]", file=sys.stderr)


def sessions_list_command(args: argparse.Namespace) -> int:
    from foundry.store import Store

    with Store.open() as store:
        records = store.sessions.list(args.limit)
    if not records:
        print("no sessions yet; start one with `foundry chat AGENT` or in the app", file=sys.stderr)
    for record in records:
        updated = record.updated_at.strftime("%Y-%m-%d %H:%M")
        shown = f"{record.id}  {updated}  {record.agent_name or '-'}  {record.agent_path}"
        print(escaped(shown))
    return 0


def sessions_show_command(args: argparse.Namespace) -> int:
    from foundry.store import Store
    from foundry.supervision.outgoing import OutgoingMask

    with Store.open() as store:
        record = store.sessions.get(args.session_id)
        mask = OutgoingMask.for_agent(record.agent_path)  # a terminal's scrollback is kept
        print(escaped(f"session {record.id} with {record.agent_name} ({record.agent_path})"))
        for message in store.messages.list(record.id):
            label = message.data.get("name") or message.role
            calls = mask.payload(message.data.get("tool_calls") or [])
            text = message.content or " ".join(
                f"-> {call['name']}({call['arguments']})" for call in calls
            )
            print(f"\n[{escaped(label)}] {escaped(mask.text(text), lines=True)}")
    return 0


def sessions_export_command(args: argparse.Namespace) -> int:
    """The session's events as JSONL, secrets masked (the store keeps them as they were)."""
    from foundry.store import Store
    from foundry.supervision.outgoing import OutgoingMask

    if args.otlp:
        return _export_otlp(args.session_id)
    with Store.open() as store:
        record = store.sessions.get(args.session_id)
        mask = OutgoingMask.for_agent(record.agent_path)
        lines = _export_lines(store.events.list(args.session_id), mask)
        if args.output:
            with open(args.output, "w", encoding="utf-8") as output:
                output.writelines(lines)
        else:
            sys.stdout.writelines(lines)
    return 0


def _export_otlp(session_id: str) -> int:
    """The session's (or task's) spans sent to the OTLP endpoint the environment names."""
    from foundry.store import Store
    from foundry.telemetry.export import ExportFailed, otlp_exporter, send, spans_of
    from foundry.words import counted

    with Store.open() as store:
        spans = spans_of(store, session_id)
    try:
        sent = send(spans, otlp_exporter())
    except ExportFailed as failure:
        print(f"foundry: {failure}", file=sys.stderr)
        return 1
    print(escaped(f"exported {counted(sent.spans, 'span')} of {session_id} to {sent.endpoint}"))
    return 0


def _export_lines(events: Sequence[EventRecord], mask: OutgoingMask) -> Iterator[str]:
    """The events as JSONL, secrets masked; a reply's token events are masked together, so
    that a secret split across them is masked too."""
    for streamed, run in itertools.groupby(events, key=lambda event: event.kind == "token"):
        records = list(run)
        if not streamed:
            yield from (_export_line(event, mask.payload(event.payload)) for event in records)
            continue
        chunks = mask.stream([str(event.payload.get("text", "")) for event in records])
        for event, chunk in zip(records, chunks, strict=True):
            yield _export_line(event, {**event.payload, "text": chunk})


def _export_line(event: EventRecord, payload: dict[str, Any]) -> str:
    line = {
        "session_id": event.session_id,
        "seq": event.seq,
        "time": event.time.isoformat(),
        "kind": event.kind,
        "payload": payload,
    }
    return json.dumps(line, ensure_ascii=False) + "\n"


def add_session_commands(commands: Any) -> None:
    run = commands.add_parser(
        "run",
        help="run one turn of an agent headless and print the reply",
        description="Send one message to an agent and print its reply as it streams "
        "(or, with --json, one JSON object with reply, session_id, tokens, tool calls, events).",
    )
    run.add_argument("agent", metavar="AGENT", help="agent folder or .yaml file")
    run.add_argument("--message", "-m", required=True, help="the user's message")
    run.add_argument(
        "--model", help="provider:model, e.g. ollama:qwen2.5:7b or scripted:turns.yaml"
    )
    run.add_argument("--json", action="store_true", help="print one JSON object at the end")
    run.add_argument(
        "--wait-reviews",
        action="store_true",
        help="wait for the supervisors that review after the reply (by default the ones not "
        f"done {REVIEW_GRACE_S:g} s after it are stopped, and recorded as not finished)",
    )
    run.add_argument(
        "--yes",
        "-y",
        action="store_true",
        help="approve tool calls that need approval (otherwise they wait in the approval inbox)",
    )
    add_trust_flag(run)
    run.set_defaults(handler=run_command, exit_at_once=True)  # see cli/ending.py

    chat = commands.add_parser(
        "chat",
        help="chat with an agent in the terminal",
        description="An interactive chat with streaming output; tool calls that need approval "
        "are asked about. --session reopens a persisted session where it was.",
    )
    chat.add_argument("agent", metavar="AGENT", nargs="?", help="agent folder or .yaml file")
    chat.add_argument("--model", help="provider:model")
    chat.add_argument("--session", help="reopen this session instead of starting one")
    add_trust_flag(chat)
    chat.set_defaults(handler=chat_command)

    sessions = commands.add_parser(
        "sessions",
        help="list, show and export persisted sessions",
        description="Persisted chat sessions.",
    )
    actions = sessions.add_subparsers(title="actions", metavar="ACTION", required=True)
    listing = actions.add_parser(
        "list",
        help="the most recent sessions",
        description="List sessions, most recently used first.",
    )
    listing.add_argument("--limit", type=int, default=50, help="how many (default 50)")
    listing.set_defaults(handler=sessions_list_command)
    show = actions.add_parser(
        "show", help="a session's conversation", description="Print a session's messages."
    )
    show.add_argument("session_id", metavar="ID")
    show.set_defaults(handler=sessions_show_command)
    export = actions.add_parser(
        "export",
        help="a session's events as JSON lines",
        description="Write every event of a session as one JSON object per line (JSONL).",
    )
    export.add_argument("session_id", metavar="ID")
    export.add_argument("--output", "-o", help="file to write (default: standard output)")
    export.add_argument(
        "--otlp",
        action="store_true",
        help="send the session's (or a task's) spans to the OpenTelemetry endpoint of "
        "OTEL_EXPORTER_OTLP_ENDPOINT instead (docs/telemetry.md)",
    )
    export.set_defaults(handler=sessions_export_command)
