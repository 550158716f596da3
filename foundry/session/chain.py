"""Running the message supervisors in order on one message, and recording what each decided."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from foundry.llm.base import ChatMessage
from foundry.session.events import EventBody, SupervisorDecided
from foundry.session.supervisors import Direction, MessageSupervisor, SupervisionResult

if TYPE_CHECKING:
    from foundry.session.chat import ChatSession

Record = Callable[[EventBody], Awaitable[None]]
HumanReview = Callable[[Direction, str, str], Awaitable[bool]]


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
class ChainOutcome:
    """The message after the chain: its (maybe rewritten) text, or why it was blocked."""

    content: str
    blocked_by: str | None = None
    reason: str = ""


class SupervisionChain:
    """Each supervisor sees the message as the previous one left it; a block stops the chain."""

    def __init__(
        self,
        supervisors: Sequence[MessageSupervisor],
        human_review: HumanReview | None = None,
        timeout_s: float = 120.0,
    ) -> None:
        self.supervisors = list(supervisors)
        self._human_review = human_review
        self._timeout_s = timeout_s

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
        self,
        session: ChatSession,
        direction: Direction,
        index: int,
        message: ChatMessage,
        record: Record,
    ) -> ChainOutcome:
        content = message.content
        for supervisor in self.supervisors:
            if direction not in supervisor.directions:
                continue
            current = message.model_copy(update={"content": content})
            result = await self._review(supervisor, session, direction, current)
            await record(_decided(supervisor, direction, index, result))
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

    async def _review(
        self,
        supervisor: MessageSupervisor,
        session: ChatSession,
        direction: Direction,
        message: ChatMessage,
    ) -> SupervisionResult:
        """The supervisor's result; if it fails or takes too long, its fallback, said so."""
        try:
            return await asyncio.wait_for(
                supervisor.review(session, direction, message), self._timeout_s
            )
        except Exception as error:  # any failure of a supervisor is reported, never ignored
            problem = "timed out" if isinstance(error, TimeoutError) else f"failed: {error}"
            return SupervisionResult(
                action=supervisor.fallback_behavior,
                reasons=(f"{supervisor.name} {problem}; fallback: {supervisor.fallback_behavior}",),
                fallback=True,
            )

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
        if await self._human_review(direction, content, reason):
            return None
        return ChainOutcome(content, "a human reviewer", reason)


def _decided(
    supervisor: MessageSupervisor, direction: Direction, index: int, result: SupervisionResult
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
    )
