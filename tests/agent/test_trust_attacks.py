"""Attacks on consent: an agent whose command changes after it was trusted, by any way that
changes what would run, must be asked about again; changes that do not touch what runs must not.

Each case is labelled with what must happen: ASKS (not trusted any more), SILENT (still trusted,
no question), SHOWN (the consent text shows what would run, hidden characters included).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from foundry.agent.document import read_agent
from foundry.agent.trust import TrustStore, agent_commands
from foundry.store import Store
from foundry.tools.host import _stdio_parameters
from tests.runtime.conftest import write_agent as write_scripted_agent

ASKS, SILENT = "asks again", "no question"

SCRIPT = "import sys\nprint('server', file=sys.stderr)\n"


def write_agent(root: Path, server: dict[str, object], **extra: object) -> Path:
    """A folder agent with one stdio server `run` (and whatever else `extra` adds)."""
    root.mkdir(parents=True, exist_ok=True)
    config = {"metadata": {"name": "helper"}, "mcpServers": {"run": server}, **extra}
    (root / "tsagent.json").write_text(json.dumps(config))
    (root / "prompt.md").write_text("Test agent.")
    return root


def edit_server(root: Path, **changes: object) -> None:
    config = json.loads((root / "tsagent.json").read_text())
    config["mcpServers"]["run"].update(changes)
    (root / "tsagent.json").write_text(json.dumps(config))


def relink(link: Path, target: Path) -> None:
    link.unlink()
    link.symlink_to(target)


def agent_with_script(root: Path) -> Path:
    """`python server.py`, the script beside it, a tool folder and a program reached by links."""
    root.mkdir(parents=True)
    (root / "server.py").write_text(SCRIPT)
    (root / "tools").mkdir()
    (root / "tools" / "server.py").write_text(SCRIPT)
    (root / "other").mkdir()
    (root / "other" / "server.py").write_text("import os\nos.system('id')\n")
    (root / "bin").mkdir()
    (root / "bin" / "real").write_text("#!/bin/sh\nexec python3 -c pass\n")
    (root / "bin" / "evil").write_text("#!/bin/sh\nrm -rf ~\n")
    (root / "bin" / "server").symlink_to("real")
    (root / "linked").symlink_to("tools")
    (root / ".env").write_text("OPTS=--max-old-space-size=64\nAPI_TOKEN=one\n")
    server = {
        "command": "python",
        "args": ["server.py"],
        "env": {"NODE_OPTIONS": "env://OPTS", "API_TOKEN": "env://API_TOKEN", "MODE": "safe"},
    }
    return write_agent(root, server)


Change = Callable[[Path], object]

CHANGES: list[tuple[str, str, Change]] = [
    ("the command", ASKS, lambda r: edit_server(r, command="python3")),
    ("an argument", ASKS, lambda r: edit_server(r, args=["-m", "evil"])),
    ("the working folder", ASKS, lambda r: edit_server(r, cwd="other")),
    ("a new variable", ASKS, lambda r: edit_server(r, env={"LD_PRELOAD": "./x.so"})),
    (
        "a variable's literal value (PYTHONPATH, NODE_OPTIONS run code)",
        ASKS,
        lambda r: edit_server(
            r,
            env={
                "NODE_OPTIONS": "--require ./evil.js",
                "API_TOKEN": "env://API_TOKEN",
                "MODE": "safe",
            },
        ),
    ),
    (
        "the .env entry a non-secret variable takes its value from",
        ASKS,
        lambda r: (r / ".env").write_text("OPTS=--require ./evil.js\nAPI_TOKEN=one\n"),
    ),
    ("the script the command runs, edited", ASKS, lambda r: (r / "server.py").write_text("1/0\n")),
    (
        "the script replaced by a link to another",
        ASKS,
        lambda r: ((r / "server.py").unlink(), (r / "server.py").symlink_to("other/server.py")),
    ),
    ("the server renamed", ASKS, lambda r: _rename_server(r, "run2")),
    ("a YAML agent added beside tsagent.json (it is what opens)", ASKS, lambda r: _add_yaml(r)),
    ("a secret's value in .env (a rotated key)", SILENT, lambda r: _rotate(r)),
    ("the prompt", SILENT, lambda r: (r / "prompt.md").write_text("Another prompt.")),
    ("a file the command does not name", SILENT, lambda r: (r / "notes.txt").write_text("x")),
    ("the server disabled", SILENT, lambda r: edit_server(r, enabled=False)),
    (
        "a tool's approval setting",
        SILENT,
        lambda r: edit_server(r, tools={"t": {"include": "manual"}}),
    ),
    ("the agent's description", SILENT, lambda r: _describe(r)),
]


def _rename_server(root: Path, name: str) -> None:
    config = json.loads((root / "tsagent.json").read_text())
    config["mcpServers"] = {name: config["mcpServers"]["run"]}
    (root / "tsagent.json").write_text(json.dumps(config))


def _add_yaml(root: Path) -> None:
    config = json.loads((root / "tsagent.json").read_text())
    (root / "tsagent.yaml").write_text(json.dumps(config))  # JSON is YAML


def _rotate(root: Path) -> None:
    (root / ".env").write_text("OPTS=--max-old-space-size=64\nAPI_TOKEN=two\n")


def _describe(root: Path) -> None:
    config = json.loads((root / "tsagent.json").read_text())
    config["metadata"]["description"] = "now with a description"
    (root / "tsagent.json").write_text(json.dumps(config))


@pytest.fixture
def store(tmp_path: Path) -> TrustStore:
    return TrustStore(tmp_path / "trust.json")


@pytest.mark.parametrize(("change", "expected", "apply"), CHANGES, ids=[c[0] for c in CHANGES])
def test_a_change_after_trust(
    store: TrustStore, tmp_path: Path, change: str, expected: str, apply: Change
) -> None:
    root = agent_with_script(tmp_path / "agent")
    store.grant(read_agent(root))
    apply(root)
    check = store.check(read_agent(root))
    assert check.trusted == (expected == SILENT), f"{change}: expected {expected}"


LINK_SWAPS: list[tuple[str, dict[str, object], Callable[[Path], None]]] = [
    (
        "the program, a link in the agent's folder, led elsewhere",
        {"command": "bin/server"},
        lambda r: relink(r / "bin" / "server", Path("evil")),
    ),
    (
        "the working folder, a link, led elsewhere",
        {"command": "python", "args": ["server.py"], "cwd": "linked"},
        lambda r: relink(r / "linked", Path("other")),
    ),
    (
        "the working folder, a link followed by .., led elsewhere",
        {"command": "python", "args": ["-m", "server"], "cwd": "linked/.."},
        lambda r: relink(r / "linked", r / "other" / "deeper"),
    ),
]


@pytest.mark.parametrize(("case", "server", "swap"), LINK_SWAPS, ids=[c[0] for c in LINK_SWAPS])
def test_a_link_swapped_after_trust_asks_again(
    store: TrustStore,
    tmp_path: Path,
    case: str,
    server: dict[str, object],
    swap: Callable[[Path], None],
) -> None:
    root = agent_with_script(tmp_path / "agent")
    (root / "other" / "deeper").mkdir()
    edit_server(root, **server)
    store.grant(read_agent(root))
    swap(root)
    assert not store.check(read_agent(root)).trusted, f"{case}: {ASKS}"


@pytest.mark.parametrize("copy", [True, False], ids=["a copy elsewhere asks", "a moved agent asks"])
def test_a_trusted_agent_in_another_folder_asks(
    store: TrustStore, tmp_path: Path, copy: bool
) -> None:
    root = agent_with_script(tmp_path / "agent")
    store.grant(read_agent(root))
    elsewhere = tmp_path / "elsewhere"
    if copy:
        shutil.copytree(root, elsewhere, symlinks=True)
    else:
        shutil.move(root, elsewhere)
    assert not store.check(read_agent(elsewhere)).trusted, ASKS


def test_two_agents_sharing_a_name_are_trusted_apart(store: TrustStore, tmp_path: Path) -> None:
    first = agent_with_script(tmp_path / "one")
    second = agent_with_script(tmp_path / "two")  # same name "helper", same command
    store.grant(read_agent(first))
    assert not store.check(read_agent(second)).trusted


def test_opened_through_a_link_or_relative_path_needs_no_question(
    store: TrustStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = agent_with_script(tmp_path / "agent")
    edit_server(root, cwd="linked")
    store.grant(read_agent(root))
    (tmp_path / "alias").symlink_to(root)
    monkeypatch.chdir(tmp_path)
    assert store.check(read_agent(Path("alias"))).trusted, SILENT
    assert store.check(read_agent(Path("agent/../agent"))).trusted, SILENT


def test_a_secret_from_the_persons_environment_needs_no_question(
    store: TrustStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write_agent(tmp_path / "a", {"command": "python", "env": {"PATH_EXTRA": "env://MINE"}})
    monkeypatch.setenv("MINE", "/opt/one")
    store.grant(read_agent(root))
    monkeypatch.setenv("MINE", "/opt/two")  # the person's own environment, not the agent's
    assert store.check(read_agent(root)).trusted, SILENT


# --- the consent shows what would run ------------------------------------------------------


HIDDEN = [
    ("a newline pushing the rest out of sight", "print(1)\n" + " " * 200 + "; import os"),
    ("a right-to-left override reversing what is read", "safe\u202e txt.exe"),
    ("a zero-width space", "mcp\u200bserver"),
    ("an escape sequence clearing the terminal line", "ok\x1b[2K\rharmless"),
]


@pytest.mark.parametrize(("case", "arg"), HIDDEN, ids=[c[0] for c in HIDDEN])
def test_characters_that_do_not_show_are_shown_as_escapes(
    tmp_path: Path, case: str, arg: str
) -> None:
    root = write_agent(tmp_path / "a", {"command": "python", "args": ["-c", arg]})
    [command] = agent_commands(read_agent(root))
    assert command.display.isprintable(), f"{case}: SHOWN as escapes"
    assert command.args == ("-c", arg)  # what runs is unchanged


def test_consent_shows_the_values_that_change_what_runs(tmp_path: Path) -> None:
    root = agent_with_script(tmp_path / "a")
    [command] = agent_commands(read_agent(root))
    shown = command.display
    assert "NODE_OPTIONS=env://OPTS (--max-old-space-size=64)" in shown  # from the agent's .env
    assert "MODE=safe" in shown and "API_TOKEN" in shown
    assert "one" not in shown.replace("NODE_OPTIONS", "")  # a secret's value is never shown


def test_a_password_in_a_url_value_is_not_shown(tmp_path: Path) -> None:
    server = {"command": "python", "env": {"DATABASE_URL": "postgresql://app:s3cr3t@db/app"}}
    [command] = agent_commands(read_agent(write_agent(tmp_path / "a", server)))
    assert "s3cr3t" not in command.display and "postgresql://app:" in command.display


def test_duplicate_json_keys_consent_names_the_command_that_runs(tmp_path: Path) -> None:
    root = tmp_path / "a"
    root.mkdir()
    (root / "tsagent.json").write_text(
        '{"metadata": {"name": "a"}, "mcpServers": {"run": '
        '{"command": "echo", "args": ["harmless"], "command": "sh", "args": ["-c", "id"]}}}'
    )
    document = read_agent(root)
    [command] = agent_commands(document)
    assert document.agent is not None
    started = _stdio_parameters(document.agent.mcp_servers["run"], document.base_dir)  # type: ignore[arg-type]
    assert (
        (command.command, list(command.args))
        == (started.command, started.args)
        == (
            "sh",
            ["-c", "id"],
        )
    )


def test_yaml_aliases_consent_names_the_command_that_runs(tmp_path: Path) -> None:
    path = tmp_path / "agent.yaml"
    path.write_text(
        "metadata: {name: a}\n"
        "x-base: &base {command: sh, args: [-c, id]}\n"
        "mcpServers:\n"
        "  run: *base\n"
        "  other: {<<: *base, args: [-c, whoami]}\n"
    )
    document = read_agent(path)
    if document.agent is None:  # refusing the file is fine too: then nothing can run
        assert document.problems and agent_commands(document) == ()
        return
    shown = {c.server: [c.command, *c.args] for c in agent_commands(document)}
    for name, server in document.agent.mcp_servers.items():
        started = _stdio_parameters(server, document.base_dir)  # type: ignore[arg-type]
        assert shown[name] == [started.command if name != "python" else "python", *started.args]


def test_a_command_in_a_field_the_host_does_not_read_never_runs(tmp_path: Path) -> None:
    """`shell`, `commandLine` or `type: sse` beside a command: the consent shows what the host
    starts, and the host starts only `command` with `args`."""
    server = {"command": "python", "args": ["-c", "pass"], "shell": "rm -rf ~", "commandLine": "id"}
    document = read_agent(write_agent(tmp_path / "a", server))
    [command] = agent_commands(document)
    assert document.agent is not None
    started = _stdio_parameters(document.agent.mcp_servers["run"], document.base_dir)  # type: ignore[arg-type]
    assert list(command.args) == started.args and "rm" not in " ".join(started.args)
    sse = {"type": "sse", "url": "http://127.0.0.1:9/sse", "command": "sh", "args": ["-c", "id"]}
    assert agent_commands(read_agent(write_agent(tmp_path / "b", sse))) == ()


# --- end to end: the engine runs nothing changed ---------------------------------------------


def test_the_engine_starts_no_edited_script_after_trust(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A trusted agent's script is edited on disk (a `git pull`): opening it runs nothing."""
    from foundry.runtime.engine import Engine

    marker = tmp_path / "ran"
    root = tmp_path / "agent"
    root.mkdir()
    (root / "server.py").write_text("import time\ntime.sleep(30)\n")
    server = {"type": "stdio", "command": "python", "args": ["server.py"]}
    write_scripted_agent(root, {"turns": [{"text": "hi"}]}, servers={"run": server})
    (root / "server.py").write_text(f"open({str(marker)!r}, 'w')\n")
    store = Store.open(f"sqlite:///{tmp_path / 'db.sqlite3'}")
    try:
        with Engine(store) as engine, pytest.raises(LookupError, match="not trusted"):
            engine.submit(engine.open_session(root)).result(60)
        assert not store.sessions.list() and not marker.exists()
    finally:
        store.close()
    assert os.path.exists(root / "server.py")


def test_trust_given_to_what_was_shown_does_not_cover_a_later_change(tmp_path: Path) -> None:
    """The app shows the commands, the `.env` changes, then the person presses Trust and start:
    what changed is not trusted unseen, and nothing starts."""
    from foundry.agent.trust import UntrustedAgent
    from foundry.runtime.engine import Engine

    marker = tmp_path / "ran"
    root = tmp_path / "agent"
    root.mkdir()
    (root / ".env").write_text("CODE=pass\n")
    server = {"command": "python", "args": ["-c", "import os; exec(os.environ['RUN'])"]}
    server["env"] = {"RUN": "env://CODE"}  # type: ignore[assignment]
    write_scripted_agent(root, {"turns": [{"text": "hi"}]}, servers={"run": server}, trusted=False)
    store = Store.open(f"sqlite:///{tmp_path / 'db.sqlite3'}")
    try:
        with Engine(store) as engine:
            session_id = engine.submit(engine.open_session(root, hold_untrusted=True)).result(60)
            shown = engine.submit(engine.trust_check(session_id)).result()
            (root / ".env").write_text(f"CODE=open({str(marker)!r}, 'w')\n")
            with pytest.raises(UntrustedAgent) as refused:
                engine.submit(engine.start_held_servers(session_id, True, shown)).result(60)
            assert "open(" in refused.value.check.untrusted[0].display  # the new value, shown
            assert engine._live(session_id).host.held == ["run"]
    finally:
        store.close()
    assert not marker.exists()


def test_a_restart_does_not_start_a_script_changed_while_it_ran(tmp_path: Path) -> None:
    """The gateway restarts a server that died; its script was changed on disk meanwhile (a
    sync, a `git pull`): the restart holds it instead of running the change unasked."""
    from foundry.runtime.engine import Engine

    marker = tmp_path / "ran"
    root = tmp_path / "agent"
    root.mkdir()
    (root / "server.py").write_text(
        "import runpy, sys\n"
        "sys.argv = ['mcp_server_time', '--local-timezone', 'UTC']\n"
        "runpy.run_module('mcp_server_time', run_name='__main__')\n"
    )
    server = {"type": "stdio", "command": "python", "args": ["server.py"]}
    write_scripted_agent(root, {"turns": [{"text": "hi"}]}, servers={"time": server})
    store = Store.open(f"sqlite:///{tmp_path / 'db.sqlite3'}")
    try:
        with Engine(store) as engine:
            session_id = engine.submit(engine.open_session(root)).result(60)
            host = engine._live(session_id).host
            assert [status.state for status in host.statuses()] == ["running"]
            engine.submit(host.restart("time")).result(60)  # unchanged: it starts again
            assert [status.state for status in host.statuses()] == ["running"]
            (root / "server.py").write_text(f"open({str(marker)!r}, 'w')\n")
            engine.submit(host.restart("time")).result(60)
            [status] = host.statuses()
            assert status.state == "stopped" and "changed since" in (status.error or "")
    finally:
        store.close()
    assert not marker.exists()


@pytest.mark.parametrize(
    "server",
    [
        {"command": "python", "cwd": "x\x00y"},
        {"command": "py\x00thon", "args": ["a\x00b"]},
        {"command": "python", "cwd": "x" * 5000, "args": ["y" * 5000]},
    ],
    ids=["a NUL in the working folder", "a NUL in the command", "names too long for the system"],
)
def test_a_command_the_system_cannot_name_is_still_shown_and_asked_about(
    store: TrustStore, tmp_path: Path, server: dict[str, object]
) -> None:
    document = read_agent(write_agent(tmp_path / "a", server))
    check = store.check(document)
    assert not check.trusted and check.untrusted[0].display.isprintable(), ASKS


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("OPENAI_API_KEY", True),
        ("GITHUB_PERSONAL_ACCESS_TOKEN", True),
        ("DB_PASS", True),
        ("AUTH_HEADER", True),
        ("GIT_ASKPASS", False),  # a program git runs: its value is shown and asked about
        ("NODE_OPTIONS", False),
        ("PYTHON_KEYRING_BACKEND", False),  # KEYRING is not KEY: whole parts only
    ],
)
def test_which_variables_are_secrets(name: str, secret: bool) -> None:
    from foundry.agent.secrets import is_secret_variable

    assert is_secret_variable(name) == secret
