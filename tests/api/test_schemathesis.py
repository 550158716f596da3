"""Property-based checks of every operation in the approvals API's own OpenAPI schema.

The operations are driven with Hypothesis directly rather than through schemathesis's pytest
plugin, whose hooks break with each new pytest (9.2 removed what it relied on). Schemathesis
never generates NaN, infinities or lone surrogates (they cannot go on its wire), so a second
check puts them, and NUL characters, into the bodies it generates and sends those as raw bytes.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import response_schema_conformance
from starlette.testclient import TestClient

from foundry.api import create_app
from foundry.store import ApprovalRecord, Store
from foundry.store.tables import utc_now

TOKEN = "schemathesis-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
CHECKS = [not_a_server_error, response_schema_conformance]
SETTINGS = settings(
    max_examples=25,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
HUGE = "\x01huge\x01"  # sent as 1e309, a number Python reads as infinity
UNSENDABLE = st.sampled_from([float("nan"), float("inf"), float("-inf"), HUGE, "a\x00b"]) | (
    st.characters(categories=["Cs"]).map(lambda lone: f"text {lone} more")
)


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


def _check_operation(operation: schemathesis.APIOperation, mode: GenerationMode) -> None:
    @given(case=operation.as_strategy(generation_mode=mode))
    @SETTINGS
    def check(case: schemathesis.Case) -> None:
        _shorten_waits(case)
        case.call_and_validate(headers=AUTH, checks=CHECKS)

    check()


def _shorten_waits(case: schemathesis.Case) -> None:
    """A list may be held up to a minute (`wait=`) for an approval to appear: a valid wait is
    cut to 50 ms here, so the cases test the answer, not the patience (tests/api/test_api.py
    covers the waiting)."""
    wait = (case.query or {}).get("wait")
    if isinstance(wait, int | float) and not isinstance(wait, bool) and wait > 0.05:
        case.query["wait"] = 0.05


def _schema(store: Store) -> schemathesis.BaseSchema:
    return schemathesis.openapi.from_asgi("/openapi.json", create_app(store, TOKEN), headers=AUTH)


@pytest.mark.parametrize("mode", list(GenerationMode), ids=str)
def test_no_operation_fails_on_the_server(store: Store, mode: GenerationMode) -> None:
    operations = [result.ok() for result in _schema(store).get_all_operations()]
    assert len(operations) >= 8, "the API's schema lost operations"
    for operation in operations:
        if mode is GenerationMode.POSITIVE or _takes_input(operation):
            _check_operation(operation, mode)


def _takes_input(operation: schemathesis.APIOperation) -> bool:
    """Whether there is anything to make invalid besides the token, which every call sends."""
    names = {parameter.name for parameter in operation.iter_parameters()}
    return bool(operation.body) or bool(names - {"Authorization"})


def test_values_json_cannot_carry_are_refused_with_422(store: Store) -> None:
    """NaN, ±Infinity, 1e309, lone surrogates and NUL anywhere in a body that is otherwise what
    the schema asks for: 422 naming the place, never a 500."""
    operations = [result.ok() for result in _schema(store).get_all_operations()]
    with TestClient(create_app(store, TOKEN), raise_server_exceptions=False) as client:
        for operation in [op for op in operations if op.method.upper() == "POST"]:
            _check_unsendable_bodies(client, operation)


def _check_unsendable_bodies(client: TestClient, operation: schemathesis.APIOperation) -> None:
    @given(case=operation.as_strategy(), value=UNSENDABLE, data=st.data())
    @SETTINGS
    def check(case: schemathesis.Case, value: Any, data: st.DataObject) -> None:
        body = _with_value(case.body, value, data)
        response = client.request(
            case.method,
            case.formatted_path,
            content=json.dumps(body).replace(json.dumps(HUGE), "1e309").encode(),
            headers={**AUTH, "Content-Type": "application/json"},
        )
        assert response.status_code == 422, (operation.label, body, response.text)
        assert response.json()["detail"][0]["loc"][0] == "body"

    check()


def _with_value(body: Any, value: Any, data: st.DataObject) -> dict[str, Any]:
    """A copy of `body` (an object, else {}) with `value` put at a place drawn from it: one of
    its keys or items at any depth, or a new key."""
    target = copy.deepcopy(body) if isinstance(body, dict) else {}
    node = data.draw(st.sampled_from(_containers(target)))
    if isinstance(node, dict):
        node[data.draw(st.sampled_from([*sorted(node), "extra"]))] = value
    elif node:
        node[data.draw(st.integers(0, len(node) - 1))] = value
    else:
        node.append(value)
    return target


def _containers(value: Any) -> list[Any]:
    """Every object and array in `value`, itself first."""
    if isinstance(value, dict):
        return [value, *(inner for item in value.values() for inner in _containers(item))]
    if isinstance(value, list):
        return [value, *(inner for item in value for inner in _containers(item))]
    return []
