"""The `foundry gateway` command: an agent's tools, supervised, for any MCP client."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from foundry.cli.supervision import port_number
from foundry.cli.trust import add_trust_flag, ensure_trusted

if TYPE_CHECKING:
    from foundry.agent.trust import TrustStore

DEFAULT_PORT = 8788


def gateway_command(args: argparse.Namespace) -> int:
    from foundry.agent.trust import TrustStore

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
    return _serve(agent, trust, args.port if args.http else None)


def _serve(agent: Path, trust: TrustStore, port: int | None) -> int:
    from foundry.gateway.server import Gateway, serve_on_engine, serve_stdio
    from foundry.runtime.engine import Engine

    with Engine(trust=trust) as engine:
        work = engine.open_tool_session(agent, "an MCP client via the gateway")
        session = engine.submit(work).result()
        name = engine.store.sessions.get(session.session_id).agent_name
        gateway = Gateway(engine, session, agent, name)
        serving = serve_stdio(gateway) if port is None else _serve_http(gateway, port)
        try:
            serve_on_engine(engine, serving)
        finally:  # stdin closed, SIGTERM or Ctrl+C: what every call recorded is stored first
            engine.submit(gateway.aclose()).result(30)
            engine.submit(session.aclose()).result(30)
    return 0


async def _serve_http(gateway: Any, port: int) -> None:
    from foundry.gateway.http import serve_http
    from foundry.home import FoundryHome

    await serve_http(gateway, FoundryHome.from_environment().ensure(), port)


def add_gateway_commands(commands: Any) -> None:
    from foundry.gateway.client_config import CLIENTS

    gateway = commands.add_parser(
        "gateway",
        help="serve an agent's tools to any MCP client, every call supervised",
        description="An MCP server offering the tools of AGENT's MCP servers; each call passes "
        "AGENT's policy (or its toolPermission, asking in the approval inbox) and is recorded "
        "as a session. On stdio by default (it never asks on the terminal: stdin is the MCP "
        "channel, so an untrusted agent is refused with exit 2 unless --trust); --http serves "
        "streamable HTTP on 127.0.0.1 with the API token as Bearer.",
    )
    gateway.add_argument("agent", metavar="AGENT", help="agent folder or .yaml file")
    gateway.add_argument(
        "--print-config",
        choices=CLIENTS,
        metavar="CLIENT",
        help=f"print the configuration snippet for a client ({', '.join(CLIENTS)}) and exit",
    )
    gateway.add_argument(
        "--http", action="store_true", help="serve streamable HTTP on loopback instead of stdio"
    )
    gateway.add_argument(
        "--port",
        type=port_number,
        default=DEFAULT_PORT,
        help=f"the HTTP port (default {DEFAULT_PORT})",
    )
    add_trust_flag(gateway)
    gateway.set_defaults(handler=gateway_command)
