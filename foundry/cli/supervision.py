"""The supervision commands of `foundry`: serve the approvals API, decide approvals, audit."""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from foundry.cli.terminal import escaped
from foundry.home import FoundryHome

if TYPE_CHECKING:
    from foundry.store import ApprovalRecord, TraceRecord

DEFAULT_PORT = 8787
STATUSES = ("pending", "approved", "denied", "timed_out", "all")
EVERY_TRACE = 2**62
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
SHADOW_NOTE = (
    "shadow supervisors: a supervisor:NAME resolution is kept as its verdict; a person decides"
)
RISK_WORDS = "YES: the params contain phrases used to steer a reviewer"

# -- foundry serve -------------------------------------------------------------------------------


def serve_command(args: argparse.Namespace) -> int:
    from foundry.api import ApiServer, ApiServerError, create_app, load_or_create_token
    from foundry.api.server import is_loopback
    from foundry.runtime.engine import Engine

    if not is_loopback(args.host):
        print(
            f"foundry serve: the approvals API listens on loopback only, and {args.host} is not "
            "a loopback address; use 127.0.0.1, ::1 or localhost",
            file=sys.stderr,
        )
        return 2
    home = FoundryHome.from_environment().ensure()
    token = load_or_create_token(home.config_dir)
    with _stop_on_signals() as stop, Engine() as engine:
        app = create_app(engine.store, token, shadow_supervisors=args.shadow_supervisors)
        server = ApiServer(app, args.host, args.port)
        try:
            url = engine.submit(server.start()).result()
        except ApiServerError as error:
            print(f"foundry serve: {error}", file=sys.stderr)
            return 1
        gc.freeze()  # what start-up made lives as long as the server: out of full collections
        try:
            _announce(url, token, home)
            if args.shadow_supervisors:
                print(SHADOW_NOTE, flush=True)
            stop.wait()
        finally:
            engine.submit(server.stop()).result()
    print("stopped", flush=True)
    return 0


@contextlib.contextmanager
def _stop_on_signals() -> Iterator[threading.Event]:
    """An event set by Ctrl+C or SIGTERM, with the previous handlers restored afterwards."""
    stop = threading.Event()
    previous = {number: signal.getsignal(number) for number in STOP_SIGNALS}
    for number in STOP_SIGNALS:
        signal.signal(number, lambda *_: stop.set())
    try:
        yield stop
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def _announce(url: str, token: str, home: FoundryHome) -> None:
    from foundry.api.token import TOKEN_ENV, TOKEN_FILE

    if os.environ.get(TOKEN_ENV, "").strip():
        where = f"from {TOKEN_ENV}"
    else:
        where = f"in {home.config_dir / TOKEN_FILE}"
    print(
        f"Foundry approvals API on {url}\n"
        f"token:          {where} (send it as Authorization: Bearer TOKEN)\n"
        f"capability URL: {url}/t/{token}\n"
        "                this URL is a secret: whoever has it can approve tool calls\n"
        "Ctrl+C stops the server.",
        flush=True,
    )


# -- foundry approvals ---------------------------------------------------------------------------


def approvals_list_command(args: argparse.Namespace) -> int:
    from foundry.runtime.approvals import Approvals, utc_now
    from foundry.store import Store

    status = None if args.status == "all" else args.status
    with Store.open() as store:
        records = Approvals(store).listed(status, args.tool)
    if not records:
        print(f"no {'' if status is None else status + ' '}approvals")
        return 0
    now = utc_now()
    header = ("ID", "STATUS", "AGENT", "TOOL", "AGE", "LEFT", "LEVEL")
    print_table([header, *(_approval_row(record, now) for record in records)])
    return 0


def _approval_row(record: ApprovalRecord, now: datetime) -> tuple[str, ...]:
    from foundry.api.views import go_duration

    return (
        record.id,
        record.status,
        record.agent_id,
        record.tool,
        go_duration(now - record.created_at),
        _time_left(record, now),
        record.level,
    )


def _time_left(record: ApprovalRecord, now: datetime) -> str:
    from foundry.api.views import go_duration

    if record.status != "pending" or record.expires_at is None:
        return "-"
    if record.expires_at <= now:
        return "expired"
    return go_duration(record.expires_at - now)


def print_table(rows: Sequence[tuple[str, ...]]) -> None:
    """Rows as columns padded to their widest cell."""
    rows = [tuple(escaped(cell) for cell in row) for row in rows]
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
    for row in rows:
        print(
            "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        )


def approvals_show_command(args: argparse.Namespace) -> int:
    from foundry.runtime.approvals import Approvals, utc_now
    from foundry.store import Store

    with Store.open() as store:
        record = Approvals(store).get(args.approval_id)
    print("\n".join(escaped(line) for line in approval_lines(record, args.content, utc_now())))
    return 0


def approval_lines(record: ApprovalRecord, show_content: bool, now: datetime) -> list[str]:
    """The approval as `foundry approvals show` prints it."""
    from foundry.api.views import go_duration
    from foundry.supervision.redaction import injection_risk, redact_params

    left = _time_left(record, now)
    risky = record.injection_risk or injection_risk(record.params)
    shown = "as given" if show_content else "content redacted; --content shows it"
    params = json.dumps(redact_params(record.params, show_content), indent=2, ensure_ascii=False)
    return [
        f"approval {record.id}",
        f"status:         {record.status}" + (f" ({left} left)" if left != "-" else ""),
        f"agent:          {record.agent_id}",
        f"tool:           {record.tool}",
        f"level:          {record.level}",
        f"policy rule:    {record.policy_rule or '-'}",
        f"session:        {record.session_id or '-'}",
        f"requested:      {record.created_at:%Y-%m-%d %H:%M:%S} UTC "
        f"({go_duration(now - record.created_at)} ago)",
        f"injection risk: {RISK_WORDS if risky else 'no'}",
        *_verdict_lines(record.supervisor_verdict),
        *_resolution_lines(record),
        f"params ({shown}):",
        *("  " + line for line in params.splitlines()),
    ]


def _verdict_lines(verdict: dict[str, Any] | None) -> list[str]:
    if not verdict:
        return []
    return [
        f"L1 verdict:     {verdict.get('decision')} (confidence {verdict.get('confidence')})",
        f"L1 reasoning:   {verdict.get('reasoning') or '-'}",
    ]


def _resolution_lines(record: ApprovalRecord) -> list[str]:
    if record.status == "pending":
        return []
    when = f"{record.resolved_at:%Y-%m-%d %H:%M:%S} UTC" if record.resolved_at else "-"
    confidence = "-" if record.confidence is None else f"{record.confidence:g}"
    return [
        f"resolved:       by {record.resolved_by} at {when}",
        f"reasoning:      {record.reasoning or '-'}",
        f"confidence:     {confidence}",
    ]


def approvals_approve_command(args: argparse.Namespace) -> int:
    return _resolve(args.approval_id, "approved", args.reasoning, args.params)


def approvals_deny_command(args: argparse.Namespace) -> int:
    return _resolve(args.approval_id, "denied", args.reasoning, None)


def _resolve(
    approval_id: str, status: str, reasoning: str | None, params: dict[str, Any] | None
) -> int:
    from foundry.runtime.approvals import AlreadyResolved, Approvals
    from foundry.store import Store

    with Store.open() as store:
        try:
            record = Approvals(store).resolve(
                approval_id, status, cli_user(), reasoning, params=params
            )
        except AlreadyResolved as conflict:
            print(f"foundry: {conflict}", file=sys.stderr)
            return 1
    edited = " with edited params" if params is not None else ""
    print(escaped(f"{status} {record.id} ({record.tool} for {record.agent_id}){edited}"))
    if params is not None:
        print("the edited call is decided again by the agent's policy before it runs")
    return 0


def approvals_agreement_command(args: argparse.Namespace) -> int:
    from foundry.store import Store
    from foundry.supervision.agreement import agreement_report, questions, report_lines

    with Store.open() as store:
        rows = agreement_report(questions(store.approvals.list(), args.agent))
    if args.json:
        print(json.dumps([row.as_json() for row in rows], indent=2))
    else:
        print("\n".join(escaped(line) for line in report_lines(rows)))
    return 0


def cli_user() -> str:
    """Who resolves from this terminal: human:cli:<login name>."""
    from foundry.supervision.resolution import human_resolver

    return human_resolver("cli")


def json_object(text: str) -> dict[str, Any]:
    """An argparse type: a JSON object given on the command line."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise argparse.ArgumentTypeError(f"not valid JSON ({error})") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("give the params as a JSON object, {...}")
    return value


# -- foundry audit -------------------------------------------------------------------------------


def audit_export_command(args: argparse.Namespace) -> int:
    from foundry.store import Store

    with Store.open() as store:
        traces = store.traces.list(args.agent, EVERY_TRACE)
    chosen = [
        trace for trace in reversed(traces) if args.since is None or trace.created_at >= args.since
    ]
    lines = (audit_line(trace) for trace in chosen)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as output:
            output.writelines(lines)
        print(f"wrote {len(chosen)} traces to {args.output}", file=sys.stderr)
    else:
        sys.stdout.writelines(lines)
    return 0


def audit_line(trace: TraceRecord) -> str:
    """One trace as a line of the audit export (JSONL)."""
    line = {
        "trace_id": trace.id,
        "time": trace.created_at.isoformat(),
        "session_id": trace.session_id,
        "agent": trace.agent_id,
        "tool": trace.tool,
        "params": trace.params,
        "decision": trace.decision,
        "level": trace.resolved_level,
        "resolved_by": trace.resolved_by,
        "reasoning": trace.reasoning,
        "confidence": trace.confidence,
        "decided_ms": trace.decided_ms,
        "approval_id": trace.approval_id,
        "policy_rule": trace.policy_rule,
    }
    return json.dumps(line, ensure_ascii=False) + "\n"


def port_number(text: str) -> int:
    """An argparse type: a TCP port, 0 (any free one) to 65535."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port; use 0 to 65535")
    return port


def iso_time(text: str) -> datetime:
    """An argparse type: an ISO 8601 time; one without an offset is taken as UTC."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an ISO 8601 time, e.g. 2025-06-01 or 2025-06-01T09:30:00+02:00"
        ) from None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


# -- registration --------------------------------------------------------------------------------


def add_supervision_commands(commands: Any) -> None:
    _add_serve(commands)
    _add_approvals(commands)
    _add_audit(commands)


def _add_serve(commands: Any) -> None:
    serve = commands.add_parser(
        "serve",
        help="serve the approvals API on loopback",
        description="Serve the approvals HTTP API (the agent-mesh supervisor protocol) on "
        "loopback until Ctrl+C or SIGTERM. The token is FOUNDRY_API_TOKEN, else the "
        "config folder's api-token file (created on first use).",
    )
    serve.add_argument(
        "--port",
        type=port_number,
        default=DEFAULT_PORT,
        help=f"(default {DEFAULT_PORT}; 0 picks one)",
    )
    serve.add_argument("--host", default="127.0.0.1", help="a loopback address (default 127.0.0.1)")
    serve.add_argument(
        "--shadow-supervisors",
        action="store_true",
        help="shadow mode for agent-mesh supervisors: a supervisor:NAME resolution is kept as "
        "its verdict and a person still decides (foundry approvals agreement compares them)",
    )
    serve.set_defaults(handler=serve_command)


def _add_approvals(commands: Any) -> None:
    approvals = commands.add_parser(
        "approvals",
        help="list, show, approve and deny tool calls waiting for a decision",
        description="The approval inbox: tool calls the policy sent to a human.",
    )
    actions = approvals.add_subparsers(title="actions", metavar="ACTION", required=True)
    listing = actions.add_parser(
        "list", help="approvals as a table", description="List approvals, newest first."
    )
    listing.add_argument("--status", choices=STATUSES, default="pending", help="(default pending)")
    listing.add_argument("--tool", metavar="GLOB", help="only tools matching GLOB, e.g. 'fs.*'")
    listing.set_defaults(handler=approvals_list_command)
    show = actions.add_parser(
        "show",
        help="one approval in detail",
        description="Show an approval: its params (content redacted), the L1 verdict "
        "and the injection flag.",
    )
    show.add_argument("approval_id", metavar="ID")
    show.add_argument("--content", action="store_true", help="show the params as given, unredacted")
    show.set_defaults(handler=approvals_show_command)
    approve = actions.add_parser(
        "approve",
        help="let the tool call run",
        description="Approve a pending tool call, optionally with edited params.",
    )
    approve.add_argument("approval_id", metavar="ID")
    approve.add_argument("--reasoning", help="why, for the agent and the audit trail")
    approve.add_argument(
        "--params",
        type=json_object,
        metavar="JSON",
        help="run the call with these params instead (the agent's policy decides the edited "
        "call again: a deny rule still refuses it)",
    )
    approve.set_defaults(handler=approvals_approve_command)
    deny = actions.add_parser(
        "deny",
        help="refuse the tool call",
        description="Deny a pending tool call; the reasoning goes back to the agent.",
    )
    deny.add_argument("approval_id", metavar="ID")
    deny.add_argument("--reasoning", required=True, help="why, for the agent and the audit trail")
    deny.set_defaults(handler=approvals_deny_command)
    agreement = actions.add_parser(
        "agreement",
        help="how often each supervisor's shadow verdicts agreed with people",
        description="Compare the supervisors' shadow verdicts (shadow mode) with what people "
        "decided, per supervisor and per tool: agreement, calls a supervisor would have let "
        "through that a person refused, calls it would have held back that a person approved, "
        "and the safest confidence threshold.",
    )
    agreement.add_argument("--agent", metavar="NAME", help="only this agent's approvals")
    agreement.add_argument("--json", action="store_true", help="the figures as JSON")
    agreement.set_defaults(handler=approvals_agreement_command)


def _add_audit(commands: Any) -> None:
    audit = commands.add_parser(
        "audit",
        help="export the decision trail",
        description="The audit trail: how every tool call was decided.",
    )
    actions = audit.add_subparsers(title="actions", metavar="ACTION", required=True)
    export = actions.add_parser(
        "export",
        help="every decision as JSON lines",
        description="Write every trace, oldest first, as one JSON object per line (JSONL).",
    )
    export.add_argument(
        "--output", "-o", metavar="FILE", help="file to write (default: standard output)"
    )
    export.add_argument("--agent", metavar="A", help="only this agent's traces")
    export.add_argument(
        "--since",
        type=iso_time,
        metavar="ISO",
        help="only traces from this time on (UTC unless it has an offset)",
    )
    export.set_defaults(handler=audit_export_command)
