"""A message supervisor that is an agent: its own model reviews each message with the tools."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from foundry.agent.document import load_agent
from foundry.agent.models import Agent, AgentSupervisorEntry, IncludeMode
from foundry.agent.problems import AgentError
from foundry.llm.base import (
    ChatMessage,
    ChatRequest,
    ModelProvider,
    ProviderError,
    TextDelta,
    ToolCall,
    ToolCallChunk,
    ToolSpec,
)
from foundry.llm.priority import within_limit
from foundry.llm.registry import ModelChoice, open_provider
from foundry.session.supervisors import Action, Direction, Reach, SupervisionResult
from foundry.supervision.supervised_tools import SupervisedTools, budget_of, reach_of

if TYPE_CHECKING:
    from foundry.session.chat import ChatSession

MAX_MODEL_CALLS = 6
MODEL_TIMEOUT_S = 60.0
PROSE_KEPT = 300  # characters of a prose reply kept when asking again for JSON
DECISION_TOOLS: dict[Action, str] = {
    "allow": "supervised_allow_message",
    "block": "supervised_block_message",
    "modify": "supervised_modify_message",
    "human_review": "supervised_request_human_review",
}
CONTEXT_LISTS: dict[str, str] = {
    "include_rules": "supervised_include_rule",
    "exclude_rules": "supervised_exclude_rule",
    "include_references": "supervised_include_reference",
    "exclude_references": "supervised_exclude_reference",
}
WHAT = {
    "request": "a request the supervised agent {name!r} is about to answer",
    "response": "a reply the supervised agent {name!r} has written",
}


class SupervisorError(Exception):
    """A supervisor agent could not be loaded or its model could not be opened."""


class StructuredDecision(BaseModel):
    """The decision of a model that cannot call tools, given as JSON under a schema."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    decision: Action
    reason: str = ""
    content: str = ""
    include_rules: list[str] = []
    exclude_rules: list[str] = []
    include_references: list[str] = []
    exclude_references: list[str] = []


@dataclass(frozen=True)
class LoadedSupervisor:
    """The supervisor agent and the provider of its own model."""

    agent: Agent
    choice: ModelChoice
    provider: ModelProvider


class AgentSupervisor:
    """Reviews each message by running the supervisor agent's model in a small tool loop.

    The decision comes only from a decision tool (or, for models without tool calls, from a JSON
    answer turned into the same tool calls); without one, `fallback_behavior` decides. Every
    review has its own conversation and tools, so sessions share nothing.
    """

    def __init__(
        self, entry: AgentSupervisorEntry, base_dir: Path, timeout_s: float = MODEL_TIMEOUT_S
    ) -> None:
        self.id = entry.id
        self.name = entry.name or entry.id
        self.fallback_behavior: Literal["allow", "block"] = entry.config.fallback_behavior
        self.directions: frozenset[Direction] = frozenset(entry.config.apply_to)
        self.reach: Reach = reach_of(entry.config)
        self.budget_s = budget_of(entry.config)
        self.config = entry.config
        self.path = (Path(base_dir) / entry.config.agent_path).resolve()
        self._timeout_s = timeout_s
        self._loaded: LoadedSupervisor | None = None
        self._starting = asyncio.Lock()

    async def start(self) -> None:
        """Load the supervisor agent and open its model; raises SupervisorError if it cannot."""
        async with self._starting:
            if self._loaded is None:
                self._loaded = await asyncio.to_thread(_load, self.path)
                in_process = self._loaded.choice.provider == "embedded"
                self.budget_s = budget_of(self.config, in_process)

    @property
    def model(self) -> ModelChoice | None:
        """The model it runs on, once started."""
        return self._loaded.choice if self._loaded is not None else None

    async def _ready(self) -> LoadedSupervisor:
        """The loaded supervisor, starting it first if the engine has not."""
        if self._loaded is None:
            await self.start()
        if self._loaded is None:
            raise SupervisorError(f"{self.name} was closed while it was starting")
        return self._loaded

    async def aclose(self) -> None:
        loaded, self._loaded = self._loaded, None
        if loaded is not None:
            await loaded.provider.aclose()

    async def review(
        self, session: ChatSession, direction: Direction, message: ChatMessage
    ) -> SupervisionResult:
        loaded = await self._ready()
        tools = SupervisedTools(
            session,
            self.config.permissions,
            self.config.max_modifications,
            direction,
            message,
            supervisor_id=self.id,
        )
        prompt = self._system_prompt(loaded.agent, session, direction, tools)
        conversation = [
            ChatMessage(role="system", content=prompt),
            ChatMessage(role="user", content=_under_review(direction, message)),
        ]
        problem = await self._converse(loaded, tools, conversation)
        return self._result(tools, problem)

    async def _converse(
        self, loaded: LoadedSupervisor, tools: SupervisedTools, conversation: list[ChatMessage]
    ) -> str | None:
        """Ask the model until a decision tool is called; what went wrong if none was."""
        for _ in range(MAX_MODEL_CALLS - 1):
            reply = await self._ask(loaded, conversation, tools.specs())
            if not reply.tool_calls:  # prose is never read: keep only its start, for context
                conversation.append(reply.model_copy(update={"content": _start(reply.content)}))
                return await self._ask_structured(loaded, tools, conversation)
            conversation.append(reply)
            for call in reply.tool_calls:
                conversation.append(await _run(tools, call))
            if tools.decision is not None:
                return None
        return f"it called no decision tool in {MAX_MODEL_CALLS - 1} model calls"

    async def _ask_structured(
        self, loaded: LoadedSupervisor, tools: SupervisedTools, conversation: list[ChatMessage]
    ) -> str | None:
        """For models that answer in prose: ask once for the decision as JSON under a schema."""
        schema = decision_schema(tools.specs())
        conversation.append(ChatMessage(role="user", content=_structured_prompt(schema)))
        reply = await self._ask(loaded, conversation, (), schema)
        try:
            answer = StructuredDecision.model_validate_json(reply.content)
        except ValidationError:
            return f"its answer was neither a tool call nor valid JSON: {reply.content[:80]!r}"
        outcome = await apply_structured(tools, answer)
        return None if tools.decision is not None else f"its decision was refused: {outcome}"

    async def _ask(
        self,
        loaded: LoadedSupervisor,
        conversation: Sequence[ChatMessage],
        specs: tuple[ToolSpec, ...],
        schema: dict[str, Any] | None = None,
    ) -> ChatMessage:
        settings = loaded.agent.settings
        request = ChatRequest(
            model=loaded.choice.model,
            messages=tuple(conversation),
            tools=specs,
            response_schema=schema,
            temperature=settings.temperature,
            top_p=settings.top_p,
            max_tokens=settings.max_output_tokens,
            timeout_s=self._timeout_s,
        )
        try:  # its limit is for the model's work on it, not for its wait for the model's turn
            return await within_limit(_reply(loaded.provider, request), self._timeout_s)
        except TimeoutError as error:  # said with the limit that applied (not the chain's)
            limit = f"its model call did not finish within {self._timeout_s:g} s"
            raise TimeoutError(limit) from error

    def _system_prompt(
        self, agent: Agent, session: ChatSession, direction: Direction, tools: SupervisedTools
    ) -> str:
        """The supervisor agent's prompt and `always` items, the entry's prompt, the task."""
        always = [
            item.text.strip()
            for item in (*agent.rules, *agent.references)
            if item.enabled and item.include == IncludeMode.ALWAYS
        ]
        decisions = [spec.name for spec in tools.specs() if spec.name in DECISION_TOOLS.values()]
        what = WHAT[direction].format(name=session.agent.metadata.name)
        task = (
            f"You are reviewing {what}. Use the supervised_* tools to look at its conversation "
            "and context, and to change its context if you are allowed to. Finish by calling "
            f"exactly one decision tool: {', '.join(decisions)}."
        )
        parts = [agent.system_prompt, *always, self.config.system_prompt or "", task]
        return "\n\n".join(part.strip() for part in parts if part.strip())

    def _result(self, tools: SupervisedTools, problem: str | None) -> SupervisionResult:
        changes = tuple(tools.changes)
        decision = tools.decision
        if decision is None:
            why = problem or "it made no decision"
            reason = f"{self.name} made no decision ({why}); fallback: {self.fallback_behavior}"
            return SupervisionResult(
                action=self.fallback_behavior, reasons=(reason,), changes=changes, fallback=True
            )
        return SupervisionResult(
            action=decision.action,
            reasons=(decision.reason,),
            content=decision.content,
            changes=changes,
        )


def decision_schema(specs: Sequence[ToolSpec]) -> dict[str, Any]:
    """The JSON shape of a structured decision, offering only what the tools permit."""
    offered = {spec.name for spec in specs}
    decisions = [action for action, tool in DECISION_TOOLS.items() if tool in offered]
    properties: dict[str, Any] = {
        "decision": {"type": "string", "enum": decisions},
        "reason": {"type": "string"},
    }
    if DECISION_TOOLS["modify"] in offered:
        properties["content"] = {"type": "string"}
    for key, tool in CONTEXT_LISTS.items():
        if tool in offered:
            properties[key] = {"type": "array", "items": {"type": "string"}}
    return {"type": "object", "properties": properties, "required": ["decision", "reason"]}


async def apply_structured(tools: SupervisedTools, answer: StructuredDecision) -> str:
    """Make the same tool calls a tool-calling model would; the decision tool's result."""
    for key, tool in CONTEXT_LISTS.items():
        for name in getattr(answer, key):
            await tools.call(tool, {"name": name})
    arguments = {"reason": answer.reason or "no reason given"}
    if answer.decision == "modify":
        arguments["content"] = answer.content
    return await tools.call(DECISION_TOOLS[answer.decision], arguments)


def _load(path: Path) -> LoadedSupervisor:
    """Runs in a thread: reads the agent's files and opens its model's provider."""
    try:
        document = load_agent(path)
        agent = document.agent
        if agent is None:  # load_agent raises instead; kept for the type checker
            raise SupervisorError(f"no agent at {path}")
        choice = ModelChoice.parse(agent.settings.model_reference)
        provider = open_provider(choice, agent.providers, document.base_dir)
    except (AgentError, ProviderError, OSError) as error:
        raise SupervisorError(f"the supervisor agent at {path} could not start: {error}") from error
    return LoadedSupervisor(agent=agent, choice=choice, provider=provider)


async def _reply(provider: ModelProvider, request: ChatRequest) -> ChatMessage:
    text: list[str] = []
    calls: list[ToolCall] = []
    async for chunk in provider.stream(request):
        if isinstance(chunk, TextDelta):
            text.append(chunk.text)
        elif isinstance(chunk, ToolCallChunk):
            calls.append(chunk.call)
    return ChatMessage(role="assistant", content="".join(text), tool_calls=tuple(calls))


async def _run(tools: SupervisedTools, call: ToolCall) -> ChatMessage:
    result = await tools.call(call.name, call.arguments)
    return ChatMessage(role="tool", content=result, tool_call_id=call.id, name=call.name)


def _under_review(direction: Direction, message: ChatMessage) -> str:
    text = f"The {direction} to review:\n\n{message.content}"
    for call in message.tool_calls:
        text += f"\n\nIt also calls the tool {call.name} with {call.arguments}."
    return text


def _start(text: str, limit: int = PROSE_KEPT) -> str:
    return text if len(text) <= limit else text[:limit].rstrip() + " ..."


def _structured_prompt(schema: dict[str, Any]) -> str:
    fields = ", ".join(schema["properties"])
    choices = ", ".join(schema["properties"]["decision"]["enum"])
    return (
        f"You called no tool. Answer now with JSON only, with the fields {fields}. "
        f"decision is one of {choices}; reason says why in one sentence."
    )
