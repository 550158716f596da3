"""The policy commands of `foundry`: `policy check`, the dry run of an agent's tool-call policy,
and `policy questions`, the questions its calls asked a person and the rules that would settle
the needless ones."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from foundry.agent.document import AgentDocument
    from foundry.agent.models import PolicyConfig
    from foundry.store import Store
    from foundry.supervision.l1 import L1Supervisor
    from foundry.supervision.needless import NeedlessReport
    from foundry.supervision.paths import ServerPlace
    from foundry.supervision.policy import ToolDefinition
    from foundry.supervision.policy_check import CallToCheck, CheckedCall, PolicyChecker


def policy_check_command(args: argparse.Namespace) -> int:
    from foundry.supervision.policy_check import (
        PolicyCheckError,
        loop_key_note,
        result_json,
        result_line,
        summary,
    )

    try:
        results = _check(args)
    except PolicyCheckError as error:
        print(f"foundry: {error}", file=sys.stderr)
        return 1
    for result in results:
        print(result_json(result) if args.json else result_line(result))
    print(summary(results), file=sys.stderr)
    note = loop_key_note(results)
    if note is not None:
        print(note, file=sys.stderr)
    return 0


def _check(args: argparse.Namespace) -> list[CheckedCall]:
    import asyncio

    from foundry.agent.document import load_agent
    from foundry.agent.trust import trust_key
    from foundry.store import Store
    from foundry.supervision.policy_check import PolicyChecker, PolicyCheckError

    document = load_agent(Path(args.agent)) if args.agent else None
    config = _policy_of(document)
    workspace = Path(args.workspace or (document.base_dir if document else Path.cwd()))
    if not workspace.is_dir():
        raise PolicyCheckError(f"{workspace}: no such folder for --workspace")
    with Store.open() as store:
        calls = _calls(args, store, document)
        supervisor = None if args.no_l1 else _supervisor(document, config)
        folders = _server_folders(document, calls, workspace.resolve())
        schemas = _tool_schemas(args, store, document)
        checker = PolicyChecker(
            store,
            config,
            workspace.resolve(),
            folders,
            supervisor,
            tool_schemas=schemas,
            agent_path=trust_key(document.path) if document else None,
            tool_definitions=_tool_definitions(args.tools or []),
        )
        return asyncio.run(_check_all(checker, calls))


def _tool_schemas(
    args: argparse.Namespace, store: Store, document: AgentDocument | None
) -> dict[str, dict[str, Any]]:
    """The tools' schemas the loop detection keys on: as recorded in the agent's sessions (the
    checked session's last, so they win)."""
    from foundry.supervision.policy_check import agent_sessions, recorded_schemas

    sessions = list(reversed(agent_sessions(store, document.path))) if document else []
    if args.session:
        sessions.append(args.session)
    return recorded_schemas(store, sessions)


def _policy_of(document: AgentDocument | None) -> PolicyConfig:
    from foundry.agent.default_policy import default_policy
    from foundry.supervision.hierarchy import policy_entry_config
    from foundry.supervision.policy_check import PolicyCheckError

    if document is None:
        return default_policy()
    assert document.agent is not None
    config = policy_entry_config(document.agent.supervisors)
    if config is None:
        raise PolicyCheckError(
            f"{document.path}: has no policy supervisor, so no policy decides its tool calls "
            "(its toolPermission asks or allows); add one, or leave AGENT out to check the "
            "default policy"
        )
    return config


def _server_folders(
    document: AgentDocument | None, calls: list[CallToCheck], workspace: Path
) -> dict[str, ServerPlace]:
    """Where the agent's servers run, and their kinds; without an agent, each server the calls
    name runs in the workspace and is the kind its name says (`github.get_issue` is a GitHub
    server's, `filesystem.read_file` the reference file server's), or one Foundry does not
    know (`weather.get_forecast`), as the live gate would take it."""
    from foundry.supervision.paths import ServerSite, server_folders
    from foundry.tools.identity import KIND_NAMES

    if document is not None and document.agent is not None:
        return server_folders(document.agent.mcp_servers, document.base_dir)
    servers = {call.tool.split(".", 1)[0] for call in calls if "." in call.tool}
    return {
        server: ServerSite((workspace,), server if server in KIND_NAMES else None)
        for server in servers
    }


def _tool_definitions(listings: list[str]) -> dict[str, ToolDefinition]:
    """`--tools [SERVER=]FILE`, each a server's tools/list: the tools' definitions by name."""
    from foundry.supervision.policy_check import tools_listed

    definitions: dict[str, ToolDefinition] = {}
    for listing in listings:
        server, _, file = listing.rpartition("=")
        definitions |= tools_listed(Path(file), server or None)
    return definitions


def _supervisor(document: AgentDocument | None, config: PolicyConfig) -> L1Supervisor | None:
    from foundry.supervision.l1 import open_l1_supervisor

    base_dir = document.base_dir if document else Path.cwd()
    return open_l1_supervisor(base_dir, config)


def _calls(
    args: argparse.Namespace, store: Store, document: AgentDocument | None
) -> list[CallToCheck]:
    from foundry.supervision.policy_check import (
        calls_from_audit,
        calls_from_file,
        calls_from_session,
    )

    agent = document.agent.metadata.name if document and document.agent else "agent"
    if args.calls:
        return calls_from_file(Path(args.calls), agent)
    if args.audit:
        return calls_from_audit(Path(args.audit))
    return calls_from_session(store, args.session)


async def _check_all(checker: PolicyChecker, calls: list[CallToCheck]) -> list[CheckedCall]:
    return [await checker.check(call) for call in calls]


def policy_questions_command(args: argparse.Namespace) -> int:
    from foundry.agent.problems import AgentError
    from foundry.runtime.questions import QuestionsAsked
    from foundry.store import Store

    failed = 0
    with Store.open() as store:
        questions = QuestionsAsked(store)
        agents = [Path(args.agent)] if args.agent else questions.agent_files()
        if not agents:
            print("No agent's call has asked a person yet.", file=sys.stderr)
        for agent in agents:
            try:
                report = questions.report(agent)
            except (AgentError, OSError) as error:
                print(f"foundry: {agent}: cannot be read: {error}", file=sys.stderr)
                failed += 1
                continue
            print(_questions_json(agent, report) if args.json else _questions_text(agent, report))
    return 1 if failed else 0


def _questions_text(agent: Path, report: NeedlessReport) -> str:
    from foundry.cli.terminal import escaped

    lines = [escaped(str(agent)), f"  {report.summary()}"]
    header = (
        "RULE", "TOOL", "ASKED", "UNCHANGED", "DENIED", "EDITED", "FLAGGED", "TIMED OUT", "WAIT"
    )  # fmt: skip
    numbers = ("asked", "unchanged", "denied", "edited", "flagged", "timed_out")
    rows = [header] + [
        (
            count.rule,
            count.tool,
            *(str(getattr(count, name)) for name in numbers),
            _seconds(count.median_wait_s),
        )
        for count in report.counts
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    for row in rows if report.counts else ():
        cells = [escaped(cell).ljust(width) for cell, width in zip(row, widths, strict=True)]
        lines.append("  " + "  ".join(cells).rstrip())
    for proposal in report.proposals:
        lines.append(
            f"  Proposed: {proposal.rule.name}, above {proposal.before}: would have settled "
            f"{proposal.settles} questions (made from {proposal.approvals} approvals), and "
            f"changes no denied, edited or flagged call"
        )
        lines.append("    " + proposal.rule.model_dump_json(by_alias=True, exclude_none=True))
    lines += [f"  Not proposed: {escaped(why)}" for why in report.not_proposed]
    return "\n".join(lines)


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}s" if value >= 10 else f"{value:.1f}s"


def _questions_json(agent: Path, report: NeedlessReport) -> str:
    import json

    data = report.model_dump(mode="json", by_alias=True, exclude_none=True)
    data |= {"agent": str(agent), "asked": report.asked, "needless": report.needless}
    return json.dumps(data, ensure_ascii=False)


def add_policy_commands(commands: Any) -> None:
    policy = commands.add_parser("policy", help="check what an agent's tool-call policy decides")
    policy_commands = policy.add_subparsers(title="commands", metavar="COMMAND", required=True)
    check = policy_commands.add_parser(
        "check",
        help="decide tool calls as the approval hierarchy would, without running anything",
        description=(
            "Decides each call as the gate would (L0 rules, injection signals, the grants "
            "active now, the L1 supervisor unless --no-l1), without creating approvals or "
            "running anything. Each line: ID: TOOL -> OUTCOME by LEVEL [RULE]: REASON. With "
            "--session or --audit, calls decided differently now are marked (was ...)."
        ),
    )
    check.add_argument(
        "agent", nargs="?", help="the agent whose policy decides (default: the default policy)"
    )
    check.add_argument(
        "--workspace", help="the folder paths are judged against (default: the agent's)"
    )
    source = check.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--calls",
        metavar="FILE",
        help='JSON lines: {"id", "agent", "tool", "params"}, "at" (ISO 8601: when the call is '
        'made, for the rate limits and loops), and the tool\'s "annotations" and '
        '"inputSchema" as its server lists them',
    )
    source.add_argument("--session", metavar="ID", help="the tool calls a stored session made")
    source.add_argument("--audit", metavar="FILE", help="the lines of `foundry audit export`")
    check.add_argument(
        "--tools",
        action="append",
        metavar="[SERVER=]FILE",
        help="a server's tools/list result: its tools' schemas and annotations, as the live "
        "gate has them (repeatable; without SERVER= the names are as the calls give them)",
    )
    check.add_argument("--no-l1", action="store_true", help="do not ask the L1 supervisor")
    check.add_argument("--json", action="store_true", help="one JSON object a line")
    check.set_defaults(handler=policy_check_command)
    questions = policy_commands.add_parser(
        "questions",
        help="the questions an agent's calls asked a person, and rules that would settle them",
        description=(
            "For each rule and tool: how often a person was asked, approved as asked, denied, "
            "edited, flagged or timed out, and the median wait. Then the narrowest allow rules "
            "that would have settled the routine ones (approved as asked at least 3 times, "
            "never refused), each checked against every recorded call: none is offered that "
            "would change a denied, edited or flagged call. Nothing is saved: add a rule in "
            "the agent's Policy page or its file."
        ),
    )
    questions.add_argument(
        "--agent", metavar="PATH", help="one agent (default: every agent that asked lately)"
    )
    questions.add_argument("--json", action="store_true", help="one JSON object an agent")
    questions.set_defaults(handler=policy_questions_command)
