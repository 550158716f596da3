"""Running the message supervisors on one message, and recording what each decided.

Only supervisors that can change the message hold it, each within its budget; a context
supervisor holds a request within its budget; every other review runs after the reply.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from foundry.llm.base import ChatMessage
from foundry.llm.priority import LimitExpired, as_review, within_limit
from foundry.session.events import (
    SupervisorDecided,
    SupervisorDeferred,
    SupervisorOff,
    SupervisorStarted,
)
from foundry.session.gate import GateDecision
from foundry.session.supervisors import Direction, MessageSupervisor, SupervisionResult

if TYPE_CHECKING:
    from foundry.session.chat import ChatSession

# asks for a review of a message (direction, content, reason): who decided, and why
HumanReview = Callable[[Direction, str, str], Awaitable[GateDecision]]
LATER_LIMIT_S = 300.0  # a review that nothing waits for still ends, with its fallback


class StreamMasker(Protocol):
    """Masks text arriving in pieces: `feed` returns what may be shown now, `finish` the rest."""

    def feed(self, text: str) -> str: ...

    def finish(self) -> str: ...


@runtime_checkable
class MasksReplies(Protocol):
    """A supervisor that rewrites replies in a way that can be applied while they stream."""

    def reply_masker(self) -> StreamMasker | None: ...


class ReplyStream:
    """What of a streaming reply may be shown: the text after each masker of the chain, in order."""

    def __init__(self, maskers: Sequence[StreamMasker]) -> None:
        self._maskers = list(maskers)

    def feed(self, text: str) -> str:
        for masker in self._maskers:
            text = masker.feed(text)
        return text

    def finish(self) -> str:
        text = ""
        for masker in self._maskers:
            text = masker.feed(text) + masker.finish()
        return text


@dataclass(frozen=True)
class LaterReview:
    """A review that runs once the turn has ended: the message as the holding supervisors left
    it, and the supervisor that reviews it."""

    supervisor: MessageSupervisor
    direction: Direction
    index: int
    message: ChatMessage


@dataclass(frozen=True)
class ChainOutcome:
    """The message after the chain: its (maybe rewritten) text, or why it was blocked, and the
    reviews to run after the reply."""

    content: str
    blocked_by: str | None = None
    reason: str = ""
    later: tuple[LaterReview, ...] = ()


class ReviewTimes:
    """How long each supervisor's last review took, shared by the sessions of an engine: a
    context supervisor that did not fit its budget is not waited for again until a review of
    it (run after a reply) does."""

    def __init__(self) -> None:
        self._seconds: dict[str, float] = {}

    def note(self, supervisor: MessageSupervisor, seconds: float) -> None:
        self._seconds[_identity(supervisor)] = seconds

    def last(self, supervisor: MessageSupervisor) -> float | None:
        return self._seconds.get(_identity(supervisor))

    def fits(self, supervisor: MessageSupervisor) -> bool:
        last = self.last(supervisor)
        return last is None or last <= supervisor.budget_s


class SupervisionChain:
    """Each holding supervisor sees the message as the previous one left it; a block stops the
    chain. The others see it as the holding ones let it through."""

    def __init__(
        self,
        supervisors: Sequence[MessageSupervisor],
        human_review: HumanReview | None = None,
        times: ReviewTimes | None = None,
    ) -> None:
        self.supervisors = list(supervisors)
        self._human_review = human_review
        self._times = times or ReviewTimes()
        self._later: set[asyncio.Task[None]] = set()
        self._latest: dict[str, asyncio.Task[None]] = {}  # by supervisor: its last later review
        self._dormant_said = False

    def reply_stream(self) -> ReplyStream:
        """A filter for the tokens of one reply, masking them before anyone sees them."""
        maskers = [
            masker
            for supervisor in self.supervisors
            if "response" in supervisor.directions and isinstance(supervisor, MasksReplies)
            if (masker := supervisor.reply_masker()) is not None
        ]
        return ReplyStream(maskers)

    async def run(
        self, session: ChatSession, direction: Direction, index: int, message: ChatMessage
    ) -> ChainOutcome:
        await self._say_dormant(session)
        reviewing = [s for s in self.supervisors if direction in s.directions]
        holding = [s for s in reviewing if s.reach == "message"]
        outcome = await self._hold(session, direction, index, message, holding)
        if outcome.blocked_by:
            return outcome
        passed = message.model_copy(update={"content": outcome.content})
        waited: list[MessageSupervisor] = []
        if direction == "request":
            curators = [s for s in reviewing if s.reach == "context"]
            waited = await self._curate(session, index, passed, curators)
        later = [s for s in reviewing if s.reach != "message" and s not in waited]
        reviews = tuple(LaterReview(s, direction, index, passed) for s in later)
        return replace(outcome, later=reviews)

    async def _say_dormant(self, session: ChatSession) -> None:
        """Once a session: the supervisors left off (a model too small for them), and why."""
        if self._dormant_said:
            return
        self._dormant_said = True
        for supervisor in self.supervisors:
            reason = getattr(supervisor, "dormant_reason", None)
            if isinstance(reason, str):
                off = SupervisorOff(
                    supervisor_id=supervisor.id, supervisor=supervisor.name, reason=reason
                )
                await session.record(off)

    async def _hold(
        self,
        session: ChatSession,
        direction: Direction,
        index: int,
        message: ChatMessage,
        holding: Sequence[MessageSupervisor],
    ) -> ChainOutcome:
        content = message.content
        for supervisor in holding:
            current = message.model_copy(update={"content": content})
            session.note(_started(supervisor, direction, index, holds=True))
            result, took = await self._timed(
                supervisor, session, direction, current, supervisor.budget_s
            )
            await session.record(_decided(supervisor, direction, index, result, took))
            if result.action == "modify" and result.content is not None:
                content = result.content
            elif result.action == "block":  # what a blocker masked stays masked
                kept = content if result.content is None else result.content
                return ChainOutcome(kept, supervisor.name, "; ".join(result.reasons))
            elif result.action == "human_review":
                outcome = await self._ask_human(supervisor, direction, content, result)
                if outcome is not None:
                    return outcome
        return ChainOutcome(content)

    async def _curate(
        self,
        session: ChatSession,
        index: int,
        message: ChatMessage,
        curators: Sequence[MessageSupervisor],
    ) -> list[MessageSupervisor]:
        """Run the context supervisors of a request at the same time, each within its budget;
        the ones that finished in time (the rest review after the reply, said so)."""
        hopeful = [s for s in curators if s.budget_s > 0 and self._times.fits(s)]
        for supervisor in curators:
            if supervisor not in hopeful:
                await session.record(_deferred(supervisor, index, self._not_waited(supervisor)))
        finished = await asyncio.gather(
            *(self._within_budget(s, session, index, message) for s in hopeful)
        )
        return [s for s, done in zip(hopeful, finished, strict=True) if done]

    def _not_waited(self, supervisor: MessageSupervisor) -> str:
        if supervisor.budget_s <= 0:
            return "its budget before a request is 0 s (a model run in-process is too slow)"
        last = self._times.last(supervisor) or 0.0
        if math.isinf(last):
            return f"its last review did not finish within its {supervisor.budget_s:g} s budget"
        return f"its last review took {last:.1f} s, over its {supervisor.budget_s:g} s budget"

    async def _within_budget(
        self, supervisor: MessageSupervisor, session: ChatSession, index: int, message: ChatMessage
    ) -> bool:
        """Review a request within the supervisor's budget; False (and stopped, and said so) if
        it did not finish in time."""
        session.note(_started(supervisor, "request", index, holds=True))
        started = time.perf_counter()
        budget = asyncio.timeout(supervisor.budget_s)
        try:
            async with budget:
                result = await supervisor.review(session, "request", message)
        except Exception as error:  # any failure of a supervisor is reported, never ignored
            if budget.expired():
                self._times.note(supervisor, math.inf)  # it did not finish
                why = f"it was still working after its {supervisor.budget_s:g} s budget"
                await session.record(_deferred(supervisor, index, why))
                return False
            result = _fallback(supervisor, error, took_s=time.perf_counter() - started)
        duration = time.perf_counter() - started
        self._times.note(supervisor, duration)
        result = _without_message_changes(supervisor, result)
        await session.record(_decided(supervisor, "request", index, result, duration))
        return True

    async def _timed(
        self,
        supervisor: MessageSupervisor,
        session: ChatSession,
        direction: Direction,
        message: ChatMessage,
        limit_s: float,
    ) -> tuple[SupervisionResult, float]:
        """The supervisor's result within `limit_s` and how long it took; if it fails or takes
        too long, its fallback, said so."""
        started = time.perf_counter()
        try:  # its limit is for its own work: waits for the model's turn are left out
            result = await within_limit(supervisor.review(session, direction, message), limit_s)
        except Exception as error:  # any failure of a supervisor is reported, never ignored
            took = time.perf_counter() - started
            expired = isinstance(error, LimitExpired)
            result = _fallback(supervisor, error, limit_s if expired else None, took)
        duration = time.perf_counter() - started
        self._times.note(supervisor, duration)
        return result, duration

    async def _ask_human(
        self,
        supervisor: MessageSupervisor,
        direction: Direction,
        content: str,
        result: SupervisionResult,
    ) -> ChainOutcome | None:
        reason = "; ".join(result.reasons) or "a supervisor asked for a human review"
        if self._human_review is None:
            return ChainOutcome(content, supervisor.name, f"{reason} (no one can review it here)")
        decision = await self._human_review(direction, content, reason)
        if decision.allowed:
            return None
        why = decision.reason or f"{reason} (not approved)"
        return ChainOutcome(content, reviewer(decision.by), why)

    # -- reviews after the reply ----------------------------------------------------------------

    def review_later(self, session: ChatSession, reviews: Sequence[LaterReview]) -> None:
        """Start reviews that nothing waits for; each supervisor's run one at a time, in order,
        and each decision is recorded when it is ready."""
        for review in reviews:
            key = review.supervisor.id
            task = asyncio.create_task(
                self._review_later(session, review, self._latest.get(key)),
                name=review.supervisor.name,
            )
            self._latest[key] = task
            self._later.add(task)
            task.add_done_callback(self._later.discard)

    async def _review_later(
        self, session: ChatSession, review: LaterReview, previous: asyncio.Task[None] | None
    ) -> None:
        supervisor, direction, index = review.supervisor, review.direction, review.index
        try:
            if previous is not None:
                await asyncio.wait({previous})
            session.note(_started(supervisor, direction, index, holds=False))
            limit = max(supervisor.budget_s, LATER_LIMIT_S)
            with as_review(supervisor.name):  # behind every chat's request for the model
                result, took = await self._timed(
                    supervisor, session, direction, review.message, limit
                )
        except asyncio.CancelledError:
            stopped = RuntimeError("it was stopped before it finished (the session closed)")
            result = _fallback(supervisor, stopped)
            await session.record(_decided(supervisor, direction, index, result, background=True))
            raise
        result = _without_message_changes(supervisor, result)
        decided = _decided(supervisor, direction, index, result, took, background=True)
        await session.record(decided)

    @property
    def reviewing_later(self) -> int:
        """How many reviews after replies are running or waiting their turn."""
        return len(self._later)

    @property
    def later_reviewers(self) -> list[str]:
        """The names of the supervisors whose reviews after replies are not done, in order."""
        return list(dict.fromkeys(task.get_name() for task in self._later))

    async def wait_for_reviews(self, timeout_s: float) -> list[str]:
        """Give the reviews after replies up to `timeout_s` to end, stopping none; the names of
        the supervisors whose reviews are still not done."""
        running = set(self._later)
        if running:
            await asyncio.wait(running, timeout=timeout_s)
        return self.later_reviewers

    async def settle(self, timeout_s: float | None = None) -> None:
        """Wait for the reviews after replies; the ones still running after `timeout_s` are
        stopped, each recorded with its fallback."""
        running = set(self._later)
        if not running:
            return
        _, late = await asyncio.wait(running, timeout=timeout_s)
        for task in late:
            task.cancel()
        await asyncio.gather(*late, return_exceptions=True)


def _identity(supervisor: MessageSupervisor) -> str:
    """An agent supervisor is known by its agent's folder, the others by their type and id."""
    where = getattr(supervisor, "path", "")
    return f"{type(supervisor).__name__}:{supervisor.id}:{where}"


def _fallback(
    supervisor: MessageSupervisor,
    error: Exception,
    limit_s: float | None = None,
    took_s: float | None = None,
) -> SupervisionResult:
    """The supervisor's fallback, saying what happened: `limit_s` is the chain's limit when that
    is what stopped it; a timeout of the supervisor's own (its model call's) says how long it
    ran, the limit that applied."""
    if isinstance(error, TimeoutError) and limit_s is not None:
        problem = f"did not finish within {limit_s:g} s"
    elif isinstance(error, TimeoutError):
        problem = f"timed out: {error}" if str(error) else "timed out"
        if took_s is not None and not str(error):
            problem = f"timed out after {took_s:.1f} s (a time limit of its own)"
    else:
        problem = f"failed: {error}"
    return SupervisionResult(
        action=supervisor.fallback_behavior,
        reasons=(f"{supervisor.name} {problem}; fallback: {supervisor.fallback_behavior}",),
        fallback=True,
    )


def _without_message_changes(
    supervisor: MessageSupervisor, result: SupervisionResult
) -> SupervisionResult:
    """A supervisor the message did not wait for cannot change it: what it asked is kept in
    the record, and nothing is done."""
    if result.action == "allow":
        return result
    ignored = (
        f"{supervisor.name} asked to {result.action.replace('_', ' ')}, but it cannot change "
        "messages (its allowedActions), so the message went on unchanged"
    )
    return result.model_copy(
        update={"action": "allow", "content": None, "reasons": (*result.reasons, ignored)}
    )


def _started(
    supervisor: MessageSupervisor, direction: Direction, index: int, holds: bool
) -> SupervisorStarted:
    return SupervisorStarted(
        supervisor_id=supervisor.id,
        supervisor=supervisor.name,
        direction=direction,
        message_index=index,
        holds=holds,
    )


def _deferred(supervisor: MessageSupervisor, index: int, why: str) -> SupervisorDeferred:
    reason = (
        f"{supervisor.name}: {why}. This request keeps the lexical selection; its review runs "
        "after the reply, and its changes count from the next turn."
    )
    return SupervisorDeferred(
        supervisor_id=supervisor.id,
        supervisor=supervisor.name,
        direction="request",
        message_index=index,
        reason=reason,
    )


def _decided(
    supervisor: MessageSupervisor,
    direction: Direction,
    index: int,
    result: SupervisionResult,
    duration: float | None = None,
    background: bool = False,
) -> SupervisorDecided:
    return SupervisorDecided(
        supervisor_id=supervisor.id,
        supervisor=supervisor.name,
        direction=direction,
        message_index=index,
        action=result.action,
        reasons=result.reasons,
        confidence=result.confidence,
        changes=result.changes,
        fallback=result.fallback,
        background=background,
        duration_s=duration,
    )


def reviewer(resolved_by: str) -> str:
    """Who decided a review, in words: `supervisor:agent7` is the supervisor agent7,
    `human:gui:ana` is ana (in the app), `api:ops` is ops (through the approvals API)."""
    kind, _, rest = resolved_by.partition(":")
    if kind == "supervisor" and rest:
        return f"the supervisor {rest}"
    if kind == "human" and rest:
        channel, _, user = rest.partition(":")
        where = {"gui": "in the app", "cli": "at the terminal"}.get(channel, f"through {channel}")
        return f"{user or 'a person'} ({where})"
    if kind == "api" and rest:
        return f"{rest} (through the approvals API)"
    if kind == "timeout":
        return "no one in time (the review timed out)"
    return resolved_by or "a reviewer"
