"""The queue of one in-process model: a worker thread that runs its calls one at a time, a
chat's before any review.

Chats' calls run in the order they came. Reviews run only when no chat's call waits; a review
that is running when a chat's call arrives is stopped at its next chunk and run again, from the
start, after the chats (llama.cpp offers no pause). A review's chunks are therefore kept until
its run completes, and handed over only then, so that nothing of a stopped run is seen.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from foundry.llm.priority import ModelUse, QueueState, WaitClock

log = logging.getLogger(__name__)

OnChunk = Callable[[dict[str, Any]], bool]  # True: stop generating
Completion = Callable[[dict[str, Any], OnChunk], Any]  # runs one call, streaming its chunks
Listener = Callable[[QueueState], None]
_INTERRUPTED = object()


@dataclass(order=True)
class _Job:
    priority: int
    sequence: int
    body: dict[str, Any] = field(compare=False)
    on_chunk: OnChunk = field(compare=False)
    use: ModelUse = field(compare=False)
    future: Future[Any] = field(compare=False, default_factory=Future)
    should_stop: Callable[[], bool] | None = field(compare=False, default=None)
    started: bool = field(compare=False, default=False)
    interrupted: bool = field(compare=False, default=False)
    runs: int = field(compare=False, default=0)
    clock: WaitClock = field(compare=False, default_factory=WaitClock)
    run_started_at: float = field(compare=False, default=0.0)

    def stopped(self) -> bool:
        return self.should_stop is not None and self.should_stop()


class ModelQueue:
    """Runs `complete(body, on_chunk)` for each submitted call on one thread, by priority."""

    def __init__(self, complete: Completion, thread_name: str = "foundry-llama") -> None:
        self._complete = complete
        self._thread_name = thread_name
        self._jobs: list[_Job] = []
        self._running: _Job | None = None
        self._order = itertools.count()
        self._changed = threading.Condition()
        self._listeners: list[Listener] = []
        self._thread: threading.Thread | None = None
        self._closed = False

    def submit(
        self,
        body: dict[str, Any],
        on_chunk: OnChunk,
        use: ModelUse | None = None,
        should_stop: Callable[[], bool] | None = None,
        clock: WaitClock | None = None,
    ) -> Future[Any]:
        """Queue one call. The future ends with the completion's result; cancelling it drops a
        call not started. `should_stop` is asked between a review's chunks (a chat's
        `on_chunk` answers for itself). `clock` counts the call's waits for its turn (a run
        lost to an interruption counts as waiting), so that its limits can leave them out."""
        use = use or ModelUse()
        job = _Job(int(use.priority), next(self._order), body, on_chunk, use)
        job.should_stop = should_stop
        if clock is not None:
            job.clock = clock
        job.clock.waiting()
        with self._changed:
            if self._closed:
                raise RuntimeError("the model's queue is closed")
            heapq.heappush(self._jobs, job)
            running = self._running
            if running is not None and running.priority > job.priority:
                running.interrupted = True  # it stops at its next chunk, then waits its turn
            self._start_worker()
            self._changed.notify()
        self._tell()
        return job.future

    def state(self) -> QueueState:
        """What runs now and what waits, in the order it will run."""
        with self._changed:
            waiting = sorted(job for job in self._jobs if not job.future.cancelled())
            running = self._running.use if self._running is not None else None
        return QueueState(running=running, waiting=tuple(job.use for job in waiting))

    def watch(self, listener: Listener) -> Callable[[], None]:
        """Call `listener` with the new state whenever a call is queued, starts or ends (on the
        thread that caused it: hand it over to your own loop). Returns what stops watching."""
        with self._changed:
            self._listeners.append(listener)

        def unwatch() -> None:
            with self._changed:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return unwatch

    def close(self) -> None:
        """Drop the calls not started; the running one ends at its next chunk."""
        with self._changed:
            self._closed = True
            dropped, self._jobs = self._jobs, []
            if self._running is not None:
                self._running.interrupted = True
            self._changed.notify_all()
        for job in dropped:
            if not job.future.cancel() and not job.future.done():
                job.future.set_exception(RuntimeError("the model was closed"))

    def _start_worker(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._work, name=self._thread_name, daemon=True)
            self._thread.start()

    def _work(self) -> None:
        while (job := self._next()) is not None:
            self._run(job)

    def _next(self) -> _Job | None:
        """The next call to run, marked running; None once the queue is closed."""
        with self._changed:
            while True:
                while not self._jobs and not self._closed:
                    self._changed.wait()
                if self._closed:
                    return None
                job = heapq.heappop(self._jobs)
                if job.started or job.future.set_running_or_notify_cancel():
                    job.started = True
                    job.interrupted = False
                    self._running = job
                    job.clock.running()
                    break
        self._tell()
        return job

    def _run(self, job: _Job) -> None:
        try:
            result = self._execute(job)
        except BaseException as error:  # the caller's future carries it
            self._finish(job, again=False)
            job.future.set_exception(error)
            return
        if self._finish(job, again=result is _INTERRUPTED):
            job.future.set_result(None if result is _INTERRUPTED else result)

    def _finish(self, job: _Job, again: bool) -> bool:
        """The call is no longer running; False when it was interrupted and queued again."""
        with self._changed:
            self._running = None
            again = again and not self._closed and not job.stopped()
            if again:  # its place among the reviews is kept; the lost run counts as waiting
                job.clock.lost(job.run_started_at)
                heapq.heappush(self._jobs, job)
        self._tell()
        return not again

    def _execute(self, job: _Job) -> Any:
        job.runs += 1
        job.run_started_at = time.monotonic()
        if not job.use.is_review:
            return self._complete(job.body, job.on_chunk)
        kept: list[dict[str, Any]] = []
        cut = False

        def keep(chunk: dict[str, Any]) -> bool:
            nonlocal cut
            if job.interrupted:
                cut = True
            if cut or job.stopped():
                return True
            kept.append(chunk)
            return False

        result = self._complete(job.body, keep)
        if cut:
            return _INTERRUPTED  # run again: nothing of this run is handed over
        for chunk in kept:
            if job.on_chunk(chunk):
                break
        return result

    def _tell(self) -> None:
        with self._changed:
            listeners = list(self._listeners)
        if not listeners:
            return
        state = self.state()
        for listener in listeners:
            try:
                listener(state)
            except Exception:  # a watcher's bug must not stop the model
                log.exception("a model queue listener failed")
