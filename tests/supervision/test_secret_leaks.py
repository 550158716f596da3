"""Attacks on secrets: a token in a tool's arguments or results, or a server's `.env` secret it
leaks back, must not reach what leaves the app or what others read: the audit export, the
sessions export, `foundry sessions show`, the metrics export, the approvals API's JSON, a
server's start error. The store itself keeps the conversation as the model read it (a result's
secrets are masked before the model reads it: supervision/results.py).

Each case is labelled MASKED (the secret must not appear) or KEPT (text that only looks like a
secret must stay readable: masking it would hide what a reviewer needs).
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import sys
from pathlib import Path
from typing import Any

import pytest

from foundry.agent.models import StdioServer
from foundry.api.views import approval_view
from foundry.cli import main
from foundry.store import ApprovalRecord, Store
from foundry.store.tables import utc_now
from foundry.supervision.redaction import redact_params
from foundry.tools import ToolHost
from tests.runtime.conftest import write_agent

MASKED, KEPT = "masked", "kept readable"

TOKEN = "ghp_" + "Q7w1E2r3T4y5U6i7O8p9A0s1D2f3G4h5J6k7"  # a GitHub token's shape
DOTENV_SECRET = "hunter2-plain-words-77"  # no shape at all: known only as the agent's secret
KEY_BODY = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZWQyNTUxOQ"
# streamed word by word: the key's body arrives in a token event of its own
PRIVATE_KEY = f"-----BEGIN OPENSSH PRIVATE KEY-----\n{KEY_BODY}\n-----END OPENSSH PRIVATE KEY-----"
SERVER = str(Path(__file__).parents[1] / "tools" / "named_tool_server.py")
ECHO = str(Path(__file__).parents[1] / "gateway" / "dying_server.py")
ALLOW_ALL = {
    "type": "policy",
    "id": "tool-policy",
    "config": {"rules": [{"name": "all", "tool": "*", "action": "allow"}], "loopDetection": False},
}


@pytest.fixture
def session_with_secrets(tmp_path: Path) -> str:
    """A real run: the model passes a token and a password to a real server that echoes the
    token, and another server answers with the secret its `.env` gave it."""
    turns = {
        "turns": [
            {
                "tool_calls": [
                    {
                        "name": "up.say",
                        "arguments": {"text": f"deploy with {TOKEN}", "password": "pw-9f8e7d"},
                    },
                    {"name": "vault.read", "arguments": {}},
                ]
            },
            {"text": f"Done. The deploy key: {PRIVATE_KEY}"},
        ]
    }
    servers = {
        "up": {"command": "python", "args": [ECHO]},
        "vault": {"command": "python", "args": [SERVER, "read", "env:API_TOKEN"]},
    }
    servers["vault"]["env"] = {"API_TOKEN": "env://API_TOKEN"}  # type: ignore[index]
    for server in servers.values():
        server["serverToolDefaults"] = {"permissionRequired": False}  # type: ignore[index]
    root = tmp_path / "agent"
    root.mkdir()
    (root / ".env").write_text(f"API_TOKEN={DOTENV_SECRET}\n")
    agent = write_agent(root, turns, servers=servers, supervisors=[ALLOW_ALL])
    assert main(["run", str(agent), "-m", "deploy", "--json"]) == 0
    with Store.open() as store:
        [session] = store.sessions.list()
        payloads = json.dumps([event.payload for event in store.events.list(session.id)])
    assert TOKEN in payloads  # the call ran with it: its parameters are kept as the model gave them
    # the vault answered with its secret, masked before the model read it (and so stored)
    assert DOTENV_SECRET not in payloads
    assert "my secret is [secret]" in payloads
    assert f'"text": "{KEY_BODY}' in payloads  # a token event of its own
    return session.id


def exported(capsys: pytest.CaptureFixture[str], *command: str) -> str:
    capsys.readouterr()
    assert main(list(command)) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize(
    "command",
    [
        ("audit", "export"),
        ("sessions", "export", "{session}"),
        ("sessions", "show", "{session}"),
    ],
    ids=["audit export", "sessions export", "sessions show"],
)
def test_a_token_in_a_call_or_its_result_is_masked_in_what_is_exported(
    session_with_secrets: str, capsys: pytest.CaptureFixture[str], command: tuple[str, ...]
) -> None:
    text = exported(capsys, *(part.format(session=session_with_secrets) for part in command))
    assert text.strip(), "something was exported"
    assert TOKEN not in text, MASKED
    assert "pw-9f8e7d" not in text, MASKED
    assert KEY_BODY not in text, MASKED  # also split over the reply's streamed chunks


def test_a_secret_the_agents_env_file_gave_a_server_is_masked_in_the_sessions_export(
    session_with_secrets: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The value has no telling shape, but Foundry knows it: it resolved it for the server."""
    text = exported(capsys, "sessions", "export", session_with_secrets)
    assert DOTENV_SECRET not in text, MASKED
    assert "my secret is" in text  # the rest of the result is kept


def test_the_sessions_export_keeps_what_only_looks_like_a_secret(
    session_with_secrets: str, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = [
        json.loads(line)
        for line in exported(capsys, "sessions", "export", session_with_secrets).splitlines()
    ]
    assert {line["session_id"] for line in lines} == {session_with_secrets}, KEPT
    usage = [line["payload"] for line in lines if "input_tokens" in json.dumps(line["payload"])]
    assert usage, "token counts are kept"
    assert "Done." in json.dumps(lines), KEPT
    streamed = [line["payload"]["text"] for line in lines if line["kind"] == "token"]
    assert "Done. " in streamed and "deploy " in streamed, KEPT


def test_the_metrics_export_holds_no_secret(
    session_with_secrets: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "csv"
    assert main(["metrics", "export", "--csv", str(target)]) == 0
    written = "".join(path.read_text() for path in target.glob("*.csv"))
    assert written and TOKEN not in written and DOTENV_SECRET not in written, MASKED


ENCODED = [
    ("as it is", TOKEN, MASKED),
    ("base64", base64.b64encode(TOKEN.encode()).decode(), MASKED),
    ("in a URL's query", f"https://api.example.com/x?access_token={TOKEN}", MASKED),
    ("a password in a URL", "https://ana:pw-9f8e7d@db.example.com/app", MASKED),
    ("a word about tokens", "count the tokens in this text", KEPT),
    ("a session id", "s_8f2a", KEPT),
]


@pytest.mark.parametrize(("case", "value", "expected"), ENCODED, ids=[c[0] for c in ENCODED])
def test_the_approvals_api_json_masks_a_secret_in_its_forms(
    case: str, value: str, expected: str
) -> None:
    record = ApprovalRecord(agent_id="worker", tool="web.get", params={"q": value})
    for content in (False, True):
        shown = approval_view(record, content, utc_now()).model_dump_json()
        assert (value in shown) == (expected == KEPT), f"{case}: {expected}"


PERCENT_ENCODED = [  # (what, the text, what the reviewer sees: decoded, the secret masked)
    ("name=value", "password%3Dhunter2%21", "password=[secret]"),
    ("bearer", "Authorization: Bearer%20abcdefghijklmnop", "Authorization: Bearer [secret]"),
    ("URL password", "https%3A%2F%2Fana%3As3cr3t-pw%40host%2F", "https://ana:[secret]@host/"),
    ("encoded twice", "a%252Fpassword%253Dx12345", "a/password=[secret]"),
    ("a query", "q=caf%C3%A9&token=abc123def", "q=café&token=[secret]"),
    # a value ends where its own encoding ends it: at `&` or the end, not at what decodes there
    ("a space in a value", "token=abc%20def", "token=[secret]"),
    ("a space, then a field", "token=abc%20def&x=1", "token=[secret]&x=1"),
    ("an encoded & in a value", "x=1&token=abc%26def%3Dghi", "x=1&token=[secret]"),
    ("an encoded quote", "password=abc%22def&x=1", "password=[secret]&x=1"),
    ("an encoded bracket", "password=ab%7Dcd%20ef", "password=[secret]"),
    ("+ as a space", "q=a+b&password=two+words%21&x=1", "q=a+b&password=[secret]&x=1"),
    ("an encoded name", "pass%77ord=abc%20def&x=1", "password=[secret]&x=1"),
    ("JSON in a query", "q=%7B%22token%22%3A%22a%20b%22%7D&x=1", 'q={"token":"[secret]"}&x=1'),
]
KEPT_ENCODED = ["path%20with%20spaces", "100%", "50%25 off", "%E2%82%AC 20"]


@pytest.mark.parametrize(
    ("case", "value", "shown"), PERCENT_ENCODED, ids=[c[0] for c in PERCENT_ENCODED]
)
def test_percent_encoded_secrets_are_shown_decoded_and_masked(
    case: str, value: str, shown: str
) -> None:
    assert redact_params({"q": value})["q"] == shown, f"{case}: {MASKED}"


@pytest.mark.parametrize("value", KEPT_ENCODED)
def test_percent_encoded_text_without_a_secret_is_shown_as_it_is(value: str) -> None:
    assert redact_params({"q": value})["q"] == value, KEPT


def test_a_text_encoded_over_and_over_is_masked_without_decoding_for_ever() -> None:
    """`%252525...`: each decoding leaves one more escape; it once overflowed the stack."""
    from foundry.supervision.secrets import mask_text

    hostile = "%" + "25" * 100_000
    assert mask_text(hostile) == hostile
    thrice = "password%25253Dhunter2"  # `password=hunter2` encoded three times
    assert redact_params({"q": thrice})["q"] == "password=[secret]", MASKED


OPENAI_KEY = "sk-proj-" + "Xy12Ab34Cd56Ef78Gh90Ij12Kl34Mn56"
# a text hiding a token behind a letter: its base64 form is not aligned on the token, and the
# token follows a letter once decoded (one, two and three letters: each byte offset in base64)
HIDDEN_IN_BASE64 = [
    ("one letter before the token", ("x" + TOKEN).encode(), MASKED),
    ("two letters before it", ("xy" + TOKEN).encode(), MASKED),
    ("three letters before it", ("xyz" + TOKEN).encode(), MASKED),
    ("glued in a sentence", f"the key is{TOKEN} now".encode(), MASKED),
    ("a byte that is not text before it", b"\xff" + TOKEN.encode(), MASKED),
    ("an OpenAI key after a word", ("key" + OPENAI_KEY).encode(), MASKED),
    ("an AWS key after a word", b"idAKIAIOSFODNN7EXAMPLE", MASKED),
    ("words ending in a token's prefix", b"see task-queue-worker-settings-v2", KEPT),
    ("a word ending in ghs", b"she laughs_loudlyandoftenwithfriends", KEPT),
    ("a prefix in a short word", b"the eghp_word here", KEPT),
]
ENCODINGS = [("base64", base64.b64encode), ("urlsafe base64", base64.urlsafe_b64encode)]


@pytest.mark.parametrize(
    ("case", "raw", "expected", "encode"),
    [
        (case, raw, expected, encode)
        for case, raw, expected in HIDDEN_IN_BASE64
        for _, encode in ENCODINGS
    ],
    ids=[f"{case} ({name})" for case, _, _ in HIDDEN_IN_BASE64 for name, _ in ENCODINGS],
)
def test_a_base64_text_not_aligned_on_a_token_is_masked(
    case: str, raw: bytes, expected: str, encode: Any
) -> None:
    value = encode(raw).decode()
    assert (redact_params({"q": value})["q"] == value) == (expected == KEPT), f"{case}: {expected}"


@pytest.mark.parametrize("before", ["a", "ab", "abc", "key_", "/data/"])
def test_a_word_before_a_base64_text_does_not_hide_its_token(before: str) -> None:
    """The word shifts the base64 text by one to three characters: decoded as it is, it is
    noise; read from where the base64 text starts, it is the token."""
    for raw, encode in [(TOKEN, base64.b64encode), ("x" + TOKEN, base64.urlsafe_b64encode)]:
        value = before + encode(raw.encode()).decode().rstrip("=")
        assert redact_params({"q": value})["q"] != value, MASKED
    for raw_bytes in [bytes(range(48)), b"nothing secret in this sentence at all"]:
        value = before + base64.b64encode(raw_bytes).decode()
        assert redact_params({"q": value})["q"] == value, KEPT


def test_a_param_named_session_id_is_masked_as_the_credential_it_is_on_the_web() -> None:
    """A web session's id logs its holder in (a cookie's `sessionid`): masked like a token,
    deliberately, though a reviewer then sees less."""
    shown = redact_params({"session_id": "s_8f2a", "sessionToken": "abc", "session": "morning"})
    assert shown["session_id"] != "s_8f2a" and shown["sessionToken"] != "abc"
    assert shown["session"] == "morning", KEPT  # a session of a conference is no secret


async def test_a_server_that_fails_to_start_does_not_print_its_secret(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    (tmp_path / ".env").write_text(f"API_TOKEN={DOTENV_SECRET}\n")
    failing = [
        StdioServer(command="no-such-program-x1", env={"API_TOKEN": "env://API_TOKEN"}),
        StdioServer(
            command=sys.executable,
            args=["-c", "import os, sys; print(os.environ, file=sys.stderr); sys.exit(3)"],
            env={"API_TOKEN": "env://API_TOKEN"},
        ),
    ]
    for server in failing:
        async with ToolHost({"s": server}, tmp_path) as host:
            [status] = host.statuses()
            assert status.state == "failed"
            assert DOTENV_SECRET not in (status.error or ""), MASKED
    assert caplog.records and DOTENV_SECRET not in caplog.text, MASKED  # nor in the log


def test_the_gateways_recorded_calls_mask_a_token_in_a_result(
    tmp_path: Path, foundry_home: Path
) -> None:
    """A real MCP client calls through the real gateway; the server answers with a token. What
    View > Gateway lists of the call (its result's start) shows the token masked."""
    from foundry.gateway.activity import gateway_clients
    from tests.gateway.test_gateway_stdio import gateway, upstream_agent

    agent = upstream_agent(tmp_path / "agent")
    long_prefix = "x" * 190  # the listed start of a result ends inside the token

    async def calls() -> None:
        async with gateway(agent, foundry_home) as client:
            await client.call_tool("up__say", {"text": f"deploy with {TOKEN}"})
            await client.call_tool("up__say", {"text": f"{long_prefix} {TOKEN}"})

    asyncio.run(calls())
    with Store.open() as store:
        [client] = gateway_clients(store)
    results = [call.result for call in client.calls]
    assert len(results) == 2 and all(results), "both calls answered"
    assert not any(TOKEN[:12] in result for result in results), MASKED
    assert "deploy with" in " ".join(results), KEPT
