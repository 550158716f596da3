"""Shadow mode: the L1 supervisor's unseen verdict on a call a person decides, handed to the inbox.

The gate starts the review in the background as soon as the approval exists; the person never
waits for it and never sees it, and it changes nothing that runs. Whichever comes second, the
verdict or the person's decision, reports the pair: a verdict that comes first rides on the
inbox's ApprovalResolved (`shadow`), one that comes later is recorded as ShadowVerdictGiven with
the person's decision. Either way the verdict is kept on the approval (`shadow_verdict`), which
the agreement report reads (agreement.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, Literal

from foundry.store import ApprovalRecord

logger = logging.getLogger(__name__)

L1_NAME = "agent:supervisor"  # Foundry's own L1 supervisor, named as its decisions are traced
Decision = Literal["approve", "deny", "escalate"]


@dataclass(frozen=True)
class ShadowVerdict:
    """A supervisor's verdict given unseen, and what it cost. `seen`: the L1 supervisor's own
    escalation, shown with the approval, counted as its verdict without asking it again."""

    supervisor: str
    decision: Decision
    confidence: float | None
    reasoning: str
    seconds: float = 0.0
    tokens: int | None = None
    seen: bool = False

    def record(self) -> dict[str, Any]:
        """The verdict as the approval keeps it (ApprovalRecord.shadow_verdict)."""
        kept: dict[str, Any] = {
            "decision": self.decision,
            "confidence": self.confidence,
            "reasoning": self.reasoning,
            "supervisor": self.supervisor,
            "seconds": round(self.seconds, 3),
        }
        if self.tokens is not None:
            kept["tokens"] = self.tokens
        if self.seen:
            kept["seen"] = True
        return kept


def supervisor_verdict(
    status: str, supervisor: str, reasoning: str | None, confidence: float | None
) -> ShadowVerdict:
    """A supervisor's resolution through the approvals API (approved or denied) as its shadow
    verdict; its seconds are unknown (it judged in its own process)."""
    decision: Decision = "approve" if status == "approved" else "deny"
    return ShadowVerdict(supervisor, decision, confidence, reasoning or "")


class ShadowReview:
    """One approval's shadow verdict on its way from the gate's review to the inbox. Both sides
    run on the event loop, so `settle` and `give` cannot interleave: exactly one reports."""

    def __init__(self, verdict: ShadowVerdict | None = None) -> None:
        self.verdict = verdict
        self.decided: ApprovalRecord | None = None  # the approval as a person decided it
        self.task: asyncio.Task[None] | None = None  # the review, while it runs

    def settle(self, resolved: ApprovalRecord) -> ShadowVerdict | None:
        """A person decided: the verdict if it came first (the resolution event carries it);
        else None, and the review reports the verdict with this decision when it ends."""
        self.decided = resolved
        return self.verdict

    def give(self, verdict: ShadowVerdict) -> ApprovalRecord | None:
        """The review ended: the approval as a person decided it, if one already had."""
        self.verdict = verdict
        return self.decided

    def withdraw(self) -> None:
        """The call was cancelled: its review is of no use any more."""
        if self.task is not None:
            self.task.cancel()


# what starts an approval's shadow review once the approval exists (the inbox calls it)
ShadowStart = Callable[[ApprovalRecord], ShadowReview]


class ShadowReviews:
    """The shadow reviews running for one session: owned, cancelled when it closes."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[None]] = set()

    def start(self, review: ShadowReview, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(_logged(work))
        review.task = task
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    @property
    def running(self) -> int:
        return len(self._tasks)

    async def aclose(self) -> None:
        """Cancel the reviews still running and wait for them to end (nothing is kept)."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def _logged(work: Coroutine[Any, Any, None]) -> None:
    """A shadow review that fails is logged and leaves nothing; cancelling it is not a failure."""
    with contextlib.suppress(asyncio.CancelledError):
        try:
            await work
        except Exception:
            logger.warning("a shadow review failed; no verdict is kept", exc_info=True)
