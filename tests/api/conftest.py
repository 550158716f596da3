"""The approvals API served over real HTTP on loopback, against a real SQLite store."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path

import httpx
import pytest

from foundry.api import ApiServer, create_app
from foundry.store import Store
from tests.api.records import AUTH, TOKEN

Serve = Callable[..., Awaitable[str]]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(f"sqlite:///{tmp_path / 's.db'}") as store:
        yield store


@pytest.fixture
async def serve(store: Store) -> AsyncIterator[Serve]:
    """Starts the API over `store` on loopback; stops every server it started."""
    servers: list[ApiServer] = []

    async def start(expose_content: bool = False, shadow_supervisors: bool = False) -> str:
        app = create_app(
            store, TOKEN, expose_content=expose_content, shadow_supervisors=shadow_supervisors
        )
        server = ApiServer(app)
        servers.append(server)
        return await server.start()

    yield start
    for server in servers:
        await server.stop()


@pytest.fixture
async def base_url(serve: Serve) -> str:
    return await serve()


@pytest.fixture
async def client(base_url: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=base_url, headers=AUTH, timeout=10) as client:
        yield client
