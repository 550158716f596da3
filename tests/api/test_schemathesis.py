"""Property-based checks of every operation in the approvals API's own OpenAPI schema.

The operations are driven with Hypothesis directly rather than through schemathesis's pytest
plugin, whose hooks break with each new pytest (9.2 removed what it relied on).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error, response_schema_conformance

from foundry.api import create_app
from foundry.store import ApprovalRecord, Store
from foundry.store.tables import utc_now

TOKEN = "schemathesis-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
CHECKS = [not_a_server_error, response_schema_conformance]


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


def _check_operation(operation: schemathesis.APIOperation) -> None:
    @given(case=operation.as_strategy())
    @settings(
        max_examples=25,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )
    def check(case: schemathesis.Case) -> None:
        case.call_and_validate(headers=AUTH, checks=CHECKS)

    check()


def test_no_operation_fails_on_the_server(store: Store) -> None:
    schema = schemathesis.openapi.from_asgi("/openapi.json", create_app(store, TOKEN), headers=AUTH)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 8, "the API's schema lost operations"
    for operation in operations:
        _check_operation(operation)
