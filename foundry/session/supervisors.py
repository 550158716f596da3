"""Message supervisors: an ordered chain that sees every request before the model and every
response after it, and allows, modifies, blocks or asks a human about each."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from foundry.llm.base import ChatMessage

if TYPE_CHECKING:
    from foundry.session.chat import ChatSession

Direction = Literal["request", "response"]
Action = Literal["allow", "modify", "block", "human_review"]
# What a supervisor can do to the message it reviews, which decides whether the message waits:
# "message": it can block or rewrite it (or its fallback blocks): the message waits, within
#   the supervisor's budget;
# "context": it changes only the context (rules, references, what is included), which counts
#   from the next model request: a request waits for it within its budget, a reply never;
# "observe": it only reads and notes: nothing waits for it.
Reach = Literal["message", "context", "observe"]


class SupervisionResult(BaseModel):
    """One supervisor's decision on one message.

    `content` is the rewritten message for `modify`. `changes` lists, in plain words, the context
    changes the supervisor made to the session while deciding (included a rule, ...). `fallback`
    is set when the supervisor failed and its configured fallback decided instead.
    """

    model_config = ConfigDict(frozen=True)

    action: Action
    reasons: tuple[str, ...] = ()
    content: str | None = None
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    changes: tuple[str, ...] = ()
    fallback: bool = False


class MessageSupervisor(Protocol):
    """A member of the chain. `review` gets the session (to read, and within its permissions
    change, its context) and the message: on requests the latest user message, on responses the
    assistant's reply."""

    id: str
    name: str
    fallback_behavior: Literal["allow", "block"]
    directions: frozenset[Direction]  # what it reviews: requests, responses or both
    reach: Reach
    budget_s: float  # how long a message may wait for it (see Reach)

    async def review(
        self, session: ChatSession, direction: Direction, message: ChatMessage
    ) -> SupervisionResult: ...

    async def aclose(self) -> None: ...
