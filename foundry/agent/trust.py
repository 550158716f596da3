"""Consent before an agent's commands run or its data leaves: what an agent would start or send to.

An agent file can name any program as a stdio MCP server, and any URL as an HTTP or SSE server or
a model provider's server, with your secrets (`env://NAME`) in its headers or as its key. Foundry
starts, connects to and resolves none of them until the user has trusted that agent's exact set of
commands and connections (VS Code's workspace trust is the model). Each is remembered by a hash,
per resolved agent path: a command by what decides what runs (its command and the executable
found for it, arguments, working folder and where a link there leads, its environment variables,
the values too but a secret's, and the content of the files in the agent's folder that the
command, its arguments and its variables name); a connection by its URL and the names of what it
sends (headers, the provider's key) with the variables their values come from. A new or changed
one asks again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shlex
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from foundry.agent.atomic import write_files_atomically
from foundry.agent.document import AgentDocument, read_agent, resolve_agent_path
from foundry.agent.models import (
    AgentSupervisorEntry,
    PolicySupervisorEntry,
    SseServer,
    StdioServer,
    StreamableHttpServer,
)
from foundry.agent.secrets import (
    SecretError,
    dotenv_value,
    is_secret_reference,
    is_secret_variable,
    resolve_secret,
)
from foundry.home import FoundryHome, shipped_path

log = logging.getLogger(__name__)

TRUST_FILE = "trusted-agents.json"
MAX_HASHED_BYTES = 64 * 1024 * 1024  # a larger program file is known by its size and time
_URL_PASSWORD = re.compile(r"(://[^/@:\s]*:)[^@/\s]+@")  # `postgresql://app:***@db`
HOST_PYTHON = ("python", "python3")  # the tool host runs these as Foundry's own interpreter
LOCAL_PROVIDERS = ("embedded", "scripted")  # in this process: nothing is sent anywhere
PROVIDER_URL_SETTINGS = ("BASE_URL", "OLLAMA_HOST")
_LIST_SEPARATOR = re.compile(f"[,{re.escape(os.pathsep)}]")  # `--load=a.js,b.js`, `-I=a:b`


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
    executable: str | None = None  # what runs, when the agent's PATH or folder decides it
    confinement: str | None = None  # what the agent declares of its confinement (a widening)

    @property
    def label(self) -> str:
        return self.server

    @property
    def display(self) -> str:
        """The command as a person reads it: `time: python -m mcp_server_time`; characters that
        would not show (controls, direction overrides, zero-width) are written as escapes."""
        parts = [_visible(part) for part in (self.command, *self.args)]
        text = f"{_visible(self.server)}: {shlex.join(parts)}"
        if self.cwd:
            text += f"  (in {_visible(self.cwd)})"
        if self.executable:
            text += f"  (runs {_visible(self.executable)})"
        if self.env:
            shown = (_visible(_URL_PASSWORD.sub(r"\1***@", entry)) for entry in self.env)
            text += f"  (sets {', '.join(shown)})"
        if self.confinement:
            text += f"  (confinement {_visible(self.confinement)})"
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
        if self.executable is not None:
            fields.append(self.executable)
        if self.confinement is not None:
            fields += ["confinement", self.confinement]
        return hashlib.sha256(json.dumps(fields).encode()).hexdigest()


class AgentConnection(BaseModel):
    """A server the agent sends your conversation or a secret to: an HTTP or SSE MCP server,
    or a model provider's server."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["streamable-http", "sse", "provider"]
    name: str  # the MCP server's or the provider's
    url: str  # as the agent writes it; an `env://` one with the value the agent's `.env` gives
    sends: tuple[str, ...] = ()  # `Authorization (env://GITHUB_TOKEN)`, `X-Title`: no value
    supervisor: str | None = None  # whose provider it is: the supervisor agent named so

    @property
    def server(self) -> str | None:
        """The MCP server it is, None for a provider."""
        return None if self.kind == "provider" else self.name

    @property
    def label(self) -> str:
        if self.supervisor is not None:
            return f"supervisor agent {self.supervisor}'s model provider {self.name}"
        return f"model provider {self.name}" if self.kind == "provider" else self.name

    @property
    def display(self) -> str:
        """`docs: connects to https://example.com/mcp, sending Authorization (env://TOKEN)`;
        a URL's password as `***`, characters that would not show as escapes."""
        url = _URL_PASSWORD.sub(r"\1***@", self.url)
        text = f"{_visible(self.label)}: connects to {_visible(url)}"
        if self.sends:
            text += f", sending {_visible(', '.join(self.sends))}"
        return text

    @property
    def fingerprint(self) -> str:
        fields = ["connection", self.kind, self.name, self.url, list(self.sends)]
        if self.supervisor is not None:
            fields += ["supervisor", self.supervisor]
        return hashlib.sha256(json.dumps(fields).encode()).hexdigest()


Consent = AgentCommand | AgentConnection  # one thing a person trusts


class TrustCheck(BaseModel):
    """Whether an agent's commands may run and its connections be made, and those not trusted
    yet."""

    model_config = ConfigDict(frozen=True)

    agent_path: Path
    trusted: bool
    commands: tuple[Consent, ...]  # its commands and connections
    untrusted: tuple[Consent, ...] = ()
    reason: str = ""

    @property
    def untrusted_servers(self) -> list[str]:
        """The MCP servers to hold: those whose command or connection is not trusted."""
        return [item.server for item in self.untrusted if item.server is not None]

    @property
    def untrusted_providers(self) -> list[str]:
        """The model providers that must not be opened: their connection is not trusted."""
        return [
            item.name
            for item in self.untrusted
            if isinstance(item, AgentConnection)
            and item.kind == "provider"
            and item.supervisor is None
        ]

    @property
    def untrusted_supervisors(self) -> set[str]:
        """The supervisor agents (as their entries name them) whose providers must not be
        opened: one of their connections is not trusted."""
        return {
            item.supervisor
            for item in self.untrusted
            if isinstance(item, AgentConnection) and item.supervisor is not None
        }


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
        lines = "\n".join(f"  {item.display}" for item in check.untrusted)
        super().__init__(
            f"{check.agent_path}: not started; it would {would_do(check.untrusted)}, which "
            f"you have not trusted:\n{lines}\n"
            f"Trust them with `foundry trust {check.agent_path}`, or for one run with --trust."
        )


def would_do(items: tuple[Consent, ...]) -> str:
    """What trusting `items` lets the agent do: `run these commands`, `connect to these
    servers`, or both."""
    runs = any(isinstance(item, AgentCommand) for item in items)
    connects = any(isinstance(item, AgentConnection) for item in items)
    if runs and connects:
        return "run these commands and connect to these servers"
    return "connect to these servers" if connects else "run these commands"


def agent_consents(document: AgentDocument) -> tuple[Consent, ...]:
    """Everything a person trusts for the agent: its commands, then its connections."""
    return (*agent_commands(document), *agent_connections(document))


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


def agent_connections(document: AgentDocument) -> tuple[AgentConnection, ...]:
    """Every server the agent would send to: its HTTP and SSE MCP servers (enabled or not, as
    its commands), then the providers whose section names a URL or sends a secret."""
    agent = document.agent
    if agent is None:
        return ()
    servers = tuple(
        AgentConnection(
            kind=server.type,
            name=name,
            url=server.url,
            sends=tuple(_sent(key, value) for key, value in sorted(server.headers.items())),
        )
        for name, server in agent.mcp_servers.items()
        if isinstance(server, SseServer | StreamableHttpServer)
    )
    providers = (
        _provider(name, config, document.base_dir) for name, config in agent.providers.items()
    )
    own = servers + tuple(provider for provider in providers if provider is not None)
    return own + _supervisor_connections(document)


def supervisor_agent_paths(document: AgentDocument) -> list[str]:
    """The agents the agent's supervisors run as (`agentPath`, the policy's
    `supervisorAgentPath`), as its entries name them (relative to its folder)."""
    agent = document.agent
    if agent is None:
        return []
    named = []
    for entry in agent.supervisors:
        if isinstance(entry, AgentSupervisorEntry):
            named.append(entry.config.agent_path)
        elif isinstance(entry, PolicySupervisorEntry) and entry.config.supervisor_agent_path:
            named.append(entry.config.supervisor_agent_path)
    return list(dict.fromkeys(named))


def _supervisor_connections(document: AgentDocument) -> tuple[AgentConnection, ...]:
    """The providers of the agent's supervisor agents: they are opened with the agent, and
    send its conversation and their keys wherever their files say."""
    connections: list[AgentConnection] = []
    for named in supervisor_agent_paths(document):
        supervisor = read_agent(document.base_dir / named)
        if supervisor.agent is None:
            continue  # it cannot be opened either
        for name, config in supervisor.agent.providers.items():
            found = _provider(name, config, supervisor.base_dir)
            if found is not None:
                connections.append(found.model_copy(update={"supervisor": named}))
    return tuple(connections)


def _provider(name: str, config: dict[str, object], base_dir: Path) -> AgentConnection | None:
    """Where a provider sends the conversation and which of your secrets go with it; None when
    it runs here or names neither a URL nor a secret (then it sends no secret anywhere)."""
    if name.lower() in LOCAL_PROVIDERS:
        return None
    settings = {key: str(value) for key, value in config.items()}
    url = next((settings[key] for key in PROVIDER_URL_SETTINGS if settings.get(key)), None)
    sends = tuple(
        _sent(key, value)
        for key, value in sorted(settings.items())
        if is_secret_reference(value) and key not in PROVIDER_URL_SETTINGS
    )
    if url is None and not sends:
        return None
    if url is None:
        from foundry.llm.registry import OPENAI_URL  # where `openai` sends by default

        url = OPENAI_URL if name.lower() == "openai" else "(no URL)"
    else:
        from_agent = dotenv_value(url, base_dir)
        url = url if from_agent is None else f"{url} ({from_agent})"
    return AgentConnection(kind="provider", name=name, url=url, sends=sends)


def _sent(name: str, value: str) -> str:
    """A header or setting as trust knows it: its name, and the variable its value comes from
    (another variable is another secret sent); never the value."""
    return f"{name} ({value})" if is_secret_reference(value) else name


def _command(name: str, server: StdioServer, base_dir: Path) -> AgentCommand:
    """The command as the tool host would start it (its working folder as the host finds it),
    seen from the agent's folder with links resolved, however the agent was opened."""
    base_dir = Path(_real(base_dir))
    folder = base_dir / server.cwd if server.cwd else base_dir
    target = _real(folder)  # as the system finds it: links first, then `..`
    executable = _executable(server, Path(target), base_dir)
    words = (server.command, *server.args, *_env_words(server.env, base_dir))
    named = _named_files(words, Path(target), base_dir)
    if executable is not None and _inside(str(base_dir), executable):
        found = (os.path.relpath(executable, base_dir), _digest(executable))
        named = tuple(sorted({*named, found}))
    return AgentCommand(
        server=name,
        command=server.command,
        args=tuple(server.args),
        cwd=server.cwd,
        env=tuple(_env_entry(key, value, base_dir) for key, value in sorted(server.env.items())),
        cwd_target=None if target == os.path.normpath(folder) else target,
        files=named,
        executable=executable,
        confinement=_declared_confinement(server),
    )


def _declared_confinement(server: StdioServer) -> str | None:
    """The agent's own word on the server's confinement (its kind, network, folders it adds),
    as compact JSON; None when it declares nothing, so that agents trusted before keep their
    trust."""
    declared = server.confinement
    if declared is None:
        return None
    fields = declared.model_dump(mode="json", exclude_defaults=True)
    return json.dumps(fields, sort_keys=True, separators=(",", ":")) if fields else None


def _executable(server: StdioServer, folder: Path, base_dir: Path) -> str | None:
    """The program a command names by itself (`node`, `tool`), as the system finds it: through
    the PATH the server's own `env` sets, else the inherited one, a relative entry from the
    server's working folder. Its real path when the agent decides it (its `env` sets PATH, or it
    is in the agent's folder); None otherwise, and for what the host runs as Foundry's Python."""
    command = server.command
    if os.sep in command or command in HOST_PYTHON or not command:
        return None  # a path is one of the files the command names
    own = server.env.get("PATH")
    path = _value(own, base_dir) if own is not None else os.environ.get("PATH", os.defpath)
    entries = [os.path.join(folder, entry) for entry in path.split(os.pathsep)]
    try:
        found = shutil.which(command, path=os.pathsep.join(entries))
    except ValueError:  # a NUL byte: the server fails to start, saying why
        return None
    if found is None:
        return None
    real = _real(Path(found))
    return real if own is not None or _inside(str(base_dir), real) else None


def _value(value: str, base_dir: Path) -> str:
    """A variable's value as the server gets it (`env://` resolved); empty when it is not set."""
    try:
        return resolve_secret(value, base_dir)
    except SecretError:
        return ""


def _env_words(env: dict[str, str], base_dir: Path) -> list[str]:
    """The words of the server's non-secret variables (`NODE_OPTIONS=--require ./hook.js`,
    `LD_PRELOAD=./x.so`): the files they name are loaded as the command's own. A value from the
    person's own environment is theirs, not the agent's."""
    words: list[str] = []
    for name, value in env.items():
        if is_secret_variable(name) or name == "PATH":
            continue
        text = dotenv_value(value, base_dir) if is_secret_reference(value) else value
        if text is None:
            continue
        try:
            words += shlex.split(text)
        except ValueError:  # an unbalanced quote
            words += text.split()
    return words


def _inside(root: str, path: str) -> bool:
    return os.path.commonpath([root, path]) == root and path != root


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
    program, a link to one), also as an option's value (`--require=./hook.js`, `-r ./hook.js`)
    or in a list of them, each with a digest of what it holds: an edited script or a swapped
    link is another command."""
    root = str(base_dir)
    found: dict[str, str] = {}
    for name in (name for word in words for name in _names_in(word)):
        path = os.path.normpath(os.path.join(folder, name))
        if _inside(root, path) and os.path.isfile(path):
            found[os.path.relpath(path, root)] = _digest(path)
    return tuple(sorted(found.items()))


def _names_in(word: str) -> set[str]:
    """What a word may name as a file: itself, the value after `=` (`--require=./hook.js`,
    `config=a.json`) and each entry of a list there (`--load=a.js,b.js`, `-I=a:b`)."""
    names = {word}
    _, separator, value = word.partition("=")
    if separator and value:
        names.add(value)
        names.update(_LIST_SEPARATOR.split(value))
    return {name for name in names if name}


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
        commands = agent_consents(document)
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
        shown: tuple[Consent, ...] | None = None,
    ) -> None:
        """Trust the agent's commands and connections: those `shown` to the person (a file
        changed since then is not trusted by it), or as they are now; remembered, or for this
        process only."""
        key = trust_key(document.path)
        commands = agent_consents(document) if shown is None else shown
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


def _reason(untrusted: tuple[Consent, ...], known_before: bool) -> str:
    names = ", ".join(item.label for item in untrusted)
    what = {
        "run these commands": "commands",
        "connect to these servers": "connections",
    }.get(would_do(untrusted), "commands and connections")
    if known_before:
        return f"{what} changed or added since you trusted this agent: {names}"
    return f"this agent's {what} have not been trusted: {names}"
