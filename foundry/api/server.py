"""Serving the approvals API on loopback from inside an existing asyncio loop."""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
from collections.abc import Iterator

import uvicorn
from starlette.types import ASGIApp

log = logging.getLogger(__name__)
START_TIMEOUT_S = 10.0
STOP_TIMEOUT_S = 10.0
# An app that holds requests open (GET /approvals?wait=) keeps an asyncio.Event under this name
# in its `state`: the server sets it when it stops, and those requests answer at once (else
# stopping would wait for them, and then cancel them with an error logged).
HELD_UNTIL_STOP = "held_until_stop"


class ApiServerError(RuntimeError):
    """The API server could not start."""


class _EmbeddedServer(uvicorn.Server):
    """uvicorn's server without its signal handlers: the host application owns the signals."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class ApiServer:
    """Runs `app` (the API, or the gateway over HTTP) with uvicorn as a task of the running
    loop, listening on loopback only."""

    def __init__(self, app: ASGIApp, host: str = "127.0.0.1", port: int = 0) -> None:
        if not is_loopback(host):
            raise ValueError(f"the approvals API listens on loopback only, not on {host!r}")
        config = uvicorn.Config(
            app,
            host=host,
            port=port,
            loop="none",
            lifespan="off",
            log_level="warning",
            timeout_graceful_shutdown=int(STOP_TIMEOUT_S / 2),
        )
        self._host = host
        self._port = port
        self._app = app
        self._server = _EmbeddedServer(config)
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> str:
        """Start listening and return the base URL, with the port actually bound."""
        if self._task is not None:
            raise RuntimeError("the API server is already started")
        self._task = asyncio.create_task(self._serve(), name="foundry-api-server")
        try:
            await asyncio.wait_for(self._until_started(self._task), START_TIMEOUT_S)
        except BaseException:
            await self.stop()
            raise
        return self.url

    @property
    def url(self) -> str:
        host, port = self._server.servers[0].sockets[0].getsockname()[:2]
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{port}"

    async def stop(self) -> None:
        """Stop accepting, let open requests finish, then end the server task."""
        task, self._task = self._task, None
        if task is None:
            return
        self._server.should_exit = True
        holding = getattr(getattr(self._app, "state", None), HELD_UNTIL_STOP, None)
        if isinstance(holding, asyncio.Event):
            holding.set()
        try:
            await asyncio.wait_for(asyncio.shield(task), STOP_TIMEOUT_S)
        except TimeoutError:
            log.warning("the API server did not stop within %s s; cancelling it", STOP_TIMEOUT_S)
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        except ApiServerError:
            pass

    async def _until_started(self, task: asyncio.Task[None]) -> None:
        while not self._server.started:
            if task.done():
                task.result()
                raise ApiServerError("the API server stopped before it started")
            await asyncio.sleep(0.01)

    async def _serve(self) -> None:
        try:
            await self._server.serve()
        except SystemExit:  # uvicorn exits when it cannot bind; a task must not raise that
            raise ApiServerError(
                f"cannot listen on {self._host}:{self._port}: the address may be in use"
            ) from None
