"""Two processes resolving the same approval on one SQLite file: one wins, the other conflicts."""

from __future__ import annotations

import multiprocessing
from collections import defaultdict
from multiprocessing.synchronize import Barrier
from pathlib import Path

from foundry.store import AlreadyResolved, ApprovalRecord, Store

ROUNDS = 200
WAIT_S = 60.0
Outcome = tuple[str, str, str]  # (worker, approval id, "won" or "conflict:<winner>" or an error)


def resolve_each(
    name: str, url: str, ids: list[str], barrier: Barrier, outcomes: multiprocessing.Queue[Outcome]
) -> None:
    """A worker process: for each approval, meet the other worker at the barrier, then race."""
    with Store.open(url) as store:
        for approval_id in ids:
            barrier.wait(WAIT_S)
            try:
                store.approvals.resolve(approval_id, "approved", name)
            except AlreadyResolved as conflict:
                outcomes.put((name, approval_id, f"conflict:{conflict.approval.resolved_by}"))
            except Exception as error:  # reported, so the test fails with the reason
                outcomes.put((name, approval_id, f"error:{error!r}"))
            else:
                outcomes.put((name, approval_id, "won"))


def collect(outcomes: multiprocessing.Queue[Outcome], count: int) -> dict[str, list[Outcome]]:
    by_id: dict[str, list[Outcome]] = defaultdict(list)
    for _ in range(count):
        outcome = outcomes.get(timeout=WAIT_S)
        by_id[outcome[1]].append(outcome)
    return by_id


def test_two_processes_resolving_one_approval_give_one_success_and_one_conflict(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'race.sqlite3'}"
    with Store.open(url) as store:
        ids = [
            store.approvals.create(ApprovalRecord(agent_id="racer", tool="fs.write")).id
            for _ in range(ROUNDS)
        ]
    spawn = multiprocessing.get_context("spawn")
    barrier = spawn.Barrier(2)
    outcomes: multiprocessing.Queue[Outcome] = spawn.Queue()
    workers = [
        spawn.Process(target=resolve_each, args=(name, url, ids, barrier, outcomes))
        for name in ("left", "right")
    ]
    for worker in workers:
        worker.start()
    try:
        by_id = collect(outcomes, 2 * ROUNDS)
    finally:
        for worker in workers:
            worker.join(WAIT_S)
            if worker.is_alive():
                worker.kill()

    assert [worker.exitcode for worker in workers] == [0, 0]
    assert set(by_id) == set(ids)
    for approval_id, results in by_id.items():
        wins = [name for name, _, outcome in results if outcome == "won"]
        conflicts = [outcome for _, _, outcome in results if outcome.startswith("conflict:")]
        assert len(wins) == 1 and len(conflicts) == 1, (approval_id, results)
        assert conflicts == [f"conflict:{wins[0]}"]
    with Store.open(url) as store:
        winners = {record.id: record.resolved_by for record in store.approvals.list("approved")}
    assert winners == {
        approval_id: next(name for name, _, outcome in results if outcome == "won")
        for approval_id, results in by_id.items()
    }
