"""The gateway over streamable HTTP: loopback only, the approvals API's token as Bearer."""

from __future__ import annotations

import asyncio
import sys
from typing import TYPE_CHECKING

from starlette.types import ASGIApp

from foundry.api.auth import TokenGuard
from foundry.api.server import ApiServer
from foundry.api.token import TOKEN_FILE, load_or_create_token
from foundry.gateway.stdio import LINE_LIMIT
from foundry.home import FoundryHome

if TYPE_CHECKING:
    from foundry.gateway.server import Gateway

HOST = "127.0.0.1"
PATH = "/mcp"
IDLE_TIMEOUT_S = 30 * 60.0  # a client silent this long has left: its session ends (SDK default)


def http_app(gateway: Gateway, token: str, idle_timeout_s: float = IDLE_TIMEOUT_S) -> ASGIApp:
    """The gateway's streamable HTTP app; every request needs `Authorization: Bearer <token>`
    (never in the URL, where logs and histories keep it), and a body no longer than a message
    on stdio may be (413 beyond, before it is read whole). A client's session ends when it ends
    its HTTP session (DELETE) or after `idle_timeout_s` with no request in flight and no stream
    open. Serve it inside `gateway.server.session_manager.run()`."""
    app = gateway.server.streamable_http_app(
        streamable_http_path=PATH,
        host=HOST,
        session_idle_timeout=idle_timeout_s,
        max_request_body_size=LINE_LIMIT,  # the SDK's default, 4 MiB, would refuse less
    )
    return TokenGuard(app, token, in_path=False)


async def serve_http(gateway: Gateway, home: FoundryHome, port: int) -> None:
    """Serve on loopback until interrupted, saying where and with which token."""
    app = http_app(gateway, load_or_create_token(home.config_dir))
    stop_watching = gateway.watch()
    server = ApiServer(app, HOST, port)
    try:
        async with gateway.server.session_manager.run():
            await server.start()
            print(
                f"gateway at {server.url}{PATH}: send Authorization: Bearer <the token in "
                f"{home.config_dir / TOKEN_FILE} or FOUNDRY_API_TOKEN>",
                file=sys.stderr,
                flush=True,
            )
            await asyncio.Event().wait()
    finally:
        # the clients' sessions are ended first, with the streams they hold open: the server
        # would otherwise wait for those, then cancel them with an error logged
        stop_watching()
        await server.stop()
