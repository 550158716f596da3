"""The L2 inbox: a question for a human, persisted as an approval, answered by whoever is first."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Sequence
from datetime import timedelta
from typing import Any, Literal

from foundry.llm.base import ToolCall
from foundry.session.events import ApprovalRequested, ApprovalResolved, EventBody
from foundry.session.gate import AskUser, GateDecision
from foundry.store import AlreadyResolved, ApprovalRecord, Store
from foundry.store.tables import new_id, utc_now
from foundry.supervision.concerns import Concern
from foundry.supervision.edits import EditJudge
from foundry.supervision.redaction import injection_risk
from foundry.supervision.resolution import resolve_approval
from foundry.supervision.shadow import ShadowReview, ShadowStart
from foundry.supervision.tracing import later_trace, store_trace
from foundry.supervision.wakeups import APPROVAL_WAKEUPS, Waiting

Notify = Callable[[EventBody], Awaitable[object]]
POLL_S = 1.0  # a waiting session is woken when its approval changes: this poll is the fallback


class HumanInbox:
    """Puts a call in the approval store and waits until the inbox (the API, the UI, another
    Foundry sharing the store) or the person at this terminal resolves it, or it times out.
    With `edits`, a call approved with edited parameters is decided again by it (see edits.py)
    before it runs, whoever edited it and wherever."""

    def __init__(
        self,
        store: Store,
        agent_id: str,
        session_id: str,
        notify: Notify,
        timeout_s: float = 300.0,
        on_timeout: Literal["allow", "deny"] = "deny",
        ask: AskUser | None = None,
        poll_s: float = POLL_S,
        agent_path: str | None = None,
        edits: EditJudge | None = None,
    ) -> None:
        self._store = store
        self._edits = edits
        self._agent = agent_id
        self._agent_path = agent_path  # the agent's file, which a grant made here is bound to
        self._session = session_id
        self._notify = notify
        self._timeout_s = timeout_s
        self._on_timeout = on_timeout
        self._ask = ask
        self._poll_s = poll_s

    async def decide(
        self,
        call: ToolCall,
        level: str,
        reason: str,
        policy_rule: str | None = None,
        verdict: dict[str, Any] | None = None,
        injection: bool | None = None,
        concerns: Sequence[Concern] = (),
        shadow: ShadowStart | None = None,
    ) -> GateDecision:
        """Ask a person (through the inbox, and the terminal when there is one) and wait.
        `injection` says whether the parameters read like a prompt injection, when the caller
        already looked; else it is looked at here, off the loop (the detector decodes).
        `concerns` are why a person decides whatever the rules say, shown with the approval.
        `shadow` starts the supervisor's unseen review once the approval exists (shadow.py):
        it never delays the question, and its verdict is only reported."""
        started = time.perf_counter()
        approval_id = new_id()
        review: ShadowReview | None = None
        # listening before the approval exists: every resolution after it wakes this call, so
        # the approval need not be read back to see whether one came first
        with APPROVAL_WAKEUPS.waiting(approval_id) as waiting:
            async with self._store.approval_changes.waking(waiting.woken):
                creating = asyncio.ensure_future(
                    asyncio.to_thread(
                        self._create,
                        approval_id,
                        call,
                        level,
                        policy_rule,
                        verdict,
                        injection,
                        concerns,
                    )
                )
                try:
                    approval = await asyncio.shield(creating)
                    waiting.woken.clear()  # the news of its own creation
                    review = shadow(approval) if shadow is not None else None
                    await self._notify(
                        ApprovalRequested(
                            approval_id=approval.id,
                            tool=call.name,
                            level=approval.level,
                            reason=reason,
                            expires_at=approval.expires_at,
                            concerns=approval.concerns or [],
                        )
                    )
                    resolved = await self._wait_for_anyone(approval, call, waiting)
                except asyncio.CancelledError:  # the caller stopped waiting: no one is asked
                    if review is not None:
                        review.withdraw()
                    await asyncio.shield(self._withdraw_once_created(creating))
                    raise
        shadow_verdict = _shadow_of(review, resolved)
        await self._notify(
            ApprovalResolved(
                approval_id=resolved.id,
                status=resolved.status,
                resolved_by=resolved.resolved_by or "",
                reasoning=resolved.reasoning or "",
                waited_s=time.perf_counter() - started,
                tool=call.name,
                edited=resolved.edited,  # the store compared the parameters as it resolved
                flagged=resolved.injection_risk or bool(resolved.concerns),
                shadow=shadow_verdict.get("decision") if shadow_verdict else None,
                shadow_confidence=shadow_verdict.get("confidence") if shadow_verdict else None,
            )
        )
        decision = self._decision(call, resolved)
        if decision.arguments is None or not decision.allowed:
            return decision
        return await self._edit_judged(call, resolved, decision)

    async def ask_permission(self, call: ToolCall) -> GateDecision:
        """A call the agent's toolPermission says a person must approve (no policy decides)."""
        return await self.decide(
            call,
            level="L0",
            reason=f"{call.name} needs a person's approval (toolPermission)",
            policy_rule="toolPermission",
        )

    def _create(
        self,
        approval_id: str,
        call: ToolCall,
        level: str,
        policy_rule: str | None,
        verdict: dict[str, Any] | None,
        injection: bool | None,
        concerns: Sequence[Concern] = (),
    ) -> ApprovalRecord:
        """The call's approval, stored (blocking: the store, and the detector when needed)."""
        if injection is None:
            injection = injection_risk(call.arguments)
        approval = ApprovalRecord(
            id=approval_id,
            session_id=self._session,
            agent_id=self._agent,
            agent_path=self._agent_path,
            tool=call.name,
            params=call.arguments,
            policy_rule=policy_rule,
            level=level,
            injection_risk=injection,
            supervisor_verdict=verdict,
            concerns=[concern.record() for concern in concerns] or None,
            expires_at=utc_now() + timedelta(seconds=self._timeout_s),
        )
        return self._store.approvals.create(approval)

    async def _wait_for_anyone(
        self, approval: ApprovalRecord, call: ToolCall, waiting: Waiting
    ) -> ApprovalRecord:
        """The inbox (API, UI, another Foundry) and, when there is one, the person at this
        terminal race to resolve it; the store takes the first resolution."""
        if self._ask is None:
            return await self._wait_for(approval, waiting)
        inbox = asyncio.ensure_future(self._wait_for(approval, waiting))
        here = asyncio.ensure_future(self._ask(call))
        done, _ = await asyncio.wait({inbox, here}, return_when=asyncio.FIRST_COMPLETED)
        if inbox in done:
            here.cancel()
            return inbox.result()
        inbox.cancel()
        answer = here.result()
        status = "approved" if answer.allowed else "denied"
        try:
            return await asyncio.to_thread(
                resolve_approval, self._store, approval.id, status, answer.by, answer.reason or None
            )
        except AlreadyResolved as conflict:
            return conflict.approval

    async def _wait_for(self, created: ApprovalRecord, waiting: Waiting) -> ApprovalRecord:
        """Wait until resolved or expired: woken at once by a resolution in this process or by
        the store's change watch (another process), reading the store again at least every
        poll in case a change went unseen; an expired approval is resolved as timed_out with
        the configured outcome."""
        current = created
        while True:
            if current.status != "pending":
                return current
            if current.expires_at is not None and utc_now() >= current.expires_at:
                return await self._time_out(current)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(waiting.woken.wait(), self._next_look(current))
            waiting.woken.clear()
            current = await self._current(created.id, waiting)

    async def _current(self, approval_id: str, waiting: Waiting) -> ApprovalRecord:
        """The approval as this process resolved it, or else as the store holds it now."""
        if waiting.resolved is not None:
            return waiting.resolved
        return await asyncio.to_thread(self._store.approvals.get, approval_id)

    def _next_look(self, approval: ApprovalRecord) -> float:
        """Seconds until the store is asked again: the poll, or less when it expires sooner."""
        if approval.expires_at is None:
            return self._poll_s
        left = (approval.expires_at - utc_now()).total_seconds()
        return max(0.0, min(self._poll_s, left))

    async def _withdraw_once_created(self, creating: asyncio.Future[ApprovalRecord]) -> None:
        """A call cancelled at any point after its approval was sent to the store: the approval
        is withdrawn once it exists (one that could not be stored needs nothing)."""
        try:
            approval = await creating
        except Exception:
            return
        await asyncio.to_thread(self._withdraw, approval)

    def _withdraw(self, approval: ApprovalRecord) -> None:
        """Take a call that was cancelled out of the inbox (it is not run); a resolution that
        came first stands."""
        with contextlib.suppress(AlreadyResolved):
            resolve_approval(
                self._store,
                approval.id,
                "timed_out",
                "withdrawn",
                "the call was cancelled before anyone decided",
                level="timeout",
                allowed=False,
            )

    async def _time_out(self, approval: ApprovalRecord) -> ApprovalRecord:
        """Resolve as timed_out with the configured outcome, traced at the timeout level like
        every resolution (parameters redacted); someone resolving first wins instead."""
        outcome = self._on_timeout
        reasoning = f"no one decided in time; the policy says {outcome} on timeout"
        try:
            return await asyncio.to_thread(
                resolve_approval,
                self._store,
                approval.id,
                "timed_out",
                "timeout",
                reasoning,
                level="timeout",
                allowed=outcome == "allow",
            )
        except AlreadyResolved as conflict:
            return conflict.approval

    def _decision(self, call: ToolCall, approval: ApprovalRecord) -> GateDecision:
        by = approval.resolved_by or "unknown"
        reason = approval.reasoning or ""
        if approval.status == "timed_out":
            return GateDecision(allowed=self._on_timeout == "allow", by=by, reason=reason)
        confidence = approval.confidence  # a supervisor's, when one resolved it through the API
        if approval.status != "approved":
            reason = reason or "denied without a reason"
            return GateDecision(allowed=False, by=by, reason=reason, confidence=confidence)
        edited = approval.params if approval.params != call.arguments else None
        return GateDecision(
            allowed=True, by=by, reason=reason, arguments=edited, confidence=confidence
        )

    async def _edit_judged(
        self, call: ToolCall, approval: ApprovalRecord, approved: GateDecision
    ) -> GateDecision:
        """An approval of edited parameters, the edited call decided again: a refusal stands,
        traced after the person's approval with the rule and the reason (the call does not
        run, the edited parameters are kept to say what was refused)."""
        edited = approved.arguments
        if self._edits is None or edited is None:
            return approved
        refusal = await asyncio.to_thread(self._edits.refusal, call.name, call.arguments, edited)
        if refusal is None:
            return approved
        trace = later_trace(
            session_id=self._session,
            agent_id=self._agent,
            tool=call.name,
            params=edited,
            decision="deny",
            level="policy",
            resolved_by=refusal.by,
            policy_rule=refusal.rule,
            approval_id=approval.id,
            reasoning=refusal.reason,
        )
        await store_trace(self._store, trace)
        return GateDecision(allowed=False, by=refusal.by, reason=refusal.reason, arguments=edited)


def _shadow_of(review: ShadowReview | None, resolved: ApprovalRecord) -> dict[str, Any] | None:
    """The shadow verdict the resolution event carries: this gate's, if its review came before
    the decision (else the review reports it later), or one a supervisor gave through the API
    in shadow mode (kept on the approval)."""
    if review is not None:
        verdict = review.settle(resolved)
        return verdict.record() if verdict is not None else None
    return resolved.shadow_verdict
