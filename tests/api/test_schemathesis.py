"""Property-based checks of every operation in the approvals API's own OpenAPI schema."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error, response_schema_conformance

from foundry.api import create_app
from foundry.store import ApprovalRecord, Store
from foundry.store.tables import utc_now

TOKEN = "schemathesis-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(f"sqlite:///{tmp_path / 's.db'}") as store:
        store.approvals.create(
            ApprovalRecord(
                agent_id="claude",
                tool="filesystem.write_file",
                params={"path": "/p/main.go", "content": "package main"},
                expires_at=utc_now() + timedelta(minutes=5),
            )
        )
        yield store


@pytest.fixture
def api_schema(store: Store) -> schemathesis.BaseSchema:
    return schemathesis.openapi.from_asgi("/openapi.json", create_app(store, TOKEN), headers=AUTH)


schema = schemathesis.pytest.from_fixture("api_schema")


@schema.parametrize()
@settings(
    max_examples=25,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_no_operation_fails_on_the_server(case: schemathesis.Case) -> None:
    case.call_and_validate(headers=AUTH, checks=[not_a_server_error, response_schema_conformance])
