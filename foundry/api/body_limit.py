"""The size limit on request bodies: a body over 1 MiB gets 413 before it is read whole."""

from __future__ import annotations

from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

MAX_BODY_BYTES = 1 << 20
CLOSE = {"Connection": "close"}  # the rest of the body is never read: the connection ends


def too_large_message(limit: int) -> str:
    return (
        f"the request body is over {limit} bytes ({limit / (1 << 20):g} MiB), the most the "
        "approvals API reads; send a smaller JSON body"
    )


class BodyTooLarge(HTTPException):
    """Raised while reading a body once it has passed the limit; answered as 413."""

    def __init__(self, limit: int) -> None:
        super().__init__(status_code=413, detail=too_large_message(limit), headers=CLOSE)


class BodyLimit:
    """ASGI middleware: a declared Content-Length over the limit is refused before anything is
    read; a body that arrives bigger than the limit (chunked, or longer than declared) stops
    being read at the limit. Either way the client gets 413 and the server holds at most the
    limit plus one chunk."""

    def __init__(self, app: ASGIApp, max_bytes: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.max_bytes:
            text = too_large_message(self.max_bytes)
            message = {"error": text, "detail": text}  # agent-mesh's key, and FastAPI's
            response = JSONResponse(message, status_code=413, headers=CLOSE)
            await response(scope, receive, send)
            return
        await self.app(scope, _counting(receive, self.max_bytes), send)


def _counting(receive: Receive, limit: int) -> Receive:
    """`receive` that raises BodyTooLarge as soon as the body read so far passes `limit`."""
    seen = 0

    async def limited() -> Message:
        nonlocal seen
        message = await receive()
        if message["type"] == "http.request":
            seen += len(message.get("body", b""))
            if seen > limit:
                raise BodyTooLarge(limit)
        return message

    return limited


def _content_length(scope: Scope) -> int | None:
    try:
        return int(Headers(scope=scope).get("content-length", ""))
    except ValueError:
        return None
