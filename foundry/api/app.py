"""The approvals HTTP API (the agent-mesh supervisor protocol) as a FastAPI application.

Endpoints are plain `def`s: FastAPI runs them in its thread pool, so the approvals service (which
waits on the store) never blocks the event loop. Listing approvals is the exception: it may wait
(`wait=`) for one to appear, on the loop, and reads the approvals in a thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.metadata
from asyncio import FIRST_COMPLETED
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Depends, FastAPI, Query, Request, Security
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from foundry.api.auth import TokenGuard, bearer_scheme
from foundry.api.body_limit import MAX_BODY_BYTES, BodyLimit
from foundry.api.grant_binding import BindingError, bind_grant
from foundry.api.resolution_body import read_resolution
from foundry.api.server import HELD_UNTIL_STOP
from foundry.api.strict_json import StrictJsonRoute
from foundry.api.token import check_token
from foundry.api.views import (
    STORE_STATUS,
    ActedView,
    ApprovalDetail,
    ApprovalView,
    ErrorView,
    GrantView,
    HealthView,
    NewGrant,
    Resolution,
    TraceView,
    VersionView,
    approval_detail,
    approval_view,
    grant_view,
    trace_view,
)
from foundry.runtime.approvals import AlreadyResolved, ApprovalRecord, Approvals, NotFound, utc_now
from foundry.store import Store
from foundry.supervision.resolution import api_resolver, resolver_level

RECENT_TRACES = 10
STATUSES = ("pending", "approved", "denied", "timeout", "timed_out")
MIN_GRANT_PREFIX = 4  # agent-mesh's: a shorter prefix names no grant
APPROVAL_NOT_FOUND = "approval not found"  # agent-mesh's error texts
GRANT_NOT_FOUND = "grant not found"
ALREADY_RESOLVED = "approval already resolved"
MAX_WAIT_S = 60.0  # the longest a request for approvals is held: under common proxies' timeouts
NOT_FOUND: dict[int | str, dict[str, Any]] = {404: {"model": ErrorView}}
TOO_LARGE: dict[int | str, dict[str, Any]] = {
    413: {"model": ErrorView, "description": f"the body is over {MAX_BODY_BYTES} bytes"}
}
CONFLICT: dict[int | str, dict[str, Any]] = {
    **NOT_FOUND,
    **TOO_LARGE,
    409: {"model": ErrorView, "description": "already resolved"},
}
RESOLUTION_BODY: dict[str, Any] = {
    "requestBody": {
        "required": False,
        "content": {
            "application/json": {"schema": Resolution.model_json_schema()},
            "application/x-www-form-urlencoded": {"schema": Resolution.model_json_schema()},
        },
    }
}


@dataclass(frozen=True)
class ApiContext:
    approvals: Approvals
    expose_content: bool
    shadow_supervisors: bool = False  # a supervisor's resolution is only its shadow verdict


async def api_context(request: Request) -> ApiContext:
    """The API's approvals and settings (async: FastAPI would run a plain function in a thread)."""
    context: ApiContext = request.app.state.context
    return context


Context = Annotated[ApiContext, Depends(api_context)]

open_routes = APIRouter()


def _agent_mesh_route(*args: Any, **kwargs: Any) -> StrictJsonRoute:
    """A route that leaves out empty fields, as agent-mesh does."""
    return StrictJsonRoute(*args, **{**kwargs, "response_model_exclude_none": True})


routes = APIRouter(
    dependencies=[Security(bearer_scheme)],
    responses={401: {"model": ErrorView, "description": "missing or wrong token"}},
    route_class=_agent_mesh_route,  # type: ignore[arg-type]
)


@open_routes.get("/health")
async def health() -> HealthView:
    return HealthView()


@routes.get("/version")
async def version() -> VersionView:
    """Foundry's version, in agent-mesh's fields (Foundry does not know its commit or date)."""
    return VersionView(version=_foundry_version(), commit="none", date="unknown")


def _foundry_version() -> str:
    try:
        return importlib.metadata.version("foundry")
    except importlib.metadata.PackageNotFoundError:
        return "dev"


@routes.get("/openapi.json", include_in_schema=False)
def openapi(request: Request) -> dict[str, Any]:
    schema: dict[str, Any] = request.app.openapi()
    return schema


@routes.get("/approvals")
async def list_approvals(
    context: Context,
    request: Request,
    status: Annotated[
        str | None,
        Query(
            max_length=32,
            description="pending, approved, denied or timeout; another value lists every "
            "approval, as agent-mesh does",
        ),
    ] = None,
    tool: Annotated[str | None, Query(max_length=200, description="glob, e.g. fs.*")] = None,
    wait: Annotated[
        float,
        Query(
            ge=0,
            le=MAX_WAIT_S,
            description="seconds to hold the request while nothing matches: it is answered as "
            "soon as a matching approval appears, from any process sharing the store",
        ),
    ] = 0,
) -> list[ApprovalView]:
    stored = STORE_STATUS.get(status, status) if status in STATUSES else None
    records = await _approvals(context.approvals, stored, tool, wait, request)
    now = utc_now()
    return [approval_view(record, context.expose_content, now) for record in records]


async def _approvals(
    approvals: Approvals, status: str | None, tool: str | None, wait_s: float, request: Request
) -> list[ApprovalRecord]:
    """The approvals that match; with `wait_s`, the first non-empty answer within that time,
    or what there is when the client goes away or the server stops (HELD_UNTIL_STOP)."""
    if not wait_s:
        return await asyncio.to_thread(approvals.listed, status, tool)
    changed = asyncio.Event()
    deadline = asyncio.get_running_loop().time() + wait_s
    stopping: asyncio.Event = getattr(request.app.state, HELD_UNTIL_STOP)
    ends = {asyncio.ensure_future(stopping.wait()), asyncio.ensure_future(_disconnected(request))}
    try:
        async with approvals.waking(changed):
            while True:
                changed.clear()
                records = await asyncio.to_thread(approvals.listed, status, tool)
                left = deadline - asyncio.get_running_loop().time()
                if records or left <= 0 or any(end.done() for end in ends):
                    return records
                change = asyncio.ensure_future(changed.wait())
                await asyncio.wait({change, *ends}, timeout=left, return_when=FIRST_COMPLETED)
                change.cancel()
    finally:
        for end in ends:
            end.cancel()


async def _disconnected(request: Request) -> None:
    """Until the client disconnects, or sends a body no GET has (over the body limit): it is
    then as good as gone."""
    with contextlib.suppress(Exception):
        while (await request.receive())["type"] != "http.disconnect":
            pass


@routes.get("/approvals/{approval_id}", responses=NOT_FOUND)
def get_approval(approval_id: str, context: Context) -> ApprovalDetail:
    """The approval whose id is, or starts with, `approval_id`, and its context."""
    now = utc_now()
    record = context.approvals.get(context.approvals.full_id(approval_id))
    traces = context.approvals.recent_calls(record.agent_id, RECENT_TRACES)
    grants = context.approvals.active_grants(now)
    return approval_detail(record, context.expose_content, now, traces, grants)


# Async routes whose store work takes one thread hop: FastAPI runs a plain route in a thread
# and then checks its response in another, two hops on the way of every decision.
@routes.post("/approvals/{approval_id}/approve", responses=CONFLICT, openapi_extra=RESOLUTION_BODY)
async def approve(approval_id: str, context: Context, request: Request) -> ActedView:
    resolution = await read_resolution(request)
    return await asyncio.to_thread(_resolve, context, approval_id, "approved", resolution, request)


@routes.post("/approvals/{approval_id}/deny", responses=CONFLICT, openapi_extra=RESOLUTION_BODY)
async def deny(approval_id: str, context: Context, request: Request) -> ActedView:
    resolution = await read_resolution(request)
    return await asyncio.to_thread(_resolve, context, approval_id, "denied", resolution, request)


@routes.get("/grants")
def list_grants(context: Context) -> list[GrantView]:
    now = utc_now()
    return [grant_view(grant, now) for grant in context.approvals.active_grants(now)]


@routes.post("/grants", status_code=201, responses=TOO_LARGE)
def create_grant(context: Context, request: Request, body: NewGrant) -> GrantView:
    now = utc_now()
    try:
        binding = bind_grant(
            context.approvals, body.agent_glob(), body.approval_id, body.agent_path
        )
    except BindingError as error:
        problem = {"type": "value_error", "loc": ("body", error.field), "msg": str(error)}
        raise RequestValidationError([problem]) from None
    grant = context.approvals.grant(
        tool_glob=body.tools,
        expires_at=body.expiry(now),
        granted_by=api_resolver(body.granted_by, _caller(request)),
        agent_glob=binding.agent_glob,
        agent_path=binding.agent_path,
        param_scope=[c.model_dump(mode="json") for c in body.params] if body.params else None,
    )
    return grant_view(grant, now)


@routes.delete("/grants/{grant_id}", responses=NOT_FOUND)
def revoke_grant(grant_id: str, context: Context) -> ActedView:
    """End the active grant whose id is, or starts with, `grant_id` (4 characters at least)."""
    context.approvals.revoke(_grant_id(context.approvals, grant_id))
    return ActedView(status="revoked", id=grant_id)


def _grant_id(approvals: Approvals, given: str) -> str:
    """The id of the active grant `given` names: its id, or else the first whose id starts
    with it, as agent-mesh finds one."""
    active = [grant.id for grant in approvals.active_grants()]
    if given in active:
        return given
    if len(given) >= MIN_GRANT_PREFIX:
        for grant_id in active:
            if grant_id.startswith(given):
                return grant_id
    raise NotFound(GRANT_NOT_FOUND)


@routes.get("/traces")
def list_traces(
    context: Context,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    agent: Annotated[str | None, Query(max_length=200)] = None,
    tool: Annotated[str | None, Query(max_length=200, description="a tool's name")] = None,
) -> list[TraceView]:
    traces = context.approvals.recent_calls(agent, limit, tool)
    return [trace_view(trace, context.expose_content) for trace in traces]


def _caller(request: Request) -> str:
    """agent-mesh's default resolver name: http:<the client's address>."""
    return f"http:{request.client.host if request.client else 'unknown'}"


def _resolve(
    context: ApiContext, approval_id: str, status: str, resolution: Resolution, request: Request
) -> ActedView:
    """Resolve (one resolver wins), then trace the decision at the level the resolver's name
    claims: a supervisor's (`supervisor:NAME`, agent-mesh's convention) at L1, any other a
    human's. With shadow supervisors, a supervisor's resolution is kept as its shadow verdict
    and the approval waits for a person; the supervisor is answered as if it had resolved it."""
    resolver = api_resolver(resolution.resolved_by, _caller(request))
    if context.shadow_supervisors and resolver_level(resolver) == "supervisor":
        record = context.approvals.keep_supervisor_verdict(
            context.approvals.full_id(approval_id),
            status,
            resolver,
            resolution.reasoning,
            resolution.confidence,
        )
        return ActedView(status=status, id=record.id)
    record = context.approvals.resolve(
        context.approvals.full_id(approval_id),
        status,
        resolver,
        resolution.reasoning,
        resolution.confidence,
        level=resolver_level(resolver),
    )
    return ActedView(status=status, id=record.id)


async def _not_found(request: Request, error: Exception) -> JSONResponse:
    grant = request.scope["path"].startswith("/grants/")
    return JSONResponse({"error": GRANT_NOT_FOUND if grant else APPROVAL_NOT_FOUND}, 404)


async def _already_resolved(request: Request, error: Exception) -> JSONResponse:
    return JSONResponse({"error": ALREADY_RESOLVED}, status_code=409)


async def _http_error(request: Request, error: Exception) -> JSONResponse:
    """Starlette's errors (405, 413 while reading) with agent-mesh's key beside FastAPI's."""
    assert isinstance(error, StarletteHTTPException)
    body = {"error": str(error.detail), "detail": error.detail}
    return JSONResponse(body, status_code=error.status_code, headers=error.headers)


async def _invalid_request(request: Request, error: Exception) -> JSONResponse:
    """422 with each problem's type, place and message; never the input echoed back, which can
    be large and which, being the client's mistake, may not even be sendable as JSON."""
    assert isinstance(error, RequestValidationError)
    problems = [_problem(item) for item in error.errors()]
    first = problems[0] if problems else {"loc": ["body"], "msg": "invalid request"}
    summary = f"{'.'.join(str(part) for part in first['loc'])}: {first['msg']}"
    return JSONResponse({"error": summary, "detail": problems}, status_code=422)


def _problem(error: dict[str, Any]) -> dict[str, Any]:
    message = str(error.get("msg", "invalid"))
    reason = (error.get("ctx") or {}).get("error")
    if error.get("type") == "json_invalid" and reason:
        message = f"{message}: {reason}"
    return {"type": str(error.get("type")), "loc": list(error.get("loc", ())), "msg": message}


def create_app(
    store: Store, token: str, expose_content: bool = False, shadow_supervisors: bool = False
) -> FastAPI:
    """The approvals API over `store`; every route but GET /health needs `token`, which must be
    at least 16 characters (TokenError otherwise). Bodies are strict JSON of at most 1 MiB.
    With `shadow_supervisors`, a `supervisor:NAME` resolution is kept as that supervisor's
    shadow verdict and leaves the approval to a person (shadow mode, docs/policy.md)."""
    check_token(token)
    app = FastAPI(
        title="Foundry approvals API",
        version="1",
        summary="The agent-mesh supervisor protocol: approvals, grants and traces.",
        openapi_url=None,
        docs_url=None,
        redoc_url=None,
    )
    app.state.context = ApiContext(
        approvals=Approvals(store),
        expose_content=expose_content,
        shadow_supervisors=shadow_supervisors,
    )
    setattr(app.state, HELD_UNTIL_STOP, asyncio.Event())
    app.include_router(open_routes)
    app.include_router(routes)
    app.add_exception_handler(NotFound, _not_found)
    app.add_exception_handler(AlreadyResolved, _already_resolved)
    app.add_exception_handler(RequestValidationError, _invalid_request)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_middleware(BodyLimit, max_bytes=MAX_BODY_BYTES)
    app.add_middleware(TokenGuard, token=token)
    return app
