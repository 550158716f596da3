"""The rule of two: a session that took in untrusted content asks before it sends data out.

Meta's rule for agents: of untrusted input, private data and an outside channel, never all
three unasked. An agent has its workspace (private data); once a session has read content from
outside — any result of an open-world tool, or a result flagged as reading like a prompt
injection (outward.py, results.py) — a call that sends data out or acts outside is held for a
person (concern `untrusted-content`), who is told which result tainted the session and when,
and what the call sends where. The gate applies concerns after the policy, so this holds under
any user policy; a deny rule still denies.

How long the taint lasts: a chat's until its next user message (the person is back and reads
what happened); a gateway session's for as long as its client stays connected, since the
gateway sees no turns and the client's model keeps what it read in its context. A person's
approval of one held call does not clear it: the content is no more trusted for that.

The state is kept from the session's events (`apply`), so a chat rebuilt from its log after a
crash is tainted as it was.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from foundry.llm.base import ToolCall
from foundry.session.events import (
    EventBody,
    MessageAdded,
    ToolCallDecided,
    ToolCallFinished,
    ToolConcernRaised,
)
from foundry.supervision.concerns import FLAGGED_RESULT, Concern
from foundry.supervision.outward import ToolFacts, reads_outside, sends_out

MAX_KEPT = 10  # the tainting results named in a concern's detail
# the facts of the tool called `name` (its kind, annotations); unknown tools: MCP's defaults
FactsOf = Callable[[str], ToolFacts]


@dataclass(frozen=True)
class Taint:
    """One result that made the session untrusted: whose, when, and why."""

    tool: str
    call_id: str
    at: datetime
    why: str  # "an open-world tool's result", "a result that reads like a prompt injection"
    flagged: bool = False  # read as an injection: the most telling reason to name
    round: int = 0  # the model's message whose call gave it (a chat's; 0 in the gateway)

    def record(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "call_id": self.call_id,
            "at": self.at.isoformat(),
            "why": self.why,
        }


class UntrustedContent:
    """The concern source of one session: holds what sends data out once it read from outside."""

    def __init__(self, facts_of: FactsOf, clock: Callable[[], datetime] | None = None) -> None:
        self._facts_of = facts_of
        self._clock = clock or (lambda: datetime.now().astimezone())
        self._taints: list[Taint] = []
        self._ran: set[str] = set()  # the ids of this round's calls that were allowed to run
        # the calls of the model's latest message: chosen together, before any of their results
        # was read, so one's result taints none of the others
        self._round: frozenset[str] = frozenset()
        self._rounds = 0

    @property
    def taints(self) -> tuple[Taint, ...]:
        return tuple(self._taints)

    def apply(self, body: EventBody) -> None:
        """Follow the session: its calls' results taint it; a chat's user message clears it."""
        if isinstance(body, MessageAdded) and body.message.role == "user":
            self._taints.clear()
            self._ran.clear()
        elif isinstance(body, MessageAdded) and body.message.role == "assistant":
            self._round = frozenset(call.id for call in body.message.tool_calls)
            self._rounds += 1
        elif isinstance(body, ToolCallDecided) and body.allowed:
            self._ran.add(body.call.id)
        elif isinstance(body, ToolCallFinished) and body.call_id in self._ran:
            self._ran.discard(body.call_id)
            if reads_outside(self._facts_of(body.name)):
                self._taint(body.name, body.call_id, "an open-world tool's result")
        elif isinstance(body, ToolConcernRaised) and body.concern == FLAGGED_RESULT:
            self._taint(
                body.tool, body.call_id or "", "a result that reads like a prompt injection", True
            )

    def concerns(self, call: ToolCall) -> Sequence[Concern]:
        taints = self._read_before(call)
        if not taints:
            return ()
        sending = sends_out(self._facts_of(call.name), call.arguments)
        if sending is None:
            return ()
        named = next((taint for taint in taints if taint.flagged), taints[0])
        more = len(taints) - 1
        also = f" (and {more} more result{'s' if more > 1 else ''})" if more else ""
        reason = (
            f"the session read untrusted content from {named.tool} at {named.at:%H:%M}{also}; "
            f"this call sends data out: {sending}"
        )
        detail = {
            "result": named.record(),
            "results": [taint.record() for taint in taints[:MAX_KEPT]],
            "sends": sending,
        }
        return (Concern(kind="untrusted-content", reason=reason, detail=detail),)

    def _read_before(self, call: ToolCall) -> list[Taint]:
        """The tainting results the model had read when it chose `call`: not those of calls
        it chose in the same message (a chat's round; the gateway has none)."""
        if call.id not in self._round:
            return self._taints
        return [taint for taint in self._taints if taint.round != self._rounds]

    def accepted(self, call: ToolCall, concerns: Sequence[Concern]) -> None:
        """Approving one call does not make what the session read any more trusted."""

    def _taint(self, tool: str, call_id: str, why: str, flagged: bool = False) -> None:
        round_of = self._rounds if call_id in self._round else 0
        taint = Taint(tool, call_id, self._clock(), why, flagged, round_of)
        self._taints.append(taint)


def tool_facts(tools: Any, kinds: Mapping[str, str | None]) -> FactsOf:
    """The facts of the tools `tools` offers (a ToolHost, a task's tools: `tools()`), their
    servers' kinds from `kinds` (server name to kind). A tool with no `tools/list` entry is one
    of Foundry's own; a name not on offer gets MCP's defaults (open-world, may send)."""

    def facts_of(name: str) -> ToolFacts:
        offered = (
            None
            if tools is None
            else next((tool for tool in tools.tools() if tool.name == name), None)
        )
        if offered is None:
            server, _, bare = name.partition(".")
            return ToolFacts(name=name, tool=bare or name, kind=kinds.get(server))
        listed = getattr(offered, "listed", None)
        return ToolFacts(
            name=name,
            tool=getattr(offered, "tool", name.partition(".")[2]),
            kind=kinds.get(getattr(offered, "server", "")),
            annotations=getattr(offered, "annotations", {}),
            own=not listed,
        )

    return facts_of
