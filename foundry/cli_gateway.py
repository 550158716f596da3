"""The `foundry gateway` command: an agent's tools, supervised, for any MCP client."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from foundry.agent.trust import TrustStore
from foundry.cli_trust import add_trust_flag, ensure_trusted


def gateway_command(args: argparse.Namespace) -> int:
    agent = Path(args.agent)
    if args.print_config:
        from foundry.gateway.client_config import CONFIG_FILES, client_config

        print(client_config(args.print_config, agent))
        print(f"(merge it into {CONFIG_FILES[args.print_config]})", file=sys.stderr)
        return 0
    trust = TrustStore.default()
    refused = ensure_trusted(agent, args.trust, trust, interactive=False)
    if refused is not None:
        return refused
    return _serve(agent, trust)


def _serve(agent: Path, trust: TrustStore) -> int:
    from foundry.gateway.server import Gateway, serve_stdio
    from foundry.runtime.engine import Engine

    with Engine(trust=trust) as engine:
        work = engine.open_tool_session(agent, "an MCP client via the gateway")
        session = engine.submit(work).result()
        document_name = engine.store.sessions.get(session.session_id).agent_name
        try:
            asyncio.run(serve_stdio(Gateway(engine, session, document_name)))
        except KeyboardInterrupt:
            pass
        finally:
            engine.submit(session.aclose()).result(30)
    return 0


def add_gateway_commands(commands: Any) -> None:
    from foundry.gateway.client_config import CLIENTS

    gateway = commands.add_parser(
        "gateway",
        help="serve an agent's tools to any MCP client, every call supervised",
        description="An MCP server on stdio offering the tools of AGENT's MCP servers; each call "
        "passes AGENT's policy (or its toolPermission, asking in the approval inbox) and is "
        "recorded as a session. Never asks on the terminal: stdin is the MCP channel, so an "
        "untrusted agent is refused (exit 2) unless --trust.",
    )
    gateway.add_argument("agent", metavar="AGENT", help="agent folder or .yaml file")
    gateway.add_argument(
        "--print-config",
        choices=CLIENTS,
        metavar="CLIENT",
        help=f"print the configuration snippet for a client ({', '.join(CLIENTS)}) and exit",
    )
    add_trust_flag(gateway)
    gateway.set_defaults(handler=gateway_command)
