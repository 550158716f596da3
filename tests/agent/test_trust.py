"""Trust: which commands an agent would run, remembered by their exact shape, and what escapes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from foundry.agent.document import read_agent
from foundry.agent.trust import TrustStore, UntrustedAgent, agent_commands
from foundry.home import shipped_path


def write_agent(root: Path, servers: dict[str, dict[str, object]]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    config = {"metadata": {"name": root.name}, "mcpServers": servers}
    (root / "tsagent.json").write_text(json.dumps(config))
    (root / "prompt.md").write_text("Test agent.")
    return root


MARKER_SERVER = {"type": "stdio", "command": "python", "args": ["-c", "print('hi')"]}


@pytest.fixture
def store(tmp_path: Path) -> TrustStore:
    return TrustStore(tmp_path / "trust.json")


def test_an_agent_with_commands_is_untrusted_until_granted(
    store: TrustStore, tmp_path: Path
) -> None:
    document = read_agent(write_agent(tmp_path / "a", {"run": MARKER_SERVER}))
    check = store.check(document)
    assert not check.trusted
    assert [c.display for c in check.untrusted] == ["run: python -c 'print('\"'\"'hi'\"'\"')'"]
    with pytest.raises(UntrustedAgent, match="foundry trust"):
        store.require(document)
    store.grant(document)
    assert store.check(document).trusted
    assert TrustStore(store.path).check(document).trusted  # remembered on disk


def test_an_agent_without_commands_or_connections_needs_no_trust(
    store: TrustStore, tmp_path: Path
) -> None:
    document = read_agent(write_agent(tmp_path / "a", {}))
    assert store.check(document).trusted


def test_an_http_server_is_trusted_by_its_url(store: TrustStore, tmp_path: Path) -> None:
    """An HTTP server runs nothing here, but the agent sends your conversation (and the secrets
    its headers name) to it: its URL is trusted as a command is."""
    http = {"type": "streamable-http", "url": "http://127.0.0.1:9/mcp"}
    document = read_agent(write_agent(tmp_path / "a", {"web": http}))
    assert agent_commands(document) == ()
    check = store.check(document)
    assert not check.trusted and check.untrusted_servers == ["web"]
    assert [c.display for c in check.untrusted] == ["web: connects to http://127.0.0.1:9/mcp"]
    store.grant(document)
    assert store.check(document).trusted


@pytest.mark.parametrize(
    "change",
    [
        {"args": ["-c", "print('other')"]},
        {"command": "python3"},
        {"cwd": "sub"},
        {"env": {"NEW_NAME": "x"}},
    ],
)
def test_a_changed_command_asks_again(
    store: TrustStore, tmp_path: Path, change: dict[str, object]
) -> None:
    root = write_agent(tmp_path / "a", {"run": MARKER_SERVER})
    store.grant(read_agent(root))
    write_agent(root, {"run": {**MARKER_SERVER, **change}})
    check = store.check(read_agent(root))
    assert not check.trusted and "changed or added" in check.reason


def test_an_added_server_asks_again_for_it_alone(store: TrustStore, tmp_path: Path) -> None:
    root = write_agent(tmp_path / "a", {"run": MARKER_SERVER})
    store.grant(read_agent(root))
    write_agent(root, {"run": MARKER_SERVER, "more": {"command": "sh", "args": ["-c", "id"]}})
    check = store.check(read_agent(root))
    assert [c.server for c in check.untrusted] == ["more"]


def test_env_values_do_not_matter_but_names_do(store: TrustStore, tmp_path: Path) -> None:
    root = write_agent(tmp_path / "a", {"run": {**MARKER_SERVER, "env": {"KEY": "one"}}})
    store.grant(read_agent(root))
    write_agent(root, {"run": {**MARKER_SERVER, "env": {"KEY": "env://OTHER"}}})
    assert store.check(read_agent(root)).trusted


def test_the_same_agent_by_another_name_is_the_same_entry(
    store: TrustStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write_agent(tmp_path / "a", {"run": MARKER_SERVER})
    store.grant(read_agent(root))
    link = tmp_path / "link"
    link.symlink_to(root)
    monkeypatch.chdir(tmp_path)
    assert store.check(read_agent(Path("link"))).trusted
    assert store.check(read_agent(Path("a/../a"))).trusted


def test_trusting_one_agent_does_not_trust_a_copy(store: TrustStore, tmp_path: Path) -> None:
    store.grant(read_agent(write_agent(tmp_path / "a", {"run": MARKER_SERVER})))
    copy = read_agent(write_agent(tmp_path / "b", {"run": MARKER_SERVER}))
    assert not store.check(copy).trusted


def test_a_grant_for_this_run_is_not_remembered(store: TrustStore, tmp_path: Path) -> None:
    document = read_agent(write_agent(tmp_path / "a", {"run": MARKER_SERVER}))
    store.grant(document, remember=False)
    assert store.check(document).trusted
    assert not TrustStore(store.path).check(document).trusted


def test_revoke_forgets_and_list_shows(store: TrustStore, tmp_path: Path) -> None:
    document = read_agent(write_agent(tmp_path / "a", {"run": MARKER_SERVER}))
    store.grant(document)
    [entry] = store.entries()
    assert entry.agent_path == str(document.path.resolve())
    assert list(entry.commands.values()) == [c.display for c in agent_commands(document)]
    assert store.revoke(tmp_path / "a")
    assert not store.check(document).trusted
    assert not store.revoke(tmp_path / "a")


@pytest.mark.parametrize("damage", ["{not json", '{"agents": 5}', "\udcff"])
def test_a_damaged_trust_file_trusts_nothing_and_says_so(
    store: TrustStore, tmp_path: Path, damage: str
) -> None:
    document = read_agent(write_agent(tmp_path / "a", {"run": MARKER_SERVER}))
    store.grant(document)
    store.path.write_bytes(damage.encode("utf-8", "surrogateescape"))
    check = store.check(document)
    assert not check.trusted and "damaged" in check.reason
    store.grant(document)  # trusting again replaces the damaged file
    assert store.check(document).trusted


def test_a_forged_entry_for_another_command_does_not_trust(
    store: TrustStore, tmp_path: Path
) -> None:
    document = read_agent(write_agent(tmp_path / "a", {"run": MARKER_SERVER}))
    forged = {
        "agents": {
            str(document.path.resolve()): {
                "agent_path": str(document.path.resolve()),
                "trusted_at": "2026-01-01T00:00:00Z",
                "commands": {"0" * 64: "run: python -c print('hi')"},
            }
        }
    }
    store.path.write_text(json.dumps(forged))
    assert not store.check(document).trusted


def test_shipped_agents_are_trusted(store: TrustStore) -> None:
    document = read_agent(shipped_path("agents", "assistant"))
    assert agent_commands(document)
    assert store.check(document).trusted
