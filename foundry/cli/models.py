"""The `foundry models` commands: the model servers found, and a capable model for the
supervisors that wait for one."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def find_command(args: argparse.Namespace) -> int:
    """Each model server that answered and its models; exit 1 when none did."""
    import asyncio

    from foundry.llm.discovery import find_model_servers, servers_to_ask

    servers = asyncio.run(find_model_servers(servers_to_ask()))
    if not servers:
        print(_nothing_found(), file=sys.stderr)
        return 1
    for server in servers:
        print(f"{server.label}: {', '.join(server.chat_models)}")
    return 0


def use_command(args: argparse.Namespace) -> int:
    """Write a capable model to the supervisor agents of AGENT that wait for one: MODEL, or
    the first model of the first server found."""
    import asyncio

    from foundry.agent.document import load_agent
    from foundry.agent.trust import TrustStore
    from foundry.runtime.model_offer import accept_model_offer, find_model_offer
    from foundry.supervision.capable_model import give_capable_model, waiting_supervisors

    agent = Path(args.agent)
    document = load_agent(agent)
    waiting = waiting_supervisors(document)
    if not waiting:
        print(f"{agent}: no supervisor waits for a capable model")
        return 0
    if args.model:
        written = give_capable_model(document, args.model)
        chosen = args.model
    else:
        offer = asyncio.run(find_model_offer(agent, TrustStore.default()))
        if offer is None:
            print(_nothing_found(), file=sys.stderr)
            return 1
        assert offer.server.suggested is not None
        chosen = offer.server.reference(offer.server.suggested)
        written = asyncio.run(accept_model_offer(offer))
    names = ", ".join(w.name for w in waiting)
    print(f"{names}: {chosen} from the next session (written to {_paths(written)})")
    return 0


def _paths(paths: list[Path]) -> str:
    return ", ".join(str(path) for path in paths)


def _nothing_found() -> str:
    from foundry.llm.discovery import ollama_host

    return (
        f"foundry: no model server answered (Ollama looked for at {ollama_host()}): start "
        "Ollama with a model (`ollama pull llama3.2`), set OLLAMA_HOST, or give the model "
        "(`foundry models use AGENT ollama:llama3.2`)"
    )


def add_model_commands(commands: Any) -> None:
    models = commands.add_parser(
        "models",
        help="find model servers, and give waiting supervisors a capable model",
        description="Model servers beyond the embedded model: Ollama (at OLLAMA_HOST or "
        "127.0.0.1:11434) and the OpenAI-compatible servers an agent names.",
    )
    actions = models.add_subparsers(title="actions", metavar="ACTION", required=True)
    find = actions.add_parser(
        "find",
        help="the model servers that answer, and their models",
        description="Ask Ollama for its models (1.5 s at most); exit 1 when it does not answer.",
    )
    find.set_defaults(handler=find_command)
    use = actions.add_parser(
        "use",
        help="run AGENT's waiting supervisors on a capable model",
        description="The supervisors marked needsCapableModel are off while their agents run "
        "on the embedded model. Write MODEL (or the first model of the server found) to those "
        "supervisor agents; they run from the agent's next session.",
    )
    use.add_argument("agent", metavar="AGENT", help="agent folder or .yaml file")
    use.add_argument("model", metavar="MODEL", nargs="?", help="provider:model, e.g. ollama:qwen3")
    use.set_defaults(handler=use_command)
