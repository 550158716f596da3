"""What a stdio MCP server may touch, and the command that starts it confined to that by the kernel.

A server may read and change its workspace (the folder the session's policy judges paths
against), read and run the system and its own installation, and use a private temporary folder
and its launcher's cache (npx, uvx: Foundry's, not the user's). Nothing else: not the user's home,
not Foundry's data or trust store, not its own code, and no network unless its kind needs it or
the agent declares it (`confinement.network`). The agent may widen this (`confinement.read`,
`confinement.write`, paths relative to the agent's folder); that is part of what its trust
covers, so a widening is a change a person consents to.

On Linux with Landlock, `sandbox_exec.py` applies the rules in the server's own process before it
runs the server, so whatever happens after a decision (a symlink swapped in, a hard link, a
wrapper, a server's own bug) meets the kernel. Where the kernel cannot confine, the server runs
as before and `kernel_support()` says what is not enforced.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from mcp import StdioServerParameters

from foundry.agent.models import StdioServer
from foundry.home import FoundryHome, cache_dir
from foundry.tools import sandbox_exec
from foundry.tools.identity import ServerIdentity, identify

logger = logging.getLogger(__name__)
SYSTEM_EXECUTE = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
SYSTEM_READ = ("/proc", "/sys", "/dev/random", "/dev/urandom", "/dev/tty")
SYSTEM_WRITE = ("/dev/null", "/dev/zero", "/dev/full")
# Of /etc, what programs read to run: the loader, users and groups by name, name resolution,
# certificates, time zones, locales; not the shadow files, keys or other programs' settings.
ETC_READ = (
    "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "passwd", "group", "nsswitch.conf", "hosts",
    "host.conf", "resolv.conf", "gai.conf", "services", "protocols", "networks", "ssl",
    "ca-certificates", "ca-certificates.conf", "pki", "crypto-policies", "localtime", "timezone",
    "locale.alias", "locale.conf", "default/locale", "os-release", "debian_version",
    "mime.types", "magic", "alternatives", "gitconfig", "fonts", "npmrc", "pip.conf", "python3",
    "xdg", "machine-id",
)  # fmt: skip
LAUNCHER_CACHES = {"npx": "npm_config_cache", "bunx": "BUN_INSTALL_CACHE_DIR",
                   "uvx": "UV_CACHE_DIR", "pipx": "PIPX_HOME"}  # fmt: skip
BIN_FOLDERS = ("bin", "sbin")
PREFIX_FOLDERS = ("bin", "sbin", "lib", "lib64", "libexec")
CONFINED_MARK = "FOUNDRY_CONFINED"
SEARCH_PATH_VARIABLES = ("PYTHONPATH", "NODE_PATH")


@dataclass(frozen=True)
class KindNeeds:
    """What a kind of server needs beyond its installation, to do its job at all."""

    home_read: tuple[str, ...] = ()  # under the home folder
    home_execute: tuple[str, ...] = ()
    write: tuple[str, ...] = ()


BROWSER = KindNeeds(write=("/dev/shm",))  # Chromium's shared memory
KIND_NEEDS = {
    "git": KindNeeds(home_read=(".gitconfig", ".config/git")),  # who commits; git's settings
    "playwright": replace(BROWSER, home_execute=(".cache/ms-playwright",)),  # its browsers
    "puppeteer": replace(BROWSER, home_execute=(".cache/puppeteer",)),
}


@dataclass(frozen=True)
class KernelSupport:
    """What this machine's kernel can enforce for a server."""

    landlock_abi: int

    @property
    def enforced(self) -> bool:
        return self.landlock_abi >= 1

    @property
    def tcp(self) -> bool:
        return self.landlock_abi >= 4

    def describe(self) -> str:
        if not self.enforced:
            return (
                f"MCP servers are not confined on this system ({_platform()}): the policy judges "
                "each call, but nothing stops a server from reaching files outside its workspace "
                "or the network after the decision"
            )
        network = "TCP and (in a namespace of its own) all network" if self.tcp else "not network"
        return f"MCP servers are confined by Landlock ABI {self.landlock_abi}: files, {network}"


@functools.cache
def kernel_support() -> KernelSupport:
    return KernelSupport(landlock_abi=sandbox_exec.abi_version())


@dataclass(frozen=True)
class Confinement:
    """The folders a server may read, run and change, and whether it may use the network."""

    workspace: Path | None
    read: tuple[str, ...]
    execute: tuple[str, ...]
    write: tuple[str, ...]
    network: bool
    network_reason: str
    cache: str | None = None  # its launcher's cache, in Foundry's cache folder
    env: dict[str, str] = field(default_factory=dict)

    def describe(self) -> str:
        """What the kernel holds this server to, in a sentence or two."""
        support = kernel_support()
        if not support.enforced:
            return support.describe() + "."
        changed = [path for path in self.write if path not in (*SYSTEM_WRITE, self.cache)]
        where = ", ".join(changed) if changed else "no folder"
        network = "allowed" if self.network else "refused"
        return (
            f"The kernel lets it change {where}, read the system and its own "
            f"installation, and nothing else. Network {network}: {self.network_reason}."
        )

    def spec(self, temporary: str) -> str:
        return json.dumps(
            {
                "read": list(self.read),
                "execute": list(self.execute),
                "write": [*self.write, temporary],
                "network": self.network,
            }
        )


def confinement_for(config: StdioServer, base_dir: Path, workspace: Path | None) -> Confinement:
    """What the server `config` of the agent in `base_dir` may touch when it serves `workspace`."""
    declared = config.confinement
    identity = identify(config, base_dir, declared.kind if declared else None)
    network, reason = _network(identity, declared.network if declared else None)
    execute = [*SYSTEM_EXECUTE, *_installations(identity)]
    write = [*SYSTEM_WRITE]
    read = [*SYSTEM_READ, *(f"/etc/{name}" for name in ETC_READ), *_resolver_targets()]
    needs = KIND_NEEDS.get(identity.kind_name or "", KindNeeds())
    read += [str(Path.home() / path) for path in needs.home_read]
    execute += [str(Path.home() / path) for path in needs.home_execute]
    write += list(needs.write)
    if workspace is not None and _may_serve(workspace, execute):
        write.append(str(workspace))
    read += _search_paths(config, _folder(config, base_dir))
    if declared is not None:
        read += [str(base_dir / os.path.expanduser(path)) for path in declared.read]
        write += [str(base_dir / os.path.expanduser(path)) for path in declared.write]
    env = {"PYTHONSAFEPATH": "1"}  # the working folder is never where a Python server imports from
    cache = None
    if identity.launcher is not None:
        cache = str(cache_dir() / "servers" / identity.launcher)
        env[LAUNCHER_CACHES[identity.launcher]] = cache
        execute.append(cache)
        write.append(cache)
    return Confinement(
        workspace=workspace,
        read=_unique(read),
        execute=_unique(execute),
        write=_unique(write),
        network=network,
        network_reason=reason,
        cache=cache,
        env=env,
    )


def _folder(config: StdioServer, base_dir: Path) -> Path:
    return base_dir / config.cwd if config.cwd else base_dir


def _search_paths(config: StdioServer, folder: Path) -> list[str]:
    """The folders the server's own `env` puts on its interpreter's search path (PYTHONPATH,
    NODE_PATH): the agent's declaration (and part of its trust), read only; never one as wide
    as the whole system or the home folder."""
    folders = []
    for name in SEARCH_PATH_VARIABLES:
        for entry in config.env.get(name, "").split(os.pathsep):
            path = Path(os.path.realpath(folder / os.path.expanduser(entry))) if entry else None
            if path is not None and not entry.startswith("env://") and not _too_wide(path):
                folders.append(str(path))
    return folders


def _too_wide(path: Path) -> bool:
    return path == Path(path.anchor) or Path(os.path.realpath(Path.home())).is_relative_to(path)


def _network(identity: ServerIdentity, declared: bool | None) -> tuple[bool, str]:
    if declared is not None:
        return declared, "declared in the agent"
    if identity.launcher is not None:
        return True, f"{identity.launcher} downloads the server's package"
    if identity.kind is not None:
        needs = "needs" if identity.kind.network else "does not need"
        return identity.kind.network, f"the {identity.kind.name} server {needs} it"
    return True, "a server Foundry does not know may need it (declare confinement.network)"


def _may_serve(workspace: Path, execute: list[str]) -> bool:
    """A workspace that is the whole system, the home folder, holds Foundry's own data or lies
    in what the server may run (its installation: the agents shipped inside Foundry's) is never
    given to a server to change: what it may write it must never run."""
    real = Path(os.path.realpath(workspace))
    if any(real.is_relative_to(os.path.realpath(path)) for path in execute):
        return False
    home = FoundryHome.from_environment()
    protected = [Path(os.path.realpath(p)) for p in (home.data_dir, home.config_dir)]
    if _too_wide(real):
        return False
    return not any(folder.is_relative_to(real) for folder in protected)


def _installations(identity: ServerIdentity) -> list[str]:
    """The folders each program on the way was installed in: its virtual environment, the
    node_modules it lies in, its prefix's bin and lib folders; this Python's own for `python`."""
    folders: list[str] = []
    for program in identity.programs:
        for path in {program, Path(os.path.realpath(program))}:
            folders += _installation_of(path)
        folders += _interpreter_of(program)
    return folders


def _installation_of(program: Path) -> list[str]:
    # a virtual environment's python is a link to its base interpreter, which Foundry's own
    # may share: the environment it is found in is its installation, not Foundry's
    for parent in program.parents:
        if (parent / "pyvenv.cfg").is_file():
            return [str(parent), *_venv_home(parent / "pyvenv.cfg")]
    if _same_file(program, Path(sys.executable)):
        # the packaged app is its own Python: its folder holds the program and its libraries
        bundle = [str(program.parent)] if getattr(sys, "frozen", False) else []
        return [sys.prefix, sys.base_prefix, *bundle]
    if "node_modules" in program.parts:
        parts = program.parts
        return [str(Path(*parts[: parts.index("node_modules") + 1]))]
    if program.parent.name in BIN_FOLDERS:
        prefix = program.parent.parent
        return [str(prefix / name) for name in PREFIX_FOLDERS]
    return [str(program)]


def _venv_home(config: Path) -> list[str]:
    """The base installation of a virtual environment, from its pyvenv.cfg `home`."""
    try:
        lines = config.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    for line in lines:
        key, _, value = line.partition("=")
        if key.strip() == "home" and value.strip():
            return [str(Path(value.strip()).parent / name) for name in PREFIX_FOLDERS]
    return []


def _interpreter_of(program: Path) -> list[str]:
    """The installation of the interpreter a script's `#!` line names (`/usr/bin/env node`)."""
    try:
        with open(program, "rb") as file:
            first = file.readline(256)
    except OSError:
        return []
    if not first.startswith(b"#!"):
        return []
    words = first[2:].decode(errors="replace").split()
    if words[:1] and Path(words[0]).name == "env":
        words = [word for word in words[1:] if not word.startswith("-")]
    found = shutil.which(words[0]) if words else None
    return _installation_of(Path(found)) if found else []


def _resolver_targets() -> list[str]:
    """Where /etc/resolv.conf and /etc/localtime lead (systemd keeps them under /run)."""
    return [os.path.realpath(f"/etc/{name}") for name in ("resolv.conf", "localtime")]


def _same_file(one: Path, other: Path) -> bool:
    try:
        return os.path.samefile(one, other) and one.name == other.name
    except OSError:
        return False


def _unique(paths: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(os.path.normpath(path) for path in paths if path))


@contextmanager
def confined(
    params: StdioServerParameters, confinement: Confinement
) -> Iterator[StdioServerParameters]:
    """`params` started through the sandbox launcher (as they are, where the kernel cannot
    confine), with a private temporary folder removed afterwards."""
    env = {**(params.env or {}), **confinement.env}
    if confinement.cache is not None:
        os.makedirs(confinement.cache, mode=0o700, exist_ok=True)
    if not kernel_support().enforced:
        _say_unconfined_once()
        yield params.model_copy(update={"env": env})
        return
    program = _program(params, env)
    temporary = tempfile.mkdtemp(prefix="foundry-server-")
    launcher = _launcher()
    env.update({"TMPDIR": temporary, "TMP": temporary, "TEMP": temporary, CONFINED_MARK: "1"})
    try:
        yield params.model_copy(
            update={
                "command": launcher[0],
                "args": [*launcher[1:], confinement.spec(temporary), "--", program, *params.args],
                "env": env,
            }
        )
    finally:
        shutil.rmtree(temporary, ignore_errors=True)


@functools.cache
def _say_unconfined_once() -> None:
    logger.warning("%s", kernel_support().describe())


def _program(params: StdioServerParameters, env: dict[str, str]) -> str:
    """The file the server's command names, found as exec would find it (FileNotFoundError
    where it is not, as if it had been run)."""
    command = params.command
    if "/" in command:
        found = os.path.join(params.cwd or "", command)
        if os.path.exists(found):
            return os.path.abspath(found)
    else:
        located = shutil.which(command, path=env.get("PATH", os.defpath))
        if located is not None:
            return located
    raise FileNotFoundError(2, "No such file or directory", command)


def _launcher() -> list[str]:
    """How to run sandbox_exec: this Python, isolated; the packaged app answers `-m` itself."""
    if getattr(sys, "frozen", False):
        return [sys.executable, "-m", "foundry.tools.sandbox_exec"]
    return [sys.executable, "-I", "-S", str(Path(sandbox_exec.__file__))]


def _platform() -> str:
    return {"darwin": "macOS", "win32": "Windows"}.get(sys.platform, "this kernel has no Landlock")
