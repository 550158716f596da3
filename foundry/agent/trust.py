"""Consent before an agent's commands run: the commands an agent would start, and which are trusted.

An agent file can name any program as a stdio MCP server. Foundry starts none of them until the
user has trusted that agent's exact set of commands (VS Code's workspace trust is the model):
each command is remembered by a hash of what decides what runs, per resolved agent path: its
command, arguments, working folder (and where a link there leads), its environment variables (the
values too, but a secret's), and the content of the files in the agent's folder that the command
and its arguments name. A new or changed command asks again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shlex
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from foundry.agent.atomic import write_files_atomically
from foundry.agent.document import AgentDocument, resolve_agent_path
from foundry.agent.models import StdioServer
from foundry.agent.secrets import dotenv_value, is_secret_variable
from foundry.home import FoundryHome, shipped_path

log = logging.getLogger(__name__)

TRUST_FILE = "trusted-agents.json"
MAX_HASHED_BYTES = 64 * 1024 * 1024  # a larger program file is known by its size and time
_URL_PASSWORD = re.compile(r"(://[^/@:\s]*:)[^@/\s]+@")  # `postgresql://app:***@db`


class AgentCommand(BaseModel):
    """One program Foundry would start for an agent (a stdio MCP server)."""

    model_config = ConfigDict(frozen=True)

    server: str
    command: str
    args: tuple[str, ...] = ()
    cwd: str | None = None
    env: tuple[str, ...] = ()  # `NAME=value`, or only `NAME` for a secret
    cwd_target: str | None = None  # where the working folder leads, when a link is on the way
    files: tuple[tuple[str, str], ...] = ()  # (path, digest) of the agent's files it names

    @property
    def display(self) -> str:
        """The command as a person reads it: `time: python -m mcp_server_time`; characters that
        would not show (controls, direction overrides, zero-width) are written as escapes."""
        parts = [_visible(part) for part in (self.command, *self.args)]
        text = f"{_visible(self.server)}: {shlex.join(parts)}"
        if self.cwd:
            text += f"  (in {_visible(self.cwd)})"
        if self.env:
            shown = (_visible(_URL_PASSWORD.sub(r"\1***@", entry)) for entry in self.env)
            text += f"  (sets {', '.join(shown)})"
        return text

    @property
    def fingerprint(self) -> str:
        """What trust remembers: a change to any part of the command asks again."""
        fields: list[object] = [
            self.server,
            self.command,
            list(self.args),
            self.cwd,
            list(self.env),
        ]
        if self.cwd_target is not None or self.files:
            fields += [self.cwd_target, [list(file) for file in self.files]]
        return hashlib.sha256(json.dumps(fields).encode()).hexdigest()


class TrustCheck(BaseModel):
    """Whether an agent's commands may run, and the commands not trusted yet."""

    model_config = ConfigDict(frozen=True)

    agent_path: Path
    trusted: bool
    commands: tuple[AgentCommand, ...]
    untrusted: tuple[AgentCommand, ...] = ()
    reason: str = ""


class TrustEntry(BaseModel):
    """A trusted agent: its path, when it was trusted, and its commands' fingerprints."""

    model_config = ConfigDict(frozen=True)

    agent_path: str
    trusted_at: datetime
    commands: dict[str, str]  # fingerprint -> display


class _TrustFile(BaseModel):
    version: int = 1
    agents: dict[str, TrustEntry] = {}


class TrustFileError(Exception):
    """The trust file cannot be read; nothing in it is trusted."""


class UntrustedAgent(LookupError):
    """An agent whose commands the user has not trusted; nothing of it was started."""

    def __init__(self, check: TrustCheck) -> None:
        self.check = check
        lines = "\n".join(f"  {command.display}" for command in check.untrusted)
        super().__init__(
            f"{check.agent_path}: not started; it would run commands you have not trusted:\n"
            f"{lines}\n"
            f"Trust them with `foundry trust {check.agent_path}`, or for one run with --trust."
        )


def agent_commands(document: AgentDocument) -> tuple[AgentCommand, ...]:
    """Every program Foundry would start for the agent: its stdio MCP servers (enabled or not:
    the editor can start a disabled one). Supervisor agents open models, never commands."""
    agent = document.agent
    if agent is None:
        return ()
    return tuple(
        _command(name, server, document.base_dir)
        for name, server in agent.mcp_servers.items()
        if isinstance(server, StdioServer)
    )


def _command(name: str, server: StdioServer, base_dir: Path) -> AgentCommand:
    """The command as the tool host would start it (its working folder as the host finds it),
    seen from the agent's folder with links resolved, however the agent was opened."""
    base_dir = Path(_real(base_dir))
    folder = base_dir / server.cwd if server.cwd else base_dir
    target = _real(folder)  # as the system finds it: links first, then `..`
    return AgentCommand(
        server=name,
        command=server.command,
        args=tuple(server.args),
        cwd=server.cwd,
        env=tuple(_env_entry(key, value, base_dir) for key, value in sorted(server.env.items())),
        cwd_target=None if target == os.path.normpath(folder) else target,
        files=_named_files((server.command, *server.args), Path(target), base_dir),
    )


def _real(path: Path) -> str:
    """The path with its links resolved; as written when it cannot be (a NUL byte in it: the
    server then fails to start, saying why)."""
    try:
        return os.path.realpath(path)
    except ValueError:
        return os.path.normpath(path)


def _env_entry(name: str, value: str, base_dir: Path) -> str:
    """How a variable is shown and remembered: a secret by its name alone (a new key does not
    ask again); any other by its value, which can change what runs (NODE_OPTIONS, PYTHONPATH),
    also when the agent's own `.env` supplies it."""
    if is_secret_variable(name):
        return name
    from_agent = dotenv_value(value, base_dir)
    return f"{name}={value}" if from_agent is None else f"{name}={value} ({from_agent})"


def _named_files(
    words: tuple[str, ...], folder: Path, base_dir: Path
) -> tuple[tuple[str, str], ...]:
    """The files in the agent's folder that the command and its arguments name (a script, a
    program, a link to one), each with a digest of what it holds: an edited script or a swapped
    link is another command."""
    root = str(base_dir)
    found: dict[str, str] = {}
    for word in words:
        path = os.path.normpath(os.path.join(folder, word))
        if os.path.commonpath([root, path]) == root and path != root and os.path.isfile(path):
            found[os.path.relpath(path, root)] = _digest(path)
    return tuple(sorted(found.items()))


def _digest(path: str) -> str:
    try:
        size = os.stat(path).st_size
        if size > MAX_HASHED_BYTES:
            return f"size {size}, modified {os.stat(path).st_mtime_ns}"
        with open(path, "rb") as file:
            return hashlib.file_digest(file, "sha256").hexdigest()
    except OSError as error:
        return f"unreadable: {error.strerror}"


def _visible(text: str) -> str:
    """`text` with every character that does not show written as its escape (`\\n`, `\\u202e`)."""
    return "".join(
        char if char.isprintable() else char.encode("unicode_escape").decode() for char in text
    )


def trust_key(agent_path: Path) -> str:
    """Trust belongs to the agent's file, however it is named (relative, through a link)."""
    return str(resolve_agent_path(Path(agent_path).expanduser()).resolve())


def is_shipped(agent_path: Path) -> bool:
    """Agents shipped with Foundry are trusted: they come with the program itself."""
    return Path(trust_key(agent_path)).is_relative_to(shipped_path("agents").resolve())


class TrustStore:
    """The trusted agents, in a JSON file in Foundry's data folder; grants for this process only
    are held in memory."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._this_run: dict[str, set[str]] = {}

    @classmethod
    def default(cls) -> TrustStore:
        return cls(FoundryHome.from_environment().data_dir / TRUST_FILE)

    def check(self, document: AgentDocument) -> TrustCheck:
        commands = agent_commands(document)
        path = Path(trust_key(document.path))
        if not commands or is_shipped(path):
            return TrustCheck(agent_path=path, trusted=True, commands=commands)
        known, problem = self._known(str(path))
        untrusted = tuple(c for c in commands if c.fingerprint not in known)
        reason = problem or _reason(untrusted, bool(known))
        return TrustCheck(
            agent_path=path,
            trusted=not untrusted,
            commands=commands,
            untrusted=untrusted,
            reason="" if not untrusted else reason,
        )

    def require(self, document: AgentDocument) -> None:
        """Raises UntrustedAgent unless every command of the agent is trusted."""
        check = self.check(document)
        if not check.trusted:
            raise UntrustedAgent(check)

    def grant(
        self,
        document: AgentDocument,
        remember: bool = True,
        shown: tuple[AgentCommand, ...] | None = None,
    ) -> None:
        """Trust the agent's commands: those `shown` to the person (a file changed since then
        is not trusted by it), or as they are now; remembered, or for this process only."""
        key = trust_key(document.path)
        commands = agent_commands(document) if shown is None else shown
        if not remember:
            self._this_run.setdefault(key, set()).update(c.fingerprint for c in commands)
            return
        trusted = self._read_or_empty()
        trusted.agents[key] = TrustEntry(
            agent_path=key,
            trusted_at=datetime.now(UTC),
            commands={c.fingerprint: c.display for c in commands},
        )
        self._write(trusted)

    def revoke(self, agent_path: Path) -> bool:
        """Forget the agent; whether it was trusted."""
        key = trust_key(agent_path)
        self._this_run.pop(key, None)
        trusted = self._read_or_empty()
        if trusted.agents.pop(key, None) is None:
            return False
        self._write(trusted)
        return True

    def entries(self) -> list[TrustEntry]:
        return sorted(self._read().agents.values(), key=lambda entry: entry.agent_path)

    def _known(self, key: str) -> tuple[set[str], str]:
        """The trusted fingerprints of an agent, and what was wrong with the file if anything."""
        known = set(self._this_run.get(key, ()))
        try:
            entry = self._read().agents.get(key)
        except TrustFileError as error:
            return known, str(error)
        return known | set(entry.commands if entry else ()), ""

    def _read(self) -> _TrustFile:
        try:
            text = self.path.read_bytes()
        except FileNotFoundError:
            return _TrustFile()
        except OSError as error:
            raise TrustFileError(f"{self.path}: cannot be read ({error.strerror})") from error
        try:
            return _TrustFile.model_validate_json(text)
        except ValidationError as error:
            raise TrustFileError(
                f"{self.path}: is damaged, so no agent is trusted; trust agents again "
                "(the damaged file is replaced when you do)"
            ) from error

    def _read_or_empty(self) -> _TrustFile:
        try:
            return self._read()
        except TrustFileError as error:
            log.warning("%s", error)
            return _TrustFile()

    def _write(self, trusted: _TrustFile) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_files_atomically({self.path: trusted.model_dump_json(indent=2) + "\n"})


def _reason(untrusted: tuple[AgentCommand, ...], known_before: bool) -> str:
    names = ", ".join(command.server for command in untrusted)
    if known_before:
        return f"commands changed or added since you trusted this agent: {names}"
    return f"this agent's commands have not been trusted: {names}"
