"""Store fixtures: each test runs on a fresh SQLite file and, given a server, on PostgreSQL."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from foundry.store import Store
from foundry.store.database import normalise_url

from ..conftest import POSTGRES_URL


def _fresh_postgres_database() -> tuple[str, sa.Engine, str]:
    admin = sa.create_engine(normalise_url(POSTGRES_URL), isolation_level="AUTOCOMMIT")
    name = f"foundry_test_{uuid.uuid4().hex[:12]}"
    with admin.connect() as connection:
        connection.execute(sa.text(f'CREATE DATABASE "{name}"'))
    url = sa.make_url(normalise_url(POSTGRES_URL)).set(database=name)
    return url.render_as_string(hide_password=False), admin, name


def _drop(admin: sa.Engine, name: str) -> None:
    with admin.connect() as connection:
        connection.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """The URL of an empty database of each kind Foundry supports."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'store.sqlite3'}"
        return
    if not POSTGRES_URL:
        pytest.skip("no PostgreSQL server given: set FOUNDRY_DATABASE_URL (as .ci/run does)")
    url, admin, name = _fresh_postgres_database()
    try:
        yield url
    finally:
        _drop(admin, name)


@pytest.fixture
def store(database_url: str) -> Iterator[Store]:
    with Store.open(database_url) as opened:
        yield opened
