"""Who may call the approvals API: a bearer token, or the same token as a `/t/{token}` prefix.

The prefix exists for agent-mesh supervisors, which send no Authorization header: the token in
the path is a capability. Only `GET /health` is open. The check runs before routing, so an
unauthenticated caller learns nothing, not even which routes exist.
"""

from __future__ import annotations

import hmac

from fastapi.security import HTTPBearer
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from foundry.api.token import check_token

OPEN_PATHS = frozenset({"/health"})
PREFIX = "/t/"

bearer_scheme = HTTPBearer(
    auto_error=False,
    description="The API token (FOUNDRY_API_TOKEN or the config folder's api-token file). "
    "Clients that cannot send headers may put it in the path instead: /t/{token}/approvals.",
)


def same_token(given: str, expected: str) -> bool:
    """Compare in constant time, so response times do not leak the token."""
    return hmac.compare_digest(_bytes(given), _bytes(expected))


class TokenGuard:
    """ASGI middleware that lets a request through only with the token, in its header or path."""

    def __init__(self, app: ASGIApp, token: str, in_path: bool = True) -> None:
        """`in_path`: whether the token may come as the `/t/{token}` prefix too (the approvals
        API's, for agent-mesh supervisors); the gateway takes it in the header only."""
        self.app = app
        self.token = check_token(token)
        self.in_path = in_path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self.in_path and scope["path"].startswith(PREFIX):
            await self._through_prefix(scope, receive, send)
            return
        if scope["path"] in OPEN_PATHS or self._has_bearer(scope):
            await self.app(scope, receive, send)
            return
        await _unauthorized("send Authorization: Bearer <token>")(scope, receive, send)

    async def _through_prefix(self, scope: Scope, receive: Receive, send: Send) -> None:
        given, _, rest = scope["path"][len(PREFIX) :].partition("/")
        if not same_token(given, self.token):
            await _unauthorized("the token in the path is not this API's token")(
                scope, receive, send
            )
            return
        raw = scope.get("raw_path") or scope["path"].encode("utf-8")
        raw_rest = raw[len(PREFIX) :].partition(b"/")[2]
        inner = {**scope, "path": "/" + rest, "raw_path": b"/" + raw_rest}
        await self.app(inner, receive, send)

    def _has_bearer(self, scope: Scope) -> bool:
        for name, value in scope["headers"]:
            if name.lower() != b"authorization":
                continue
            scheme, _, credentials = value.decode("latin-1").partition(" ")
            return scheme.lower() == "bearer" and same_token(credentials.strip(), self.token)
        return False


def _unauthorized(reason: str) -> JSONResponse:
    message = f"not authorized: {reason}"
    return JSONResponse(
        {"error": message, "detail": message},  # agent-mesh's key, and FastAPI's
        status_code=401,
        headers={"WWW-Authenticate": "Bearer"},
    )


def _bytes(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")
