"""Concerns hold calls where no policy decides: an agent without a policy supervisor has its
`toolPermission` gate, which may let every call run (`never`). A call a source of concerns holds
(concerns.py) asks a person there too, whatever `toolPermission` says."""

from __future__ import annotations

from collections.abc import Sequence

from foundry.llm.base import ToolCall
from foundry.session.gate import ApprovalGate, GateDecision
from foundry.supervision.concerns import ConcernSource, concerns_of, describe
from foundry.supervision.inbox import HumanInbox


class ConcernGate:
    """`inner` decides the calls no source has a concern about; a person decides the rest."""

    def __init__(
        self, inner: ApprovalGate, inbox: HumanInbox, sources: Sequence[ConcernSource]
    ) -> None:
        self._inner = inner
        self._inbox = inbox
        self._sources = list(sources)

    def add_concerns(self, source: ConcernSource) -> None:
        self._sources.append(source)

    async def review(self, call: ToolCall, permission_required: bool) -> GateDecision:
        concerns = concerns_of(self._sources, call)
        if not concerns:
            return await self._inner.review(call, permission_required)
        decision = await self._inbox.decide(
            call,
            level="L0",
            reason=f"{describe(concerns)}, so a person decides",
            policy_rule="toolPermission",
            concerns=concerns,
        )
        if decision.allowed and decision.arguments is None:
            for source in self._sources:
                source.accepted(call, concerns)
        return decision
