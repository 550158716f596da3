"""Every command, given bad input, exits non-zero with a message that names the problem and never
with a traceback. Each case runs as the `foundry` command does, in its own process; the processes
run side by side, so the whole file takes about as long as its slowest few."""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from foundry.cli.main import build_parser
from foundry.home import FoundryHome
from foundry.store import Store
from tests.runtime.conftest import write_agent


@dataclass(frozen=True)
class Case:
    """A command line (`{bad}` is the folder of bad files) and words its message must hold."""

    command: str
    says: str
    env: dict[str, str] = field(default_factory=dict)


LOST = {"type": "agent", "id": "lost", "name": "Lost", "config": {"agentPath": "../gone"}}
MISSING_AGENT = "no agent here: the folder does not exist"
NOT_UTF8 = "not UTF-8 text"

CASES = {
    "validate a missing path": Case("validate {bad}/nowhere", MISSING_AGENT),
    "validate a symbolic link loop": Case("validate {bad}/loop", "link that loops back on itself"),
    "run a link to nothing": Case("run {bad}/dangling -m hi", "link to 'nowhere', which does not"),
    "validate a file that is not UTF-8": Case("validate {bad}/latin.yaml", NOT_UTF8),
    "validate a folder named like a file": Case("validate {bad}/folder.yaml", "not a regular file"),
    "create-agent under a file": Case("create-agent {bad}/notes.txt/a --name x", "Not a directory"),
    "convert a broken agent": Case("convert {bad}/broken {bad}/from-broken.yaml", "invalid JSON"),
    "convert an agent validate rejects": Case("convert {bad}/lost {bad}/from-lost.yaml", "--force"),
    "run a broken agent": Case("run {bad}/broken -m hi", "invalid JSON"),
    "run an agent validate rejects": Case("run {bad}/lost -m hi", "no agent at '../gone'"),
    "run with a missing script": Case(
        "run {bad}/good -m hi --model scripted:{bad}/none.yaml", "no scripted model file"
    ),
    "run with a script that is not UTF-8": Case(
        "run {bad}/good -m hi --model scripted:{bad}/latin.yaml", NOT_UTF8
    ),
    "chat with an agent validate rejects": Case("chat {bad}/lost", "no agent at '../gone'"),
    "chat in an unknown session": Case("chat --session nope", "no session with id 'nope'"),
    "sessions show an unknown id": Case("sessions show nope", "no session with id 'nope'"),
    "sessions export an unknown id": Case("sessions export nope", "no session with id 'nope'"),
    "approvals show an unknown id": Case("approvals show nope", "no approval with id 'nope'"),
    "approvals approve an unknown id": Case("approvals approve nope", "no approval with id"),
    "approvals approve malformed params": Case(
        "approvals approve nope --params {{oops", "--params: not valid JSON"
    ),
    "approvals deny an unknown id": Case("approvals deny nope --reasoning no", "no approval with"),
    "audit export into a folder": Case("audit export -o {bad}/folder.yaml", "Is a directory"),
    "task run a folder": Case("task run {bad}/folder.yaml", "no task file here"),
    "task run broken YAML": Case("task run {bad}/broken-task.yaml", "invalid YAML"),
    "task run a file that is not UTF-8": Case("task run {bad}/latin.yaml", NOT_UTF8),
    "task run with an agent validate rejects": Case(
        "task run {bad}/lost-agent.yaml", "no agent at '../gone'"
    ),
    "task replay of an unfinished run": Case(
        "task run {bad}/unfinished.yaml --replay", "the task did not finish"
    ),
    "task metrics of an unknown id": Case("task metrics nope", "no task with id 'nope'"),
    "metrics export onto a file": Case("metrics export --csv {bad}/notes.txt", "notes.txt"),
    "metrics rebuild with a bad database URL": Case(
        "metrics rebuild", "cannot use the database URL", env={"FOUNDRY_DATABASE_URL": "nope://"}
    ),
    "serve on no port": Case("serve --port 99999", "99999 is not a port"),
    "gateway on no port": Case("gateway {bad}/good --http --port 99999", "99999 is not a port"),
    "sessions list in a home that is a file": Case(
        "sessions list", "Not a directory", env={"FOUNDRY_HOME": "{bad}/notes.txt"}
    ),
    "task list in a home that is a file": Case(
        "task list", "Not a directory", env={"FOUNDRY_HOME": "{bad}/notes.txt"}
    ),
    "policy check calls that are not JSON": Case(
        "policy check --calls {bad}/notes.txt", "notes.txt:1: invalid JSON"
    ),
    "policy check an agent without a policy": Case(
        "policy check {bad}/good --calls {bad}/notes.txt", "has no policy supervisor"
    ),
    "policy check an unknown session": Case(
        "policy check --session nope", "no session with id 'nope'"
    ),
    "trust a broken agent": Case("trust {bad}/broken", "invalid JSON"),
    "gateway for a broken agent": Case("gateway {bad}/broken", "invalid JSON"),
    "trust with no agent": Case("trust", "name an agent, or use --list"),
    "approvals list with a database URL that is not one": Case(
        "approvals list", "cannot use the database URL", env={"FOUNDRY_DATABASE_URL": "nope://"}
    ),
    "approvals agreement with a database URL that is not one": Case(
        "approvals agreement",
        "cannot use the database URL",
        env={"FOUNDRY_DATABASE_URL": "nope://"},
    ),
    "policy questions of a broken agent": Case(
        "policy questions --agent {bad}/broken", "invalid JSON"
    ),
    "models find with no server answering": Case(
        "models find", "no model server answered", env={"OLLAMA_HOST": "http://127.0.0.1:9"}
    ),
    "models use on a broken agent": Case("models use {bad}/broken ollama:qwen3", "invalid JSON"),
}


def write_task(path: Path, agent: str) -> Path:
    spec = {"name": path.stem, "goal": "say hello", "criteria": ["hello"], "operators": [agent]}
    path.write_text(yaml.safe_dump(spec))
    return path


def make_bad_input(bad: Path) -> None:
    """The files the cases name, and a store holding a task run that never finished."""
    (bad / "broken").mkdir()
    (bad / "broken" / "tsagent.json").write_text('{"metadata": ')
    (bad / "latin.yaml").write_bytes("metadata: {name: Caf\xe9}\n".encode("latin-1"))
    (bad / "folder.yaml").mkdir()
    (bad / "notes.txt").write_text("not an agent\n")
    (bad / "loop").symlink_to("loop-back")
    (bad / "loop-back").symlink_to("loop")
    (bad / "dangling").symlink_to("nowhere")
    write_agent(bad / "good", {"turns": [{"text": "Hello."}]}, servers={})
    write_agent(bad / "lost", {"turns": [{"text": "Hello."}]}, servers={}, supervisors=[LOST])
    (bad / "broken-task.yaml").write_text("name: [\n")
    write_task(bad / "lost-agent.yaml", "lost")
    unfinished = write_task(bad / "unfinished.yaml", "good")
    with Store.open(home=FoundryHome(bad / "home" / "config", bad / "home" / "data").ensure()) as s:
        s.tasks.create("unfinished", str(unfinished.resolve()), str(bad))


def run_case(case: Case, bad: Path) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key != "FOUNDRY_DATABASE_URL"}
    env["FOUNDRY_HOME"] = str(bad / "home")
    env.update({key: value.format(bad=bad) for key, value in case.env.items()})
    argv = shlex.split(case.command.format(bad=bad))
    return subprocess.run(
        [sys.executable, "-m", "foundry.cli", *argv],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture(scope="module")
def outcomes(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, subprocess.CompletedProcess[str]]:
    bad = tmp_path_factory.mktemp("bad-input")
    make_bad_input(bad)
    with ThreadPoolExecutor(max_workers=max(4, os.cpu_count() or 1)) as pool:
        futures = {name: pool.submit(run_case, case, bad) for name, case in CASES.items()}
        return {name: future.result() for name, future in futures.items()}


@pytest.mark.parametrize("name", CASES)
def test_bad_input_is_one_clear_message(
    name: str, outcomes: dict[str, subprocess.CompletedProcess[str]]
) -> None:
    result = outcomes[name]
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "Traceback" not in output, output
    assert CASES[name].says in output, output


def test_every_command_has_a_case() -> None:
    tried = [case.command for case in CASES.values()]
    for command in command_names(build_parser()):
        if command not in ("doctor", "gui"):  # no input to get wrong; the app is tested in ui/
            assert any(line.startswith(command) for line in tried), command


def command_names(parser: argparse.ArgumentParser, prefix: str = "") -> list[str]:
    """Every command and action the parser knows, e.g. `sessions show`."""
    found: list[str] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += command_names(sub, f"{prefix}{name} ") or [f"{prefix}{name}"]
    return found


def test_an_unfinished_run_replayed_is_refused_in_one_line(
    outcomes: dict[str, subprocess.CompletedProcess[str]],
) -> None:
    result = outcomes["task replay of an unfinished run"]
    [line] = result.stderr.splitlines()
    assert line.startswith("foundry: ") and line.endswith("run it to resume it")
    assert result.stdout == ""
