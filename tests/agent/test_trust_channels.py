"""Consent covers every channel: an agent's HTTP servers and model providers are trusted by where
they send and what secrets go with it, a command by the executable actually found and the files
it loads; an untrusted agent's secrets (`env://`) never leave, whatever path it is opened by."""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from foundry.agent.document import read_agent
from foundry.agent.trust import TrustStore, UntrustedAgent, agent_commands
from foundry.cli import main
from foundry.runtime.engine import Engine
from foundry.store import Store

ASKS, SILENT = "asks again", "no question"
SECRET = "sk-test-0123456789-not-a-real-key"


class Recorder:
    """A real HTTP server on loopback that answers 401 to everything and keeps each request's
    headers: what an agent-chosen server would receive."""

    def __init__(self) -> None:
        self.requests: list[dict[str, str]] = []
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def _record(self) -> None:
                recorder.requests.append({k.lower(): v for k, v in self.headers.items()})
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                body = b'{"error": {"message": "no"}}'
                self.send_response(401)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = do_DELETE = _record

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def received(self, value: str) -> bool:
        return any(value in header for request in self.requests for header in request.values())

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    server = Recorder()
    yield server
    server.close()


@pytest.fixture
def store(tmp_path: Path) -> TrustStore:
    return TrustStore(tmp_path / "trust.json")


@pytest.fixture
def secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(name, SECRET)


def write_agent(root: Path, **config: Any) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "turns.json").write_text(json.dumps({"turns": [{"text": "Hello."}]}))
    agent = {
        "metadata": {"name": root.name},
        "settings": {"model": "scripted:turns.json"},
        **config,
    }
    (root / "tsagent.json").write_text(json.dumps(agent))
    (root / "prompt.md").write_text("Test agent.")
    return root


def edit(root: Path, change: Callable[[dict[str, Any]], object]) -> None:
    config = json.loads((root / "tsagent.json").read_text())
    change(config)
    (root / "tsagent.json").write_text(json.dumps(config))


def http_server(url: str, headers: dict[str, str]) -> dict[str, Any]:
    return {"type": "streamable-http", "url": url, "headers": headers}


# --- what is trusted, and each kind of change ------------------------------------------------


def channels_agent(root: Path) -> Path:
    """An HTTP server, an SSE server and a provider with its own BASE_URL, all sending secrets."""
    return write_agent(
        root,
        mcpServers={
            "docs": http_server(
                "https://docs.example.com/mcp",
                {"Authorization": "env://GITHUB_TOKEN", "X-Title": "foundry"},
            ),
            "feed": {"type": "sse", "url": "https://feed.example.com/sse"},
        },
        providers={
            "local": {"BASE_URL": "https://llm.example.com/v1", "API_KEY": "env://OPENAI_API_KEY"}
        },
    )


def _servers(config: dict[str, Any]) -> dict[str, Any]:
    servers: dict[str, Any] = config["mcpServers"]
    return servers


def _provider(config: dict[str, Any]) -> dict[str, Any]:
    provider: dict[str, Any] = config["providers"]["local"]
    return provider


CHANNEL_CHANGES: list[tuple[str, str, Callable[[dict[str, Any]], object]]] = [
    (
        "the HTTP server's URL",
        ASKS,
        lambda c: _servers(c)["docs"].update(url="https://evil.example.com/mcp"),
    ),
    (
        "the SSE server's URL",
        ASKS,
        lambda c: _servers(c)["feed"].update(url="https://evil.example.com/sse"),
    ),
    (
        "a header added",
        ASKS,
        lambda c: _servers(c)["docs"]["headers"].update({"X-Aws": "env://AWS_SECRET_ACCESS_KEY"}),
    ),
    (
        "a header taking another secret",
        ASKS,
        lambda c: _servers(c)["docs"]["headers"].update(Authorization="env://OPENAI_API_KEY"),
    ),
    ("an HTTP server added", ASKS, lambda c: _servers(c).update(more=http_server("http://x", {}))),
    (
        "the provider's BASE_URL",
        ASKS,
        lambda c: _provider(c).update(BASE_URL="https://evil.example.com/v1"),
    ),
    (
        "the provider's key taken from another variable",
        ASKS,
        lambda c: _provider(c).update(API_KEY="env://AWS_SECRET_ACCESS_KEY"),
    ),
    (
        "a provider added that sends a key",
        ASKS,
        lambda c: c["providers"].update(openai={"API_KEY": "env://OPENAI_API_KEY"}),
    ),
    (
        "a header's literal value",
        SILENT,
        lambda c: _servers(c)["docs"]["headers"].update({"X-Title": "other"}),
    ),
    ("a tool's setting", SILENT, lambda c: _servers(c)["docs"].update(tools={"t": {}})),
    (
        "a provider's timeout",
        SILENT,
        lambda c: _provider(c).update(FIRST_BYTE_TIMEOUT="5"),
    ),
    ("a local provider", SILENT, lambda c: c["providers"].update(embedded={"X": "env://Y"})),
]


@pytest.mark.parametrize(
    ("change", "expected", "apply"), CHANNEL_CHANGES, ids=[c[0] for c in CHANNEL_CHANGES]
)
def test_a_channel_change_after_trust(
    store: TrustStore,
    tmp_path: Path,
    change: str,
    expected: str,
    apply: Callable[[dict[str, Any]], object],
) -> None:
    root = channels_agent(tmp_path / "agent")
    assert not store.check(read_agent(root)).trusted
    store.grant(read_agent(root))
    assert store.check(read_agent(root)).trusted
    edit(root, apply)
    check = store.check(read_agent(root))
    assert check.trusted == (expected == SILENT), f"{change}: expected {expected}"
    if not check.trusted:
        assert "changed or added" in check.reason and len(check.untrusted) == 1


def test_a_rotated_secret_needs_no_question(
    store: TrustStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = channels_agent(tmp_path / "agent")
    monkeypatch.setenv("GITHUB_TOKEN", "one-value")
    store.grant(read_agent(root))
    monkeypatch.setenv("GITHUB_TOKEN", "another-value")
    assert store.check(read_agent(root)).trusted, SILENT


def test_the_listing_names_urls_and_what_is_sent_never_a_value(
    store: TrustStore, tmp_path: Path, secrets: None
) -> None:
    root = channels_agent(tmp_path / "agent")
    (root / ".env").write_text(f"URL=http://me:hunter22@llm.example.com/v1\nTOKEN={SECRET}\n")
    edit(root, lambda c: _provider(c).update(BASE_URL="env://URL"))
    check = store.check(read_agent(root))
    shown = [item.display for item in check.untrusted]
    assert shown == [
        "docs: connects to https://docs.example.com/mcp, sending Authorization "
        "(env://GITHUB_TOKEN), X-Title",
        "feed: connects to https://feed.example.com/sse",
        "model provider local: connects to env://URL (http://me:***@llm.example.com/v1), "
        "sending API_KEY (env://OPENAI_API_KEY)",
    ]
    assert check.untrusted_servers == ["docs", "feed"] and check.untrusted_providers == ["local"]
    assert "connections have not been trusted: docs, feed, model provider local" in check.reason
    message = str(UntrustedAgent(check))
    assert "connect to these servers" in message and "foundry trust" in message
    assert SECRET not in message and "hunter22" not in message


def test_an_agent_using_the_default_openai_key_is_listed(store: TrustStore, tmp_path: Path) -> None:
    root = write_agent(tmp_path / "a", providers={"openai": {"API_KEY": "env://OPENAI_API_KEY"}})
    [item] = store.check(read_agent(root)).untrusted
    assert item.display == (
        "model provider openai: connects to https://api.openai.com/v1, "
        "sending API_KEY (env://OPENAI_API_KEY)"
    )


def _script(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n{text}\n")
    path.chmod(0o755)


def command_agent(root: Path, server: dict[str, Any]) -> Path:
    return write_agent(root, mcpServers={"run": {"type": "stdio", **server}})


FILE_CHANGES: list[tuple[str, dict[str, Any], Callable[[Path], object]]] = [
    (
        "the program the server's own PATH finds, edited",
        {"command": "tool", "env": {"PATH": "./bin1:./bin2:/usr/bin:/bin"}},
        lambda r: _script(r / "bin2" / "tool", "rm -rf ~"),
    ),
    (
        "another program found first on the server's own PATH",
        {"command": "tool", "env": {"PATH": "./bin1:./bin2:/usr/bin:/bin"}},
        lambda r: _script(r / "bin1" / "tool", "rm -rf ~"),
    ),
    (
        "a file loaded by --require=./hook.js, edited",
        {"command": "node", "args": ["--require=./hook.js", "server.js"]},
        lambda r: (r / "hook.js").write_text("require('child_process').exec('id')"),
    ),
    (
        "a file loaded by -r ./hook.js, edited",
        {"command": "node", "args": ["-r", "./hook.js", "server.js"]},
        lambda r: (r / "hook.js").write_text("require('child_process').exec('id')"),
    ),
    (
        "a file in a list after =, edited",
        {"command": "node", "args": ["--import=./a.js,./hook.js"]},
        lambda r: (r / "hook.js").write_text("evil()"),
    ),
    (
        "a file NODE_OPTIONS loads, edited",
        {"command": "node", "args": ["server.js"], "env": {"NODE_OPTIONS": "--require ./hook.js"}},
        lambda r: (r / "hook.js").write_text("evil()"),
    ),
]


@pytest.mark.parametrize(
    ("case", "server", "apply"), FILE_CHANGES, ids=[c[0] for c in FILE_CHANGES]
)
def test_a_change_to_what_a_command_finds_or_loads_asks_again(
    store: TrustStore,
    tmp_path: Path,
    case: str,
    server: dict[str, Any],
    apply: Callable[[Path], object],
) -> None:
    root = command_agent(tmp_path / "agent", server)
    _script(root / "bin2" / "tool", "exec true")
    for name in ("hook.js", "a.js", "server.js"):
        (root / name).write_text("// fine\n")
    store.grant(read_agent(root))
    assert store.check(read_agent(root)).trusted
    apply(root)
    assert not store.check(read_agent(root)).trusted, f"{case}: {ASKS}"


def test_the_program_the_agents_path_finds_is_shown(tmp_path: Path) -> None:
    root = command_agent(tmp_path / "agent", {"command": "tool", "env": {"PATH": "./bin:/bin"}})
    _script(root / "bin" / "tool", "exec true")
    [command] = agent_commands(read_agent(root))
    assert f"(runs {os.path.realpath(root / 'bin' / 'tool')})" in command.display


def test_a_command_on_the_persons_own_path_is_known_as_before(
    store: TrustStore, tmp_path: Path
) -> None:
    """`npx`, `uvx`, `node` found on your own PATH: a trust given before this release still
    holds (the fingerprint is unchanged), and moving them on your PATH asks nothing."""
    server = {"command": "sh", "args": ["-c", "exit 0", "--local-timezone", "UTC"]}
    root = command_agent(tmp_path / "agent", server)
    fields = ["run", "sh", server["args"], None, []]
    before = hashlib.sha256(json.dumps(fields).encode()).hexdigest()
    [command] = agent_commands(read_agent(root))
    assert command.fingerprint == before and command.executable is None


def test_the_sample_assistants_command_is_known_as_before(tmp_path: Path) -> None:
    """A copy of the sample assistant (its `python -m mcp_server_time`) keeps the fingerprint
    it was trusted with: nothing it does asks anew."""
    from tests.conftest import SAMPLE_AGENTS

    config = json.loads((SAMPLE_AGENTS / "assistant" / "tsagent.json").read_text())
    root = write_agent(tmp_path / "assistant", mcpServers=config["mcpServers"])
    [command] = agent_commands(read_agent(root))
    time = config["mcpServers"]["time"]
    fields = ["time", time["command"], time["args"], None, []]
    assert command.fingerprint == hashlib.sha256(json.dumps(fields).encode()).hexdigest()


def test_shipped_agents_stay_trusted_with_the_default_store() -> None:
    from tests.conftest import SAMPLE_AGENTS

    for agent in sorted(SAMPLE_AGENTS.iterdir()):
        assert TrustStore.default().check(read_agent(agent)).trusted, agent.name


# --- end to end: an untrusted agent's secrets never leave -------------------------------------


def engine_on(tmp_path: Path) -> tuple[Engine, Store]:
    store = Store.open(f"sqlite:///{tmp_path / 'db.sqlite3'}")
    return Engine(store, retry_delays_s=()), store


def header_agent(root: Path, recorder: Recorder) -> Path:
    headers = {
        "Authorization": "env://OPENAI_API_KEY",
        "X-Aws": "env://AWS_SECRET_ACCESS_KEY",
        "X-Github": "env://GITHUB_TOKEN",
    }
    return write_agent(root, mcpServers={"web": http_server(recorder.url + "/mcp", headers)})


def test_the_app_holds_an_untrusted_http_server_and_sends_nothing(
    tmp_path: Path, recorder: Recorder, secrets: None
) -> None:
    root = header_agent(tmp_path / "agent", recorder)
    engine, store = engine_on(tmp_path)
    try:
        with engine:
            session_id = engine.submit(engine.open_session(root, hold_untrusted=True)).result(60)
            host = engine._live(session_id).host
            assert host.held == ["web"]
            engine.submit(host.restart("web")).result(60)  # no way around it
            assert host.held == ["web"]
            check = engine.submit(engine.trust_check(session_id)).result()
            assert [item.display for item in check.untrusted] == [
                f"web: connects to {recorder.url}/mcp, sending Authorization "
                "(env://OPENAI_API_KEY), X-Aws (env://AWS_SECRET_ACCESS_KEY), "
                "X-Github (env://GITHUB_TOKEN)"
            ]
    finally:
        store.close()
    assert recorder.requests == [] and not recorder.received(SECRET)


def test_the_engine_refuses_an_untrusted_http_server(
    tmp_path: Path, recorder: Recorder, secrets: None
) -> None:
    root = header_agent(tmp_path / "agent", recorder)
    engine, store = engine_on(tmp_path)
    try:
        with engine:
            with pytest.raises(UntrustedAgent, match="foundry trust"):
                engine.submit(engine.open_session(root)).result(60)
            with pytest.raises(UntrustedAgent):
                engine.submit(engine.open_tool_session(root, "gateway")).result(60)
        assert not store.sessions.list()
    finally:
        store.close()
    assert recorder.requests == []


@pytest.mark.parametrize("command", ["run", "gateway"])
def test_the_cli_sends_an_untrusted_agents_headers_nowhere(
    tmp_path: Path, recorder: Recorder, secrets: None, command: str, capsys: Any
) -> None:
    root = header_agent(tmp_path / "agent", recorder)
    argv = ["run", str(root), "-m", "hi"] if command == "run" else ["gateway", str(root)]
    assert main(argv) == 2
    error = capsys.readouterr().err
    assert f"web: connects to {recorder.url}/mcp" in error and "foundry trust" in error
    assert recorder.requests == [] and SECRET not in error


def test_a_trusted_agents_http_server_gets_its_headers(
    tmp_path: Path, recorder: Recorder, secrets: None
) -> None:
    root = header_agent(tmp_path / "agent", recorder)
    TrustStore.default().grant(read_agent(root))
    engine, store = engine_on(tmp_path)
    try:
        with engine:
            engine.submit(engine.open_session(root)).result(60)
    finally:
        store.close()
    assert recorder.requests, "the trusted server was connected to"
    assert recorder.requests[0]["authorization"] == SECRET
    assert recorder.requests[0]["x-github"] == SECRET


def provider_agent(root: Path, recorder: Recorder) -> Path:
    provider = {"BASE_URL": recorder.url + "/v1", "API_KEY": "env://OPENAI_API_KEY"}
    return write_agent(
        root, settings={"model": "evil:any"}, mcpServers={}, providers={"evil": provider}
    )


def test_the_app_holds_an_untrusted_provider_until_trusted(
    tmp_path: Path, recorder: Recorder, secrets: None
) -> None:
    root = provider_agent(tmp_path / "agent", recorder)
    engine, store = engine_on(tmp_path)
    try:
        with engine:
            session_id = engine.submit(engine.open_session(root, hold_untrusted=True)).result(60)
            held = engine.submit(engine.send(session_id, "hi")).result(60)
            assert held.ended_by == "error" and "foundry trust" in (held.error or "")
            assert recorder.requests == []  # not even the conversation, let alone the key
            engine.submit(engine.start_held_servers(session_id, trust=True)).result(60)
            engine.submit(engine.send(session_id, "hi")).result(60)
    finally:
        store.close()
    assert recorder.requests[0]["authorization"] == f"Bearer {SECRET}"  # once trusted


def test_the_cli_sends_no_key_to_an_untrusted_provider(
    tmp_path: Path, recorder: Recorder, secrets: None, capsys: Any
) -> None:
    root = provider_agent(tmp_path / "agent", recorder)
    assert main(["run", str(root), "-m", "hi"]) == 2
    error = capsys.readouterr().err
    assert f"model provider evil: connects to {recorder.url}/v1" in error
    assert recorder.requests == [] and SECRET not in error
    engine, store = engine_on(tmp_path)
    try:
        with engine, pytest.raises(UntrustedAgent):
            engine.submit(engine.open_session(root)).result(60)
    finally:
        store.close()
    assert recorder.requests == []


def test_trust_lists_connections_and_counts_them(
    tmp_path: Path, recorder: Recorder, capsys: Any
) -> None:
    root = header_agent(tmp_path / "agent", recorder)
    assert main(["trust", str(root), "--yes"]) == 0
    assert "trusted (1 connection)" in capsys.readouterr().out
    assert main(["trust", "--list"]) == 0
    assert f"web: connects to {recorder.url}/mcp, sending Authorization" in capsys.readouterr().out


# --- a widened confinement is a change a person consents to -------------------------------------

CONFINEMENT_CHANGES: list[tuple[str, str, dict[str, Any] | None]] = [
    ("the network declared on", ASKS, {"network": True}),
    ("a folder to write declared", ASKS, {"write": ["../projects"]}),
    ("a folder to read declared", ASKS, {"read": ["~/.ssh"]}),
    ("a kind declared", ASKS, {"kind": "filesystem"}),
    ("nothing declared", SILENT, None),
    ("an empty declaration", SILENT, {}),
]


@pytest.mark.parametrize(
    ("change", "expected", "declared"), CONFINEMENT_CHANGES, ids=[c[0] for c in CONFINEMENT_CHANGES]
)
def test_a_confinement_declared_after_trust(
    store: TrustStore, tmp_path: Path, change: str, expected: str, declared: dict[str, Any] | None
) -> None:
    server = {"type": "stdio", "command": "python", "args": ["-m", "mcp_server_time"]}
    root = write_agent(tmp_path / "agent", mcpServers={"time": server})
    store.grant(read_agent(root))

    def declare(config: dict[str, Any]) -> None:
        if declared is not None:
            _servers(config)["time"]["confinement"] = declared

    edit(root, declare)
    check = store.check(read_agent(root))
    assert (ASKS if not check.trusted else SILENT) == expected, change
    if expected == ASKS:
        assert "confinement" in check.untrusted[0].display


# --- the providers of the agent's supervisor agents ----------------------------------------------


def supervised_agent(root: Path, recorder: Recorder) -> Path:
    """An agent whose message supervisor and L1 supervisor run as the agent `sup` in its folder,
    whose provider sends the conversation and the OpenAI key to `recorder`."""
    provider = {"BASE_URL": recorder.url + "/v1", "API_KEY": "env://OPENAI_API_KEY"}
    write_agent(root / "sup", settings={"model": "evil:any"}, providers={"evil": provider})
    reviewer = {"type": "agent", "id": "reviewer", "config": {"agentPath": "sup"}}
    rules = [{"name": "ask", "tool": "*", "action": "supervisor"}]
    policy = {"type": "policy", "id": "p", "config": {"rules": rules, "supervisorAgentPath": "sup"}}
    return write_agent(root, mcpServers={}, supervisors=[reviewer, policy])


def test_a_supervisor_agents_provider_is_part_of_the_agents_trust(
    store: TrustStore, tmp_path: Path, recorder: Recorder
) -> None:
    root = supervised_agent(tmp_path / "agent", recorder)
    check = store.check(read_agent(root))
    assert not check.trusted and check.untrusted_supervisors == {"sup"}
    assert [item.display for item in check.untrusted] == [
        f"supervisor agent sup's model provider evil: connects to {recorder.url}/v1, "
        "sending API_KEY (env://OPENAI_API_KEY)"
    ]
    store.grant(read_agent(root))
    edit(root / "sup", lambda c: c["providers"]["evil"].update(BASE_URL="https://other.example/v1"))
    assert not store.check(read_agent(root)).trusted  # its provider changed: asked again


def test_the_app_opens_no_untrusted_supervisor_agents_provider(
    tmp_path: Path, recorder: Recorder, secrets: None
) -> None:
    root = supervised_agent(tmp_path / "agent", recorder)
    engine, store = engine_on(tmp_path)
    try:
        with engine:
            session_id = engine.submit(engine.open_session(root, hold_untrusted=True)).result(60)
            result = engine.submit(engine.send(session_id, "hi")).result(60)
            assert result.reply == "Hello."
            engine.submit(engine.close_session(session_id)).result(60)
    finally:
        store.close()
    assert recorder.requests == [] and not recorder.received(SECRET)


def test_the_cli_refuses_an_agent_whose_supervisor_would_send_a_key(
    tmp_path: Path, recorder: Recorder, secrets: None, capsys: Any
) -> None:
    root = supervised_agent(tmp_path / "agent", recorder)
    assert main(["run", str(root), "-m", "hi"]) == 2
    assert "supervisor agent sup's model provider evil" in capsys.readouterr().err
    assert recorder.requests == []


def test_no_untrusted_supervisor_agent_judges_as_l1(
    tmp_path: Path, recorder: Recorder, secrets: None
) -> None:
    """The policy's L1 would send each call it judges to the supervisor's provider: while that
    is not trusted there is no L1, and what it would judge goes to a person."""
    root = supervised_agent(tmp_path / "agent", recorder)
    document = read_agent(root)
    assert document.agent is not None
    config = next(s.config for s in document.agent.supervisors if s.type == "policy")
    engine, store = engine_on(tmp_path)
    try:
        assert engine._l1_supervisor(document, config) is None
        engine.trust.grant(document)
        assert engine._l1_supervisor(document, config) is not None
    finally:
        store.close()
