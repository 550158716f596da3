"""A session waiting for a person learns a decision made in this process at once, not at the
next poll of the store."""

from __future__ import annotations

import asyncio
import sys
import threading
from pathlib import Path

import pytest

from foundry.llm.base import ToolCall
from foundry.session.events import EventBody
from foundry.store import Store
from foundry.store.tables import ApprovalRecord, TraceRecord
from foundry.supervision.inbox import HumanInbox
from foundry.supervision.resolution import resolve_approval
from foundry.supervision.wakeups import APPROVAL_WAKEUPS

AN_HOUR = 3600.0


async def nothing(body: EventBody) -> None:
    return None


def inbox(store: Store, poll_s: float) -> HumanInbox:
    return HumanInbox(store, "agent", "session", nothing, timeout_s=AN_HOUR, poll_s=poll_s)


async def first_pending(store: Store) -> str:
    while not (pending := await asyncio.to_thread(store.approvals.list, "pending")):
        await asyncio.sleep(0.01)
    return pending[0].id


async def test_a_decision_made_in_this_process_wakes_the_waiting_call(tmp_path: Path) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 's.db'}")
    call = ToolCall(id="c", name="fs.write_file", arguments={"path": "x"})
    # The store is polled once an hour: only the wake-up can end this wait in time.
    deciding = asyncio.ensure_future(inbox(store, AN_HOUR).decide(call, "L0", "asks"))
    approval_id = await first_pending(store)
    person = threading.Thread(
        target=resolve_approval, args=(store, approval_id, "approved", "human:test", "ok")
    )
    person.start()
    decision = await asyncio.wait_for(deciding, 30)
    person.join()
    assert decision.allowed and decision.by == "human:test"
    store.close()


async def test_an_approval_that_expires_is_timed_out_without_waiting_for_the_poll(
    tmp_path: Path,
) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 's.db'}")
    call = ToolCall(id="c", name="fs.write_file", arguments={"path": "x"})
    waiting = HumanInbox(store, "agent", "session", nothing, timeout_s=0.2, poll_s=AN_HOUR)
    decision = await asyncio.wait_for(waiting.decide(call, "L0", "asks"), 30)
    assert not decision.allowed and decision.by == "timeout"
    store.close()


async def test_waiting_on_one_approval_is_not_woken_by_another(tmp_path: Path) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 's.db'}")
    first = asyncio.ensure_future(
        inbox(store, AN_HOUR).decide(ToolCall(id="a", name="t.a", arguments={}), "L0", "a")
    )
    first_id = await first_pending(store)
    second = asyncio.ensure_future(
        inbox(store, AN_HOUR).decide(ToolCall(id="b", name="t.b", arguments={}), "L0", "b")
    )
    while len(await asyncio.to_thread(store.approvals.list, "pending")) < 2:
        await asyncio.sleep(0.01)
    pending = await asyncio.to_thread(store.approvals.list, "pending")
    second_id = next(a.id for a in pending if a.id != first_id)
    await asyncio.to_thread(resolve_approval, store, second_id, "denied", "human:test", "no")
    assert not (await asyncio.wait_for(second, 30)).allowed
    await asyncio.sleep(0.2)
    assert not first.done()  # still waiting for its own decision
    first.cancel()
    await asyncio.gather(first, return_exceptions=True)
    store.close()


RESOLVE_ELSEWHERE = """
import sys
from foundry.store import Store
from foundry.supervision.resolution import resolve_approval
with Store.open(sys.argv[1]) as store:
    resolve_approval(store, sys.argv[2], "approved", "human:cli:far", "from afar")
"""


async def test_a_decision_made_by_another_process_wakes_the_waiting_call(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 's.db'}"
    store = Store.open(url)
    call = ToolCall(id="c", name="fs.write_file", arguments={"path": "x"})
    # polled once an hour: only the store's change watch can end this wait in time
    deciding = asyncio.ensure_future(inbox(store, AN_HOUR).decide(call, "L0", "asks"))
    approval_id = await first_pending(store)
    command = [sys.executable, "-c", RESOLVE_ELSEWHERE, url, approval_id]
    elsewhere = await asyncio.create_subprocess_exec(*command)
    assert await elsewhere.wait() == 0
    decision = await asyncio.wait_for(deciding, 30)
    assert decision.allowed and decision.by == "human:cli:far"
    store.close()


async def test_a_call_cancelled_while_its_request_is_announced_withdraws_its_approval(
    tmp_path: Path,
) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 's.db'}")
    announcing = asyncio.Event()

    async def slow_notify(body: EventBody) -> None:
        announcing.set()
        await asyncio.sleep(AN_HOUR)  # the chat's event log held up

    waiting = HumanInbox(store, "agent", "session", slow_notify, timeout_s=AN_HOUR)
    call = ToolCall(id="c", name="fs.write_file", arguments={"path": "x"})
    deciding = asyncio.ensure_future(waiting.decide(call, "L0", "asks"))
    await asyncio.wait_for(announcing.wait(), 30)
    deciding.cancel()
    await asyncio.gather(deciding, return_exceptions=True)
    [approval] = store.approvals.list()
    assert (approval.status, approval.resolved_by) == ("timed_out", "withdrawn")
    store.close()


async def test_a_call_cancelled_while_its_approval_is_stored_withdraws_it(tmp_path: Path) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 's.db'}")
    call = ToolCall(id="c", name="fs.write_file", arguments={"path": "x"})
    deciding = asyncio.ensure_future(inbox(store, AN_HOUR).decide(call, "L0", "asks"))
    await asyncio.sleep(0)  # the store is being written in its thread
    deciding.cancel()
    await asyncio.gather(deciding, return_exceptions=True)
    assert [a.status for a in store.approvals.list()] in ([], ["timed_out"])
    assert store.approvals.list(status="pending") == []
    store.close()


async def test_a_call_woken_by_this_process_takes_the_resolution_it_is_handed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 's.db'}")
    call = ToolCall(id="c", name="fs.write_file", arguments={"path": "x"})
    reads: list[str] = []
    reading = store.approvals.get
    monkeypatch.setattr(store.approvals, "get", lambda i: reads.append(i) or reading(i))
    deciding = asyncio.ensure_future(inbox(store, AN_HOUR).decide(call, "L0", "asks"))
    approval_id = await first_pending(store)
    await asyncio.sleep(0.2)  # the call waits
    await asyncio.to_thread(resolve_approval, store, approval_id, "denied", "human:test", "no")
    decision = await asyncio.wait_for(deciding, 30)
    assert (decision.allowed, decision.by, decision.reason) == (False, "human:test", "no")
    # neither read back once stored (it listened before it was stored) nor once resolved (the
    # resolution came with the wake-up)
    assert reads == []
    store.close()


async def test_a_resolution_that_is_not_committed_wakes_no_one(tmp_path: Path) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 's.db'}")
    call = ToolCall(id="c", name="fs.write_file", arguments={"path": "x"})
    deciding = asyncio.ensure_future(inbox(store, AN_HOUR).decide(call, "L0", "asks"))
    approval_id = await first_pending(store)

    def broken_trace(resolved: ApprovalRecord) -> TraceRecord:
        raise RuntimeError("the trace cannot be written")

    with pytest.raises(RuntimeError):
        await asyncio.to_thread(
            store.approvals.resolve,
            approval_id,
            "approved",
            "human:test",
            trace=broken_trace,
            committed=APPROVAL_WAKEUPS.wake,
        )
    await asyncio.sleep(0.2)
    assert not deciding.done()  # neither approved nor woken: the resolution never happened
    assert store.approvals.get(approval_id).status == "pending"
    assert store.traces.list() == []
    await asyncio.to_thread(resolve_approval, store, approval_id, "denied", "human:test", "no")
    assert not (await asyncio.wait_for(deciding, 30)).allowed
    assert [(t.approval_id, t.decision) for t in store.traces.list()] == [(approval_id, "deny")]
    store.close()


async def test_a_decision_made_elsewhere_before_the_call_waits_is_not_missed(
    tmp_path: Path,
) -> None:
    """Another process resolves the approval while this call still announces it (before it
    waits): the call was listening from before the approval was stored, so it is woken."""
    url = f"sqlite:///{tmp_path / 's.db'}"
    store = Store.open(url)

    async def resolved_elsewhere_meanwhile(body: EventBody) -> None:
        approval_id = getattr(body, "approval_id", None)
        if body.kind == "approval_requested" and approval_id:
            command = [sys.executable, "-c", RESOLVE_ELSEWHERE, url, approval_id]
            elsewhere = await asyncio.create_subprocess_exec(*command)
            assert await elsewhere.wait() == 0

    # polled once an hour: only the change watch can tell the call in time
    waiting = HumanInbox(
        store, "agent", "session", resolved_elsewhere_meanwhile, timeout_s=AN_HOUR, poll_s=AN_HOUR
    )
    call = ToolCall(id="c", name="fs.write_file", arguments={"path": "x"})
    decision = await asyncio.wait_for(waiting.decide(call, "L0", "asks"), 30)
    assert decision.allowed and decision.by == "human:cli:far"
    store.close()
