"""A chat session: its messages and context, and the turn loop of model calls and tool calls.

Every change to a session goes through an event: the session records the event (the runtime
persists it before anyone sees it) and then applies it to itself. Replaying a session's events
therefore rebuilds exactly the state it had, which is how a session resumes after a crash.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from foundry.agent.document import to_document
from foundry.agent.models import Agent, AgentSettings, ContextItem, Reference, Rule
from foundry.llm.base import (
    ChatMessage,
    ChatRequest,
    Chunk,
    ModelProvider,
    ProviderError,
    TextDelta,
    ToolCall,
    ToolCallChunk,
    ToolSpec,
    Usage,
)
from foundry.llm.registry import ModelChoice
from foundry.session.chain import ChainOutcome, LaterReview, ReplyStream, SupervisionChain
from foundry.session.context import (
    MENTION,
    Candidate,
    ContextState,
    ItemKind,
    mentions,
    select_context,
)
from foundry.session.events import (
    ContextChanged,
    ContextEntry,
    ContextItemSaved,
    ContextSelected,
    ErrorOccurred,
    EventBody,
    ItemBefore,
    MessageAdded,
    MessageRevised,
    ModelCallFinished,
    TokenDelta,
    ToolCallDecided,
    ToolCallFinished,
    TurnFinished,
    TurnStarted,
)
from foundry.session.gate import ApprovalGate, GateDecision
from foundry.session.supervisors import Direction
from foundry.supervision.tool_definitions import offered_on
from foundry.tools.declared import forwarded, with_note

EventSink = Callable[[EventBody], Awaitable[object]]
EndedBy = Literal["reply", "max_turns", "cancelled", "error", "blocked"]
RETRY_DELAYS_S = (1.0, 2.0, 4.0)
# The result of an allowed call that a kill interrupted: it may or may not have run.
INTERRUPTED = (
    "The call to {name} was interrupted (the session stopped); it is not known whether "
    "it ran. Check its effects before calling it again."
)


class ToolDescription(Protocol):
    name: str
    description: str
    parameters: dict[str, Any]
    include: Any
    permission_required: bool


class ToolOutcome(Protocol):
    text: str
    is_error: bool
    final: bool  # the text is the agent's answer and ends the turn (a forwarded worker answer)


class ScreenedText(Protocol):
    @property
    def text(self) -> str: ...


class ResultSupervision(Protocol):
    """What supervises a session's tool results (runtime/results.py): each result screened
    (masked, read for an injection: the event to record if flagged) and the session's events
    followed (its rule of two: what it has read decides what asks)."""

    def apply(self, body: EventBody) -> None: ...

    async def screened(
        self, call_id: str, tool: str, text: str
    ) -> tuple[ScreenedText, EventBody | None]: ...


class ToolSource(Protocol):
    """Where a session's tools come from (the MCP tool host)."""

    def tools(self) -> Sequence[ToolDescription]: ...

    async def call(self, name: str, arguments: dict[str, Any], timeout_s: float = 60.0) -> Any: ...


@dataclass
class TurnResult:
    reply: str
    ended_by: EndedBy
    model_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    reply_blocked: bool = False  # a supervisor replaced the model's reply with its notice


@dataclass
class _Streamed:
    """One model reply as it arrives: its raw text, what was shown of it, its tool calls."""

    stream: ReplyStream
    raw: list[str] = field(default_factory=list)
    shown: list[str] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)


class ChatSession:
    """One conversation with an agent; `send` runs a user turn, `resume` finishes a broken one."""

    def __init__(
        self,
        session_id: str,
        agent: Agent,
        model: ModelChoice,
        provider: ModelProvider,
        gate: ApprovalGate,
        emit: EventSink,
        tools: ToolSource | None = None,
        settings_overrides: dict[str, Any] | None = None,
        retry_delays_s: Sequence[float] = RETRY_DELAYS_S,
        chain: SupervisionChain | None = None,
        results: ResultSupervision | None = None,
    ) -> None:
        self.id = session_id
        self.agent = agent
        self.model = model
        self.settings = _merged_settings(agent.settings, settings_overrides or {})
        self.messages: list[ChatMessage] = []
        self.context = ContextState()
        self._provider = provider
        self._gate = gate
        self._emit = emit
        self._tools = tools
        self._results = results
        self._retry_delays_s = tuple(retry_delays_s)
        self._turn: TurnResult | None = None
        self._response_schema: dict[str, Any] | None = None
        self._in_flight: set[asyncio.Future[Any]] = set()
        self.chain = chain or SupervisionChain([])
        self._reviewed: tuple[int, ChainOutcome] | None = None  # a user message's request review
        self._later: list[LaterReview] = []  # this turn's reviews that run after it ends
        # The current round's tool decisions and results, by call id, as the log has them: what
        # a resumed turn must not decide or run again.
        self._decided: dict[str, ToolCallDecided] = {}
        self._finished: dict[str, ToolCallFinished] = {}
        # How many messages there were when the log's last turn started, until the turn ends.
        self._open_turn_from: int | None = None

    def use_gate(self, gate: ApprovalGate) -> None:
        """Decide the tool calls from the next one on with `gate` (the agent's policy was
        saved); a call already being decided keeps the gate it started with."""
        self._gate = gate

    # -- state, rebuilt from events -------------------------------------------------------------

    def apply(self, body: EventBody) -> None:
        if isinstance(body, MessageAdded):
            self._forget_stale_calls(body.message)
            self.messages.append(body.message)
        elif isinstance(body, ToolCallDecided):
            self._decided[body.call.id] = body
        elif isinstance(body, ToolCallFinished):
            self._finished[body.call_id] = body
        elif isinstance(body, MessageRevised):
            revised = self.messages[body.message_index].model_copy(update={"content": body.content})
            self.messages[body.message_index] = revised
        elif isinstance(body, ContextChanged):
            self.context.apply(body)
        elif isinstance(body, ContextItemSaved):
            self._apply_saved_item(body)
        elif isinstance(body, TurnStarted):
            self._open_turn_from = len(self.messages)
        elif isinstance(body, TurnFinished):
            self._open_turn_from = None
        if self._results is not None:
            self._results.apply(body)

    def _apply_saved_item(self, body: ContextItemSaved) -> None:
        """The session's own copy of the agent gets the item (in its place, or last if new), or
        loses it; the agent's files and other sessions are not touched."""
        field = "rules" if body.item == "rule" else "references"
        items: list[ContextItem] = list(getattr(self.agent, field))
        where = next((n for n, item in enumerate(items) if item.name == body.name), len(items))
        items[where : where + 1] = (
            [] if body.value is None else [item_model(body.item).model_validate(body.value)]
        )
        self.agent = self.agent.model_copy(update={field: items})

    def replay(self, bodies: Iterable[EventBody]) -> None:
        for body in bodies:
            self.apply(body)

    def _forget_stale_calls(self, message: ChatMessage) -> None:
        """A new assistant message with tool calls starts a new round: decisions and results of
        earlier rounds no longer apply (a model may reuse a call id in a later round)."""
        if message.role == "assistant" and message.tool_calls:
            self._decided.clear()
            self._finished.clear()

    async def record(self, body: EventBody) -> None:
        await self._emit(body)
        self.apply(body)

    def note(self, body: EventBody) -> None:
        """Record an event without waiting for it to be stored.

        The journal stores events in the order they are recorded, so a later event that is
        waited for (an assistant message, a tool decision, the end of the turn) is stored only
        after this one: the log stays a gapless prefix of what happened, and the model call does
        not wait for the bookkeeping before it.
        """
        pending = asyncio.ensure_future(self._emit(body))
        self._in_flight.add(pending)
        pending.add_done_callback(self._in_flight.discard)
        self.apply(body)

    @property
    def needs_resume(self) -> bool:
        """Whether the last turn was cut short: the agent still owes a reply, or the log lacks
        the turn's end (a kill right after the reply was stored)."""
        return bool(self.messages) and (self.owes_reply or self._open_turn_from is not None)

    @property
    def owes_reply(self) -> bool:
        """Whether the agent has yet to answer the last message. If not, an interrupted turn
        lacks only its end, which resuming stores without a model call or a tool."""
        if not self.messages:
            return False
        last = self.messages[-1]
        return last.role != "assistant" or bool(last.tool_calls)

    # -- context --------------------------------------------------------------------------------

    async def set_included(
        self, item: ItemKind, name: str, included: bool, by: str = "user"
    ) -> None:
        await self.record(ContextChanged(item=item, name=name, included=included, by=by))

    async def save_item(
        self,
        item: Literal["rule", "reference"],
        name: str,
        value: ContextItem | None,
        by: str,
        replaced: ItemBefore | None = None,
        undoes: int | None = None,
    ) -> None:
        """Create, change or (with None) delete a rule or reference of this session; when it
        was saved to the agent's files, `replaced` is what it replaced there and `undoes` the
        save it takes back."""
        body = ContextItemSaved(
            item=item, name=name, value=item_value(value), by=by, before=replaced, undoes=undoes
        )
        await self.record(body)

    def candidates(self) -> list[Candidate]:
        sections: tuple[tuple[ItemKind, Sequence[ContextItem]], ...] = (
            ("rule", self.agent.rules),
            ("reference", self.agent.references),
        )
        items = [
            Candidate(kind, entry.name, entry.include, _describe(entry), entry.priority_level)
            for kind, entries in sections
            for entry in entries
            if entry.enabled
        ]
        for tool in self._available_tools():
            text = f"{tool.name} {tool.description}"
            items.append(Candidate("tool", tool.name, tool.include, text))
        return items

    def _available_tools(self) -> Sequence[ToolDescription]:
        # a tool whose definition changed since it was pinned is offered as pinned
        return offered_on(self._tools, self._tools.tools()) if self._tools else ()

    # -- the turn loop --------------------------------------------------------------------------

    async def send(self, text: str, response_schema: dict[str, Any] | None = None) -> TurnResult:
        """Run a user turn; `response_schema` constrains this turn's replies to that JSON schema.

        The request supervisors review the message before it is recorded: only what they let
        through (masked, rewritten) is stored, published or sent to the model.
        """
        self._response_schema = response_schema
        self.note(TurnStarted())
        self._apply_mentions(text)
        try:
            content = await self._review_user_message(text)
        except asyncio.CancelledError:
            return await self._cancelled_before_the_message()
        self.note(MessageAdded(message=ChatMessage(role="user", content=content)))
        return await self._run_turn()

    async def _review_user_message(self, text: str) -> str:
        """The user's message after the request chain; the turn loop acts on a block."""
        if not self.chain.supervisors:
            return text
        index = len(self.messages)
        message = ChatMessage(role="user", content=text)
        outcome = await self._supervise("request", index, message)
        self._reviewed = (index, outcome)
        return outcome.content

    async def _cancelled_before_the_message(self) -> TurnResult:
        await self.record(TurnFinished(reply="", model_calls=0, ended_by="cancelled"))
        return TurnResult(reply="", ended_by="cancelled")

    async def resume(self) -> TurnResult:
        """Finish a turn that a crash or a kill interrupted, from its last persisted step."""
        if not self.needs_resume:
            last = self.messages[-1].content if self.messages else ""
            return TurnResult(reply=last, ended_by="reply")
        if not self.owes_reply:
            return await self._end_open_turn()
        await self.record(TurnStarted())
        return await self._run_turn()

    async def _end_open_turn(self) -> TurnResult:
        """Store the end of a turn whose reply is stored (or whose user message never was)."""
        turn_messages = self.messages[self._open_turn_from or 0 :]
        if turn_messages:
            ended = TurnResult(reply=turn_messages[-1].content, ended_by="reply")
        else:
            ended = TurnResult(reply="", ended_by="cancelled")
        model_calls = sum(message.role == "assistant" for message in turn_messages)
        await self.record(
            TurnFinished(reply=ended.reply, model_calls=model_calls, ended_by=ended.ended_by)
        )
        return ended

    def _apply_mentions(self, text: str) -> None:
        known = {(c.item, c.name) for c in self.candidates()}
        for item, name in mentions(text):
            if (item, name) in known:
                change = ContextChanged(item=item, name=name, included=True, by="mention")
                self.note(change)
            else:
                error = ErrorOccurred(message=f"no {item} named {name!r}", where="mention")
                self.note(error)

    async def _run_turn(self) -> TurnResult:
        self._turn = turn = TurnResult(reply="", ended_by="reply")
        try:
            ended_by = await self._loop(turn)
        except asyncio.CancelledError:
            ended_by = "cancelled"
        except ProviderError as error:
            turn.error = str(error)
            ended_by = "error"
        turn.ended_by = ended_by
        await self.record(
            TurnFinished(reply=turn.reply, model_calls=turn.model_calls, ended_by=ended_by)
        )
        later, self._later = self._later, []
        self.chain.review_later(self, later)
        return turn

    async def _loop(self, turn: TurnResult) -> EndedBy:
        while True:
            last = self.messages[-1]
            if last.role == "assistant" and not last.tool_calls:
                turn.reply = last.content
                return "blocked" if turn.reply_blocked else "reply"
            unanswered = self._unanswered_round()
            if unanswered:
                await self._run_tools(unanswered, turn)
                continue
            if turn.model_calls >= self.settings.max_chat_turns:
                return "max_turns"
            if await self._request_blocked(turn):
                return "blocked"
            await self._call_model_with_retries(turn)

    async def _request_blocked(self, turn: TurnResult) -> bool:
        """Run the supervisors on the message the model is about to answer."""
        if not self.chain.supervisors:
            return False
        index = len(self.messages) - 1
        outcome = await self._request_outcome(index)
        if outcome.blocked_by:
            notice = f"Blocked by {outcome.blocked_by}: {outcome.reason}"
            await self.record(MessageAdded(message=ChatMessage(role="assistant", content=notice)))
            turn.reply = notice
            return True
        if outcome.content != self.messages[index].content:
            await self.record(
                MessageRevised(message_index=index, content=outcome.content, by="supervisors")
            )
        return False

    async def _request_outcome(self, index: int) -> ChainOutcome:
        """The request chain's outcome on the message at `index` (a user's: reviewed in `send`)."""
        reviewed, self._reviewed = self._reviewed, None
        if reviewed is not None and reviewed[0] == index:
            return reviewed[1]
        return await self._supervise("request", index, self.messages[index])

    async def _supervise(
        self, direction: Direction, index: int, message: ChatMessage
    ) -> ChainOutcome:
        """The chain's outcome on a message; its reviews that nothing waits for are kept for
        the end of the turn."""
        outcome = await self.chain.run(self, direction, index, message)
        self._later.extend(outcome.later)
        return outcome

    def _unanswered_round(self) -> list[ToolCall]:
        """The calls of the last round of tool calls that have no result message yet: a kill can
        stop a round between two results, and the model must not be asked before all are in."""
        for index in range(len(self.messages) - 1, -1, -1):
            message = self.messages[index]
            if message.role == "tool":
                continue
            if message.role != "assistant":
                return []
            answered = {m.tool_call_id for m in self.messages[index + 1 :]}
            return [call for call in message.tool_calls if call.id not in answered]
        return []

    # -- model calls ----------------------------------------------------------------------------

    async def _call_model_with_retries(self, turn: TurnResult) -> None:
        for attempt, delay in enumerate((*self._retry_delays_s, None)):
            try:
                await self._call_model(turn)
                return
            except ProviderError as error:
                if not error.retryable or delay is None:
                    await self.record(ErrorOccurred(message=str(error), where="model"))
                    raise
                message = f"{error} (attempt {attempt + 1}; retrying in {delay:g} s)"
                await self.record(ErrorOccurred(message=message, retryable=True, where="model"))
                await asyncio.sleep(delay)

    async def _call_model(self, turn: TurnResult) -> None:
        """Stream a reply; its tokens are shown (recorded) only as the chain's maskers let them."""
        request = await self._request()
        streamed = _Streamed(self.chain.reply_stream())
        try:
            async for chunk in self._provider.stream(request):
                self._take(chunk, streamed)
        except asyncio.CancelledError:
            self._show(streamed.stream.finish(), streamed)
            await self._keep_partial_reply("".join(streamed.shown), turn)
            raise
        except ProviderError as error:
            self._show(streamed.stream.finish(), streamed)
            if not streamed.shown:
                raise
            # part of the reply was shown: kept once, never shown again by a retry
            await self._keep_partial_reply("".join(streamed.shown), turn)
            raise ProviderError(str(error), retryable=False) from error
        self._show(streamed.stream.finish(), streamed)
        await self._record_model_call(streamed.usage, turn)
        text, calls = "".join(streamed.raw), tuple(streamed.calls)
        reply = ChatMessage(role="assistant", content=text, tool_calls=calls)
        await self.record(MessageAdded(message=await self._supervised_reply(reply, turn)))

    def _take(self, chunk: Chunk, streamed: _Streamed) -> None:
        if isinstance(chunk, TextDelta):
            streamed.raw.append(chunk.text)
            self._show(streamed.stream.feed(chunk.text), streamed)
        elif isinstance(chunk, ToolCallChunk):
            streamed.calls.append(chunk.call)
        else:
            streamed.usage = chunk

    def _show(self, text: str, streamed: _Streamed) -> None:
        """Record a token of the reply as it may be seen (masked), if there is one yet."""
        if text:
            streamed.shown.append(text)
            self.note(TokenDelta(text=text))

    async def _supervised_reply(self, reply: ChatMessage, turn: TurnResult) -> ChatMessage:
        """The reply after the supervisors: rewritten, or replaced by a notice if blocked."""
        if not self.chain.supervisors:
            return reply
        index = len(self.messages)
        outcome = await self._supervise("response", index, reply)
        if outcome.blocked_by:
            notice = f"The reply was blocked by {outcome.blocked_by}: {outcome.reason}"
            turn.reply_blocked = True
            return ChatMessage(role="assistant", content=notice)
        return reply.model_copy(update={"content": outcome.content})

    async def _keep_partial_reply(self, text: str, turn: TurnResult) -> None:
        if text:
            partial = ChatMessage(role="assistant", content=text)
            await self.record(MessageAdded(message=partial))
            turn.reply = text

    async def _record_model_call(self, usage: Usage, turn: TurnResult) -> None:
        turn.model_calls += 1
        turn.input_tokens += usage.input_tokens
        turn.output_tokens += usage.output_tokens
        await self.record(
            ModelCallFinished(
                model=str(self.model),
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                first_token_s=usage.first_token_s,
                total_s=usage.total_s,
                stop_reason=usage.stop_reason,
            )
        )

    async def _request(self) -> ChatRequest:
        entries = select_context(self.candidates(), self.context, self._query(), self.settings)
        self.note(ContextSelected(entries=tuple(entries)))
        system = ChatMessage(role="system", content=self._system_prompt(entries))
        return ChatRequest(
            model=self.model.model,
            messages=(system, *self.messages),
            tools=self._tool_specs(entries),
            temperature=self.settings.temperature,
            top_p=self.settings.top_p,
            max_tokens=self.settings.max_output_tokens,
            response_schema=self._response_schema,
        )

    def _query(self) -> str:
        latest = next((m.content for m in reversed(self.messages) if m.role == "user"), "")
        return MENTION.sub(" ", latest)

    def _system_prompt(self, entries: Sequence[ContextEntry]) -> str:
        parts = [self.agent.system_prompt.strip()]
        for kind, title, items in (
            ("rule", "Rules", self.agent.rules),
            ("reference", "References", self.agent.references),
        ):
            names = {entry.name for entry in entries if entry.item == kind}
            chosen = sorted((i for i in items if i.name in names), key=lambda i: i.priority_level)
            if chosen:
                parts.append(f"# {title}\n\n" + "\n\n".join(i.text.strip() for i in chosen))
        return "\n\n".join(part for part in parts if part)

    def _tool_specs(self, entries: Sequence[ContextEntry]) -> tuple[ToolSpec, ...]:
        names = {entry.name for entry in entries if entry.item == "tool"}
        return tuple(
            ToolSpec(name=tool.name, description=tool.description, parameters=tool.parameters)
            for tool in self._available_tools()
            if tool.name in names
        )

    # -- tool calls -----------------------------------------------------------------------------

    async def _run_tools(self, calls: Sequence[ToolCall], turn: TurnResult) -> None:
        """Decide each call in order, run the allowed ones at the same time, then record the
        results in the order the model asked for them.

        On a resumed turn the calls the log already decided come first (every decision is
        stored before any call runs): they are settled from the log, never decided or run again.
        """
        fresh = [call for call in calls if call.id not in self._decided]
        for call in calls:
            if call.id in self._decided:
                await self._settle_from_log(self._decided[call.id], turn)
        tools = {tool.name: tool for tool in self._available_tools()}
        decided = []
        for call in fresh:
            tool = tools.get(call.name)
            # what the tool's schema does not declare is not passed on, so not judged either
            shaped = forwarded(call.arguments, tool.parameters if tool else None)
            call = call.model_copy(update={"arguments": shaped.arguments})
            decision = await self._gate.review(call, tool.permission_required if tool else True)
            if decision.arguments is not None:  # a reviewer edited them before approving
                call = call.model_copy(update={"arguments": decision.arguments})
            await self.record(
                ToolCallDecided(
                    call=call,
                    allowed=decision.allowed,
                    by=decision.by,
                    reason=decision.reason,
                    confidence=decision.confidence,
                )
            )
            decided.append((call, decision, tool, shaped.note(call.name)))
        outcomes = await asyncio.gather(*(self._timed_outcome(*item[:3]) for item in decided))
        final = None
        for (call, decision, _, note), (text, is_error, ends_turn, duration) in zip(
            decided, outcomes, strict=True
        ):
            text = with_note(text, note)
            await self._record_tool_result(call, decision, text, is_error, duration, turn)
            final = text if ends_turn and final is None else final
        if final is not None:
            await self.record(MessageAdded(message=ChatMessage(role="assistant", content=final)))

    async def _settle_from_log(self, decided: ToolCallDecided, turn: TurnResult) -> None:
        """Answer a call a killed run decided: with its stored result if it has one; else, if it
        was allowed, as interrupted. It is not run again, since it may have run and had side
        effects (no tool says it is idempotent): the model is told, and decides what to do."""
        call = decided.call
        decision = GateDecision(allowed=decided.allowed, by=decided.by, reason=decided.reason)
        stored = self._finished.get(call.id)
        if stored is not None:
            self._add_tool_call(call, decision, stored.text, stored.is_error, turn)
            await self._record_tool_message(call, stored.text)
            return
        if decided.allowed:
            text = INTERRUPTED.format(name=call.name)
        else:
            text, _, _ = await self._outcome(call, decision, None)  # the denial; nothing ran
        await self._record_tool_result(call, decision, text, True, 0.0, turn)

    async def _timed_outcome(
        self, call: ToolCall, decision: GateDecision, tool: ToolDescription | None
    ) -> tuple[str, bool, bool, float]:
        started = time.perf_counter()
        text, is_error, final = await self._outcome(call, decision, tool)
        return text, is_error, final, time.perf_counter() - started

    async def _record_tool_result(
        self,
        call: ToolCall,
        decision: GateDecision,
        text: str,
        is_error: bool,
        duration: float,
        turn: TurnResult,
    ) -> None:
        """Record a call's result and its tool message, queued together so that they normally
        share one commit; a resumed turn needs only the first (see `_settle_from_log`)."""
        finished = ToolCallFinished(
            call_id=call.id, name=call.name, text=text, is_error=is_error, duration_s=duration
        )
        stored = self._emit(finished)  # the journal queues it now: one commit with the message
        queued = isinstance(stored, asyncio.Future)
        if not queued:  # a sink that stores only when awaited: keep the order
            await stored
        self.apply(finished)
        self._add_tool_call(call, decision, text, is_error, turn)
        await self._record_tool_message(call, text)
        if queued:
            await stored

    def _add_tool_call(
        self, call: ToolCall, decision: GateDecision, text: str, is_error: bool, turn: TurnResult
    ) -> None:
        turn.tool_calls.append(
            {
                "name": call.name,
                "arguments": call.arguments,
                "result": text,
                "is_error": is_error,
                "approved_by": decision.by,
            }
        )

    async def _record_tool_message(self, call: ToolCall, text: str) -> None:
        result = ChatMessage(role="tool", content=text, tool_call_id=call.id, name=call.name)
        await self.record(MessageAdded(message=result))

    async def _outcome(
        self, call: ToolCall, decision: GateDecision, tool: ToolDescription | None
    ) -> tuple[str, bool, bool]:
        if not decision.allowed:
            denied = f"The call to {call.name} was denied by {decision.by}: {decision.reason}"
            return denied, True, False
        if tool is None or self._tools is None:
            return f"There is no tool named {call.name}.", True, False
        outcome: ToolOutcome = await self._tools.call(call.name, call.arguments)
        return (
            await self._screened(call, outcome.text),
            outcome.is_error,
            getattr(outcome, "final", False),
        )

    async def _screened(self, call: ToolCall, text: str) -> str:
        """The result's text as the model may read it (secrets masked, said in a note); a
        result that reads like an injection is flagged in the session's events."""
        if self._results is None:
            return text
        screened, flagged = await self._results.screened(call.id, call.name, text)
        if flagged is not None:
            self.note(flagged)
        return screened.text


def _describe(entry: ContextItem) -> str:
    return f"{entry.name.replace('-', ' ')} {entry.description} {entry.text}"


def _merged_settings(settings: AgentSettings, overrides: dict[str, Any]) -> AgentSettings:
    if not overrides:
        return settings
    data = settings.model_dump(by_alias=True)
    data.update(overrides)
    return AgentSettings.model_validate(data)


def item_model(item: Literal["rule", "reference"]) -> type[ContextItem]:
    return Rule if item == "rule" else Reference


def item_value(item: ContextItem | None) -> dict[str, Any] | None:
    """A rule or reference as a saved-item event keeps it."""
    return None if item is None else item.model_dump(mode="json")


def replacing(item: ContextItem | None) -> ItemBefore:
    """What a save to the agent's files replaced: `item` as its file gave it, or none."""
    return ItemBefore(value=None if item is None else to_document(item))
