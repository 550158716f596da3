"""Which server a stdio command really runs: through wrappers and launchers, to its package.

A command line is read as the program it ends up running: `sh -c "exec X ..."`, `env A=b X`,
`npx -y PKG`, `uvx PKG`, `python -m MODULE` and `node .../node_modules/PKG/...` are unwrapped
to the package or module they start, and the program is looked up on the PATH the server's own
`env` sets. A package Foundry knows names its *kind* (the reference filesystem server, git,
time, ...): rules written for a kind apply to servers identified as that kind, and the kind says
which folders the server serves (from its arguments) and whether it needs the network. A shell
line that does more than run one program (`;`, `|`, `$(...)`) is not unwrapped: its server is
of no known kind.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath

from foundry.agent.models import StdioServer

SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh"})
LAUNCHERS = frozenset({"npx", "uvx", "bunx", "pipx"})
PYTHONS = re.compile(r"^python(?:\d+(?:\.\d+)*)?$")
SHELL_SYNTAX = re.compile(r"[;&|<>`$(){}\n]")
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
MAX_UNWRAP = 8


@dataclass(frozen=True)
class Kind:
    """A server Foundry knows: its packages and programs, and what its rules assume of it."""

    name: str
    packages: frozenset[str]
    network: bool
    roots: str = (
        ""  # how its command line names the folders it serves: "positional", "--repository"
    )


KINDS = (
    Kind("filesystem", frozenset({"@modelcontextprotocol/server-filesystem",
                                  "mcp-server-filesystem"}), network=False, roots="positional"),
    Kind("git", frozenset({"mcp-server-git", "mcp_server_git"}), network=False,
         roots="--repository"),
    Kind("time", frozenset({"mcp-server-time", "mcp_server_time"}), network=False),
    Kind("memory", frozenset({"@modelcontextprotocol/server-memory", "mcp-server-memory"}),
         network=False),
    Kind("sequential-thinking", frozenset({"@modelcontextprotocol/server-sequential-thinking",
                                           "mcp-server-sequential-thinking"}), network=False),
    Kind("everything", frozenset({"@modelcontextprotocol/server-everything",
                                  "mcp-server-everything"}), network=False),
    Kind("sqlite", frozenset({"mcp-server-sqlite", "mcp_server_sqlite"}), network=False),
    Kind("fetch", frozenset({"mcp-server-fetch", "mcp_server_fetch"}), network=True),
    Kind("github", frozenset({"@modelcontextprotocol/server-github", "github-mcp-server",
                              "mcp-server-github"}), network=True),
    Kind("gitlab", frozenset({"@modelcontextprotocol/server-gitlab", "@zereight/mcp-gitlab",
                              "mcp-server-gitlab"}), network=True),
    Kind("postgres", frozenset({"@modelcontextprotocol/server-postgres", "mcp-server-postgres"}),
         network=True),  # the database it is given, often on another host
    Kind("playwright", frozenset({"@playwright/mcp", "mcp-server-playwright"}), network=True),
    Kind("puppeteer", frozenset({"@modelcontextprotocol/server-puppeteer"}), network=True),
    # a shell runs whatever it is told: without the network unless the agent declares it
    Kind("shell", frozenset({"mcp-shell-server", "mcp_shell_server"}), network=False),
    Kind("slack", frozenset({"@modelcontextprotocol/server-slack"}), network=True),
    Kind("brave-search", frozenset({"@modelcontextprotocol/server-brave-search"}), network=True),
)  # fmt: skip
KIND_NAMES = tuple(kind.name for kind in KINDS)
# tsagent's internal servers (`type: internal`), which Foundry runs itself (runtime/
# internal_tools.py): `internal-rules`, `internal-references`, `internal-tools`, ...
INTERNAL_KIND_PREFIX = "internal-"
_BY_PACKAGE = {package: kind for kind in KINDS for package in kind.packages}


@dataclass(frozen=True)
class ServerIdentity:
    """What a stdio server's command runs, as far as it can be told without running it."""

    programs: tuple[Path, ...]  # every program and script on the way, as found (not resolved)
    package: str | None  # the npm package, Python module or program name it ends in
    kind: Kind | None
    launcher: str | None  # npx, uvx, ...: it downloads what it runs
    argv: tuple[str, ...]  # the server's own arguments, after its package or program
    declared: bool = False  # the kind is the agent's declaration, not read off the command

    @property
    def kind_name(self) -> str | None:
        return None if self.kind is None else self.kind.name

    def roots(self, folder: Path) -> tuple[Path, ...]:
        """The folders the server's own arguments give it to serve, read from `folder`."""
        style = "" if self.kind is None else self.kind.roots
        if style == "positional":
            named = [arg for arg in self.argv if not arg.startswith("-")]
        elif style:
            named = _option_values(self.argv, style, "-r" if style == "--repository" else "")
        else:
            return ()
        return tuple(folder / os.path.expanduser(value) for value in named if value)


def identify(
    config: StdioServer, base_dir: Path, declared_kind: str | None = None
) -> ServerIdentity:
    """The server `config` starts, from the agent folder `base_dir`."""
    folder = base_dir / config.cwd if config.cwd else base_dir
    path = config.env.get("PATH", os.environ.get("PATH", os.defpath))
    words = [sys.executable if PYTHONS.match(config.command) else config.command, *config.args]
    programs: list[Path] = []
    launcher: str | None = None
    for _ in range(MAX_UNWRAP):
        program = _found(words[0], path, folder)
        if program is not None and program not in programs:
            programs.append(program)
        inner = _unwrapped(words)
        if inner is None:
            break
        if PurePath(words[0]).name in LAUNCHERS:
            launcher = PurePath(words[0]).name
        words = inner
    script = _script(words, folder)
    if script is not None:
        programs.append(script)
    package, argv = _package(words, programs[-1] if programs else None)
    kind = _BY_PACKAGE.get(package or "")
    if declared_kind is not None:
        kind = next((known for known in KINDS if known.name == declared_kind), None)
    return ServerIdentity(
        programs=tuple(programs),
        package=package,
        kind=kind,
        launcher=launcher,
        argv=tuple(argv),
        declared=declared_kind is not None,
    )


def _found(program: str, path: str, folder: Path) -> Path | None:
    """The real file `program` runs, found on `path` when it has no slash, else from `folder`."""
    if "/" in program:
        candidate: str | None = str(folder / os.path.expanduser(program))
    else:
        candidate = shutil.which(program, path=path)
    if candidate is None or not os.path.exists(candidate):
        return None
    return Path(os.path.abspath(candidate))


def _unwrapped(words: Sequence[str]) -> list[str] | None:
    """The command a wrapper runs, or None when `words` is the server itself (or unknowable)."""
    name = PurePath(words[0]).name
    if name in SHELLS:
        return _shell_line(words)
    if name == "env":
        return _after_env(words[1:])
    if name == "exec":
        return list(words[1:]) or None
    if name in LAUNCHERS:
        return _launched(name, words[1:])
    if name == "uv" and len(words) > 2 and words[1:3] == ["tool", "run"]:
        return _launched("uvx", words[3:])
    return None


def _shell_line(words: Sequence[str]) -> list[str] | None:
    try:
        script = words[words.index("-c") + 1]
    except (ValueError, IndexError):
        return None
    if SHELL_SYNTAX.search(script):
        return None
    try:
        inner = shlex.split(script)
    except ValueError:
        return None
    while inner and (inner[0] == "exec" or ASSIGNMENT.match(inner[0])):
        inner = inner[1:]
    return inner or None


def _after_env(words: Sequence[str]) -> list[str] | None:
    rest = list(words)
    while rest and (rest[0].startswith("-") or ASSIGNMENT.match(rest[0])):
        rest = rest[1:]
    return rest or None


def _launched(launcher: str, words: Sequence[str]) -> list[str] | None:
    """`npx -y PKG ARGS` as `PKG ARGS` (with the version dropped)."""
    rest = list(words)
    if launcher == "pipx":
        if not rest or rest[0] != "run":
            return None
        rest = rest[1:]
    package = None
    while rest and rest[0].startswith("-"):
        option = rest.pop(0)
        if option in ("-p", "--package", "--from") and rest:
            package = rest.pop(0)
        elif option.startswith(("--package=", "--from=")):
            package = option.split("=", 1)[1]
    if not rest:
        return None
    return [_without_version(package or rest[0]), *rest[1:]]


def _without_version(spec: str) -> str:
    """`@scope/pkg@1.2` as `@scope/pkg`, `pkg==1.0` as `pkg`."""
    spec = re.split(r"==|>=|<=|~=|\[", spec, maxsplit=1)[0]
    at = spec.find("@", 1)
    return spec if at == -1 else spec[:at]


def _script(words: Sequence[str], folder: Path) -> Path | None:
    """The file an interpreter is given to run (`node x.js`, `python x.py`), as it exists."""
    name = PurePath(words[0]).name
    interpreter = _is_python(words[0]) or name in ("node", "nodejs", "bun", "deno")
    if not interpreter or len(words) < 2 or words[1].startswith("-"):
        return None
    path = folder / os.path.expanduser(words[1])
    return Path(os.path.abspath(path)) if path.is_file() else None


def _package(words: Sequence[str], program: Path | None) -> tuple[str | None, list[str]]:
    """The package or module the final command runs, and the arguments after it."""
    head = words[0]
    name = PurePath(head).name
    if _is_python(head) or (program is not None and _is_python(str(program))):
        if len(words) > 2 and words[1] == "-m":
            return words[2], list(words[3:])
        if len(words) > 1:
            return _from_path(_real(program, words[1])), list(words[2:])
    if name in ("node", "nodejs", "bun", "deno") and len(words) > 1:
        return _from_path(_real(program, words[1])), list(words[2:])
    from_path = _from_path(os.path.realpath(program)) if program is not None else None
    if from_path is not None and from_path.startswith("@"):
        return from_path, list(words[1:])
    return (head if "/" not in head or head.startswith("@") else name), list(words[1:])


def _is_python(program: str) -> bool:
    """A Python by its name, or this very interpreter (the packaged app is its own Python:
    `foundry -m MODULE`, launcher.py)."""
    if PYTHONS.match(PurePath(program).name):
        return True
    try:
        return os.path.samefile(program, sys.executable)
    except OSError:
        return False


def _real(found: Path | None, written: str) -> str:
    return os.path.realpath(found) if found is not None else written


def _from_path(path: str) -> str | None:
    """The npm package a file lies in (`.../node_modules/@scope/pkg/dist/x.js`), or its name."""
    parts = PurePath(path).parts
    if "node_modules" in parts:
        at = len(parts) - 1 - parts[::-1].index("node_modules")
        rest = parts[at + 1 :]
        if rest and rest[0].startswith("@") and len(rest) > 1:
            return f"{rest[0]}/{rest[1]}"
        if rest:
            return rest[0]
    return PurePath(path).name or None


def _option_values(argv: Sequence[str], long: str, short: str) -> list[str]:
    values = []
    for index, arg in enumerate(argv):
        if arg.startswith(long + "="):
            values.append(arg.split("=", 1)[1])
        elif arg in (long, short or long) and index + 1 < len(argv):
            values.append(argv[index + 1])
    return values


def internal_kind(tool: str) -> str:
    """The kind of an internal server that serves `tool` (its `tool:`), for rules written for
    it: `internal-rules` for tsagent's rules server."""
    return f"{INTERNAL_KIND_PREFIX}{tool}"
