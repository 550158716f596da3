"""Approval changes reach this process's subscribers whichever process made them: at once for
this store's own commits, by NOTIFY on PostgreSQL and by watching the files on SQLite."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import sqlalchemy as sa

from foundry.store import ApprovalRecord, Store
from foundry.store.store import NewEvent

SETTLE_S = 0.5  # longer than the SQLite watch's counter read (0.25 s) and its file look (10 ms)
ANOTHER_PROCESS = """
import sys
from foundry.store import ApprovalRecord, Store
with Store.open(sys.argv[1]) as store:
    approval = store.approvals.create(ApprovalRecord(session_id="s", agent_id="a", tool="t.x"))
    if sys.argv[2] == "resolve":
        store.approvals.resolve(approval.id, "approved", "human:other")
"""


class Told:
    def __init__(self) -> None:
        self.times = 0
        self.event = threading.Event()

    def __call__(self) -> None:
        self.times += 1
        self.event.set()

    def wait(self) -> bool:
        told = self.event.wait(30)
        self.event.clear()
        return told


@contextmanager
def subscriber(store: Store) -> Iterator[Told]:
    told = Told()
    with store.approval_changes.subscribed(told):
        yield told


def in_another_process(url: str, action: str) -> None:
    subprocess.run([sys.executable, "-c", ANOTHER_PROCESS, url, action], check=True, timeout=60)


def pending(store: Store) -> ApprovalRecord:
    return store.approvals.create(ApprovalRecord(session_id="s", agent_id="a", tool="t.x"))


def test_a_change_committed_here_is_told_before_the_call_returns_and_only_once(
    store: Store,
) -> None:
    with subscriber(store) as told:
        approval = pending(store)
        assert told.times == 1
        store.approvals.resolve(approval.id, "denied", "human:test")
        assert told.times == 2
        time.sleep(SETTLE_S)  # the watch sees the same commits: they are not told again
        assert told.times == 2


def test_a_change_made_by_another_process_is_told(database_url: str) -> None:
    with Store.open(database_url) as store, subscriber(store) as told:
        in_another_process(database_url, "create")
        assert told.wait()
        in_another_process(database_url, "resolve")
        assert told.wait()


def test_a_change_through_another_store_object_is_told(database_url: str) -> None:
    with (
        Store.open(database_url) as store,
        Store.open(database_url) as other,
        subscriber(store) as told,
    ):
        approval = pending(other)
        assert told.wait()
        other.approvals.resolve(approval.id, "approved", "human:other")
        assert told.wait()


def test_other_writes_tell_no_one(database_url: str) -> None:
    with Store.open(database_url) as store, Store.open(database_url) as other:
        approval = pending(other)
        with subscriber(store) as told:
            session = other.sessions.create("agent", "a session")
            other.events.append_many([NewEvent(session.id, "token", {"text": "x"})] * 5)
            told.event.wait(SETTLE_S)
            assert told.times == 0
            other.approvals.resolve(approval.id, "approved", "human:other")
            assert told.wait()


def test_a_resolution_that_loses_the_race_tells_no_one(store: Store) -> None:
    approval = pending(store)
    store.approvals.resolve(approval.id, "approved", "human:first")
    with subscriber(store) as told:
        try:
            store.approvals.resolve(approval.id, "denied", "human:second")
        except Exception as error:
            assert type(error).__name__ == "AlreadyResolved"
        assert told.times == 0


def test_subscribers_that_leave_are_not_told(store: Store) -> None:
    with subscriber(store) as told:
        pass
    pending(store)
    assert told.times == 0


def test_a_failing_subscriber_does_not_keep_the_others_from_being_told(store: Store) -> None:
    def broken() -> None:
        raise RuntimeError("broken subscriber")

    with store.approval_changes.subscribed(broken), subscriber(store) as told:
        pending(store)
        assert told.times >= 1


def test_a_watch_that_cannot_start_still_tells_this_stores_changes(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    def unreachable() -> None:
        raise sa.exc.OperationalError("SELECT version", {}, Exception("database is locked"))

    monkeypatch.setattr(store.approval_changes, "_start", unreachable)
    with subscriber(store) as told:  # no error: the subscribers' polls remain
        pending(store)
        assert told.times == 1
