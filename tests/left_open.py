"""The guard against tests that leave a store open or an engine running.

Every `Store` and every started `Engine` is noted with the test (or the wider fixture) that made
it. After each test, what that test made and did not close fails it, loudly, and is closed then
(so one leak does not pile up file descriptors for every later test: 1,000 of them by the end of
tests/supervision once). What a module- or session-scoped fixture made is checked when the
session ends. The hooks are imported by tests/conftest.py."""

from __future__ import annotations

import contextlib
import gc
import weakref
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any

import pytest

from foundry.runtime.engine import Engine
from foundry.store import Store

SESSION = "the session"
DESCRIBED = {
    "store": ("a store opened", "still open"),
    "engine": ("an engine started", "still running"),
}


@dataclass
class _Made:
    """A store or an engine, who made it, and whether that was a test's own fixture or body."""

    thing: weakref.ref[Any]
    kind: str
    owner: str
    in_the_test: bool


class _Ledger:
    """What is open now, and the test or fixture setup under way that would be its owner."""

    def __init__(self) -> None:
        self.made: dict[int, _Made] = {}
        self.owner = SESSION
        self.scopes: list[tuple[str, str]] = []  # (scope, name) of the fixtures being set up
        self.kept: list[object] = []

    def note(self, thing: object, kind: str) -> None:
        in_the_test = self.owner != SESSION and all(s == "function" for s, _ in self.scopes)
        owner = self.owner
        if not in_the_test and self.scopes:
            scope, name = self.scopes[-1]
            owner = f"the {scope} fixture {name!r}"
        self.made[id(thing)] = _Made(weakref.ref(thing), kind, owner, in_the_test)
        if not in_the_test:  # kept, or the fixture's end would drop it unclosed, unseen
            self.kept.append(thing)

    def forget(self, thing: object) -> None:
        self.made.pop(id(thing), None)
        self.kept = [kept for kept in self.kept if kept is not thing]

    def left_open(self, owner: str | None) -> list[_Made]:
        """What is still open of what `owner` made in its test (None: all that is open)."""
        found = [m for m in self._alive() if owner is None or (m.in_the_test and m.owner == owner)]
        if found:  # only unreachable cycles may hold them: those are not leaks
            gc.collect()
            found = [m for m in found if m.thing() is not None and id(m.thing()) in self.made]
        return found

    def _alive(self) -> list[_Made]:
        for key, made in list(self.made.items()):
            if made.thing() is None:
                del self.made[key]
        return list(self.made.values())


LEDGER = _Ledger()


def _noting(method: Callable[..., Any], kind: str) -> Callable[..., Any]:
    def noted(self: Any, *args: Any, **kwargs: Any) -> Any:
        result = method(self, *args, **kwargs)
        LEDGER.note(self, kind)
        return result

    return noted


def _forgetting(method: Callable[..., Any]) -> Callable[..., Any]:
    def forgotten(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        finally:
            LEDGER.forget(self)

    return forgotten


def pytest_configure(config: pytest.Config) -> None:
    """Note stores as they are made and engines as they start; forget them as they close."""
    Store.__init__ = _noting(Store.__init__, "store")  # type: ignore[method-assign]
    Store.close = _forgetting(Store.close)  # type: ignore[method-assign]
    Engine.start = _noting(Engine.start, "engine")  # type: ignore[method-assign]
    Engine.stop = _forgetting(Engine.stop)  # type: ignore[method-assign]


def close_and_describe(left: list[_Made]) -> str:
    """Stop the engines, then close the stores; one line for each."""
    lines = []
    for made in sorted(left, key=lambda m: m.kind):  # engines before the stores they use
        thing = made.thing()
        if thing is None:
            continue
        made_how, left_how = DESCRIBED[made.kind]
        lines.append(f"  {made_how} by {made.owner}, {left_how}")
        with contextlib.suppress(Exception):
            thing.stop() if made.kind == "engine" else thing.close()
    return "\n".join(lines)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    LEDGER.owner = item.nodeid
    try:
        return (yield)
    finally:
        LEDGER.owner = item.nodeid


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef: Any, request: Any) -> Generator[Any, None, Any]:
    LEDGER.scopes.append((fixturedef.scope, fixturedef.argname))
    try:
        return (yield)
    finally:
        LEDGER.scopes.pop()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, None, None]:
    result = yield
    left = LEDGER.left_open(item.nodeid)
    LEDGER.owner = SESSION
    if left:
        described = close_and_describe(left)
        pytest.fail(
            f"the test left these open (close them in its fixture or body):\n{described}",
            pytrace=False,
        )
    return result


def pytest_sessionfinish(session: pytest.Session) -> None:
    left = LEDGER.left_open(None)
    if left:
        described = close_and_describe(left)
        session.config.get_terminal_writer().line(
            f"\nLEFT OPEN at the end of the session:\n{described}", red=True, bold=True
        )
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
