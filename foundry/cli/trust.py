"""The `foundry trust` command, the `--trust` flag and the consent asked before an agent's commands
run from the command line."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from foundry.cli.terminal import escaped

if TYPE_CHECKING:
    from foundry.agent.trust import TrustCheck, TrustStore

REFUSED = 2


def add_trust_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--trust",
        action="store_true",
        help="run the agent's commands (its stdio MCP servers) and connect to its HTTP servers "
        "and model providers for this run without asking",
    )


def ensure_trusted(
    agent_path: Path, trust_flag: bool, store: TrustStore, interactive: bool = True
) -> int | None:
    """None when the agent's commands may run (trusted, `--trust`, or a yes on the terminal,
    unless not `interactive`); otherwise REFUSED, with the commands and how to trust them on
    stderr."""
    from foundry.agent.document import load_agent
    from foundry.agent.trust import UntrustedAgent

    document = load_agent(agent_path)
    check = store.check(document)
    if check.trusted:
        return None
    if trust_flag:
        store.grant(document, remember=False)
        return None
    if interactive and _interactive() and _asked_yes(check):
        store.grant(document, shown=check.commands)  # what was listed, not a later change
        return None
    print(f"foundry: {UntrustedAgent(check)}", file=sys.stderr)
    return REFUSED


def _interactive() -> bool:
    return sys.stdin.isatty() and sys.stderr.isatty()


def _asked_yes(check: TrustCheck) -> bool:
    from foundry.agent.trust import would_do

    what = would_do(check.untrusted)
    print(f"{check.agent_path} would {what} ({check.reason}):", file=sys.stderr)
    for item in check.untrusted:
        print(f"  {item.display}", file=sys.stderr)
    print("Trust them, now and from now on? [y/N] ", end="", file=sys.stderr, flush=True)
    try:
        answer = sys.stdin.readline()
    except KeyboardInterrupt:
        return False
    return answer.strip().lower() in ("y", "yes")


def _trust(args: argparse.Namespace) -> int:
    from foundry.agent.document import load_agent
    from foundry.agent.trust import TrustStore, UntrustedAgent

    store = TrustStore.default()
    if args.list:
        return _list(store)
    if not args.agent:
        print("foundry trust: name an agent, or use --list", file=sys.stderr)
        return REFUSED
    if args.revoke:
        return _revoke(store, Path(args.agent))
    document = load_agent(Path(args.agent))
    check = store.check(document)
    if check.trusted:
        print(f"{escaped(check.agent_path)}: trusted ({_count(check)})")
        return 0
    if not args.yes and not _interactive():
        print(f"foundry: {UntrustedAgent(check)}", file=sys.stderr)
        print("(add --yes to trust them without being asked)", file=sys.stderr)
        return REFUSED
    if not args.yes and not _asked_yes(check):
        print("not trusted", file=sys.stderr)
        return REFUSED
    store.grant(document, shown=check.commands)
    print(f"{escaped(check.agent_path)}: trusted ({_count(check)})")
    return 0


def _list(store: TrustStore) -> int:
    entries = store.entries()
    if not entries:
        print("no agents trusted (agents shipped with Foundry always are)")
    for entry in entries:
        print(f"{escaped(entry.agent_path)}  (trusted {entry.trusted_at:%Y-%m-%d %H:%M} UTC)")
        for display in entry.commands.values():
            print(f"  {escaped(display)}")
    return 0


def _revoke(store: TrustStore, agent: Path) -> int:
    if store.revoke(agent):
        print(f"{escaped(agent)}: no longer trusted; its commands will be asked about again")
        return 0
    print(f"{agent}: was not trusted", file=sys.stderr)
    return 1


def _count(check: TrustCheck) -> str:
    from foundry.agent.trust import AgentCommand

    commands = sum(isinstance(item, AgentCommand) for item in check.commands)
    connections = len(check.commands) - commands
    counted = [
        f"{count} {word}{'s' if count > 1 else ''}"
        for count, word in ((commands, "command"), (connections, "connection"))
        if count
    ]
    return ", ".join(counted) or "no commands"


def add_trust_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    trust = commands.add_parser(
        "trust",
        help="trust an agent's commands (its stdio MCP servers) and connections (its HTTP servers "
        "and model providers), list or revoke trust",
        description="An agent's commands run, and its connections are made, only once you trust "
        "them. Trust is kept per agent with a hash of each command, its executable, arguments, "
        "working folder, environment and the agent's files they name, and of each connection's "
        "URL and the names of the headers or keys it sends: a change asks again. Agents "
        "shipped with Foundry are trusted.",
    )
    trust.add_argument("agent", nargs="?", metavar="AGENT", help="agent folder or .yaml file")
    trust.add_argument("--list", action="store_true", help="list the trusted agents")
    trust.add_argument("--revoke", action="store_true", help="stop trusting AGENT")
    trust.add_argument("-y", "--yes", action="store_true", help="trust without asking")
    trust.set_defaults(handler=_trust)
