"""The approving client of bench/policy.py's round trips, in a process of its own as the
approvals API's clients are: it imports httpx and nothing of Foundry, so that its pauses are a
client's (a process holding all of Foundry's modules paused up to 100 ms at a time for the
interpreter's full garbage collections, once in 60 to 100 round trips).

Run by bench/policy.py: python bench/approver.py BASE_URL [--poll SECONDS]
It approves approvals as they appear, printing when it saw and approved each, until killed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import time
from typing import Any

import httpx

LONG_POLL_S = 30


async def first_pending(client: httpx.AsyncClient, poll_s: float | None) -> str:
    """The id of the first pending approval: asked with `wait=` (the API answers when one
    appears), or by polling every `poll_s`."""
    params: dict[str, Any] = {"status": "pending"}
    if poll_s is None:
        params["wait"] = LONG_POLL_S
    while True:
        response = await client.get("/approvals", params=params)
        waiting = response.raise_for_status().json()
        if waiting:
            approval_id: str = waiting[0]["id"]
            return approval_id
        await asyncio.sleep(poll_s or 0)


async def approve_next(client: httpx.AsyncClient, poll_s: float | None) -> tuple[float, float]:
    """Approve the next approval that appears: when it was seen and when approved (the
    monotonic clock, which is the whole machine's on Linux: another process can compare)."""
    approval_id = await first_pending(client, poll_s)
    visible = time.monotonic()
    approve = await client.post(f"/approvals/{approval_id}/approve", json={"reasoning": "bench"})
    approve.raise_for_status()
    return visible, time.monotonic()


async def approver(base_url: str, poll_s: float | None) -> None:
    async with httpx.AsyncClient(base_url=base_url, timeout=60) as client:
        while True:
            print(json.dumps(await approve_next(client, poll_s)), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("base_url")
    parser.add_argument("--poll", type=float)
    args = parser.parse_args()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(approver(args.base_url, args.poll))


if __name__ == "__main__":
    main()
