"""The agent definition as pydantic models, independent of the format it is stored in."""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    ModelWrapValidatorHandler,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    Tag,
    field_validator,
    model_serializer,
    model_validator,
)
from pydantic.alias_generators import to_camel

NAME_PATTERN = r"^[A-Za-z0-9_-]+$"


class AgentModel(BaseModel):
    """Base of every agent model: camelCase on disk, unknown fields kept, edits validated.

    A model remembers the order of the keys it was read from and writes them back in that order.
    """

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="allow",
        validate_assignment=True,
    )
    _key_order: tuple[str, ...] = PrivateAttr(default=())

    @model_validator(mode="wrap")
    @classmethod
    def _remember_key_order(cls, data: Any, handler: ModelWrapValidatorHandler[Any]) -> Any:
        model = handler(data)
        if isinstance(data, dict) and isinstance(model, AgentModel):
            model._key_order = tuple(str(key) for key in data)
        return model

    @model_serializer(mode="wrap")
    def _write_in_read_order(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if not self._key_order or not isinstance(data, dict):
            return data
        rank = {key: index for index, key in enumerate(self._key_order)}
        return dict(sorted(data.items(), key=lambda item: rank.get(item[0], len(rank))))


class IncludeMode(StrEnum):
    ALWAYS = "always"
    MANUAL = "manual"
    AGENT = "agent"


class ToolPermission(StrEnum):
    TOOL = "tool"  # each tool's own setting decides
    ALWAYS = "always"  # every call asks for approval
    NEVER = "never"  # no call asks for approval


class SupervisionPermission(StrEnum):
    READ_ONLY = "READ_ONLY"
    MODIFY_CONTEXT = "MODIFY_CONTEXT"
    MODIFY_MESSAGES = "MODIFY_MESSAGES"
    FULL_CONTROL = "FULL_CONTROL"


def _number_from_text(value: Any) -> Any:
    """Older tsagent files store numbers as strings ("10", "0.5"); read those as numbers."""
    if isinstance(value, str) and value.strip():
        text = value.strip()
        try:
            return int(text)
        except ValueError:
            try:
                return float(text)
            except ValueError:
                return value
    return value


def _bool_from_text(value: Any) -> Any:
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    return value


LenientInt = Annotated[int, BeforeValidator(_number_from_text)]
LenientFloat = Annotated[int | float, BeforeValidator(_number_from_text)]
LenientBool = Annotated[bool, BeforeValidator(_bool_from_text)]


class AgentMetadata(AgentModel):
    name: str = Field(min_length=1)
    description: str = ""
    version: str | None = None
    created: str | None = None
    last_accessed: str | None = None


class AgentSettings(AgentModel):
    max_chat_turns: LenientInt = Field(default=20, ge=1, le=1000)
    max_output_tokens: LenientInt = Field(default=1000, ge=1, le=1_000_000)
    temperature: LenientFloat = Field(default=0.5, ge=0.0, le=2.0)
    top_p: LenientFloat = Field(default=0.5, ge=0.0, le=1.0)
    model: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_.-]+:.+$")
    tool_permission: ToolPermission = ToolPermission.TOOL
    context_top_k: LenientInt = Field(default=20, ge=0, le=1000)
    context_top_n: LenientInt = Field(default=5, ge=0, le=1000)
    context_include_score: LenientFloat = Field(default=0.7, ge=0.0, le=1.0)

    @property
    def model_reference(self) -> str | None:
        """The model to use; files from before tsagent renamed it call it `mostRecentModel`."""
        legacy = (self.model_extra or {}).get("mostRecentModel")
        return self.model or (legacy if isinstance(legacy, str) else None)


class ContextItem(AgentModel):
    """A rule or a reference: a named markdown text that can be put in the model's context."""

    name: str = Field(pattern=NAME_PATTERN)
    description: str = ""
    priority_level: LenientInt = Field(default=500, ge=0, le=999)
    enabled: LenientBool = True
    include: IncludeMode = IncludeMode.MANUAL
    text: str = ""


class Rule(ContextItem):
    pass


class Reference(ContextItem):
    pass


class ToolOverride(AgentModel):
    permission_required: LenientBool | None = None
    include: IncludeMode | None = None


class ServerToolDefaults(AgentModel):
    permission_required: LenientBool = True
    include: IncludeMode = IncludeMode.ALWAYS


class McpServerBase(AgentModel):
    server_tool_defaults: ServerToolDefaults | None = None
    tools: dict[str, ToolOverride] = Field(default_factory=dict)


class ServerConfinement(AgentModel):
    """Foundry's own: which known server this is, and what its confinement adds (docs/trust.md)."""

    kind: str | None = None  # a server kind Foundry knows (tools/identity.py), when not read off
    network: LenientBool | None = None  # None: the kind's default
    read: list[str] = Field(default_factory=list)  # relative to the agent's folder
    write: list[str] = Field(default_factory=list)


class StdioServer(McpServerBase):
    type: Literal["stdio"] = "stdio"
    command: str = Field(min_length=1)
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    confinement: ServerConfinement | None = None


class SseServer(McpServerBase):
    type: Literal["sse"] = "sse"
    url: str = Field(pattern=r"^https?://")
    headers: dict[str, str] = Field(default_factory=dict)


class StreamableHttpServer(McpServerBase):
    type: Literal["streamable-http"] = "streamable-http"
    url: str = Field(pattern=r"^https?://")
    headers: dict[str, str] = Field(default_factory=dict)


class InternalServer(McpServerBase):
    type: Literal["internal"] = "internal"
    tool: str = Field(min_length=1)


MCP_SERVER_TYPES = ("stdio", "sse", "streamable-http", "internal")


def _mcp_server_type(value: Any) -> str | None:
    """The server's transport: its `type`, or stdio when only a command is given."""
    if isinstance(value, dict):
        declared = value.get("type")
        if declared is None and "command" in value:
            return "stdio"
        return declared if isinstance(declared, str) else None
    return getattr(value, "type", None)


McpServerConfig = Annotated[
    Annotated[StdioServer, Tag("stdio")]
    | Annotated[SseServer, Tag("sse")]
    | Annotated[StreamableHttpServer, Tag("streamable-http")]
    | Annotated[InternalServer, Tag("internal")],
    Discriminator(
        _mcp_server_type,
        custom_error_type="unknown_server_type",
        custom_error_message="unknown MCP server type; use one of " + ", ".join(MCP_SERVER_TYPES),
    ),
]


PiiKind = Literal["email", "phone", "card", "national_id"]
PII_KINDS: tuple[PiiKind, ...] = ("email", "phone", "card", "national_id")
Direction = Literal["request", "response"]
DIRECTIONS: tuple[Direction, ...] = ("request", "response")


def _known_permission(value: str) -> str:
    """tsagent writes permissions both as `READ_ONLY` and `read_only`; keep the spelling given."""
    if value.upper() not in SupervisionPermission.__members__:
        choices = ", ".join(SupervisionPermission.__members__)
        raise ValueError(f"unknown permission {value!r}; use {choices}")
    return value


PermissionName = Annotated[str, AfterValidator(_known_permission)]


class AgentSupervisorConfig(AgentModel):
    agent_path: str = Field(min_length=1)
    allowed_actions: list[PermissionName] = Field(default_factory=lambda: ["READ_ONLY"])
    system_prompt: str | None = None
    fallback_behavior: Literal["allow", "block"] = "allow"
    max_modifications: LenientInt = Field(default=10, ge=0, le=1000)
    apply_to: list[Direction] = Field(default_factory=lambda: list(DIRECTIONS))
    # Foundry's: how long a message may wait for this supervisor (a default by what it can do)
    timeout_seconds: LenientFloat | None = Field(default=None, gt=0, le=3600)
    # Foundry's: off while its agent's model is the small embedded one (see capable_model.py)
    needs_capable_model: LenientBool = False

    @property
    def permissions(self) -> set[SupervisionPermission]:
        return {SupervisionPermission[action.upper()] for action in self.allowed_actions}


class GuardianConfig(AgentModel):
    """PII masking and keyword blocking applied to requests and responses."""

    mask_pii: list[PiiKind] = Field(default_factory=lambda: list(PII_KINDS))
    block_keywords: list[str] = Field(default_factory=list)
    apply_to: list[Direction] = Field(default_factory=lambda: list(DIRECTIONS))


PolicyOperator = Literal[
    "==",
    "!=",
    "<",
    "<=",
    ">",
    ">=",
    "in",
    "contains",
    "starts_with",
    "within",
    "matches",
    "larger_than",
    "read_only_sql",
    "several_sql_statements",
    "read_only_command",
    "reaches",
    "carries_data",
    "holds_secret",
    "command_names",
    "gives_only",
]
# the annotations a server may declare of a tool (MCP's wire names), each with the value the
# specification gives it when the server does not say
TOOL_HINT_DEFAULTS = {
    "readOnlyHint": False,
    "destructiveHint": True,
    "idempotentHint": False,
    "openWorldHint": True,
}
URL_PLACES = ("public", "inside")  # what `reaches` tells of a URL (supervision/addresses.py)


class PolicyCondition(AgentModel):
    param: str = Field(min_length=1)
    op: PolicyOperator
    value: Any = None

    @model_validator(mode="after")
    def _value_suits_the_operator(self) -> PolicyCondition:
        """`matches` takes a regular expression, `larger_than` a number of bytes."""
        if self.op in ("matches", "command_names"):
            _check_regular_expression(self.value)
        if self.op == "larger_than" and (
            not isinstance(self.value, int | float) or isinstance(self.value, bool)
        ):
            raise ValueError(f"larger_than needs a number of bytes (got {self.value!r})")
        if self.op == "reaches" and self.value not in URL_PLACES:
            raise ValueError(f"reaches needs one of {', '.join(URL_PLACES)} (got {self.value!r})")
        if self.op == "read_only_command" and not isinstance(self.value, str):
            raise ValueError(f"read_only_command needs the folder as text (got {self.value!r})")
        if self.op == "gives_only" and not (
            isinstance(self.value, list) and all(isinstance(key, str) for key in self.value)
        ):
            raise ValueError(f"gives_only needs a list of parameter names (got {self.value!r})")
        sql = self.op in ("read_only_sql", "several_sql_statements")
        if sql and not (self.value is None or isinstance(self.value, str)):
            raise ValueError(f"{self.op} needs an SQL dialect or nothing (got {self.value!r})")
        return self


def _check_regular_expression(value: Any) -> None:
    if not isinstance(value, str):
        raise ValueError(f"matches needs a regular expression as text (got {value!r})")
    try:
        re.compile(value)
    except re.error as error:
        raise ValueError(
            f"matches: {value!r} is not a valid regular expression ({error})"
        ) from None


class PolicyMatch(AgentModel):
    all: list[PolicyCondition] = Field(default_factory=list)
    any: list[PolicyCondition] = Field(default_factory=list)


class PolicyRule(AgentModel):
    name: str = Field(pattern=NAME_PATTERN)
    agent: str = "*"
    tool: str = "*"
    # the kind of server the rule was written for ("filesystem", "git": tools/identity.py); a
    # rule with a kind never matches a tool of a server of another kind, or of none Foundry knows
    kind: str | None = Field(default=None, pattern=NAME_PATTERN)
    # what the tool's server declares of it (`readOnlyHint: true`, ...): the rule covers only a
    # tool a trusted server listed with these annotations (MCP's defaults where it says none)
    hints: dict[str, bool] | None = None
    when: PolicyMatch | None = None
    action: Literal["allow", "deny", "supervisor", "human"]

    @field_validator("hints")
    @classmethod
    def _known_hints(cls, hints: dict[str, bool] | None) -> dict[str, bool] | None:
        unknown = sorted(set(hints or {}) - set(TOOL_HINT_DEFAULTS))
        if unknown:
            known = ", ".join(TOOL_HINT_DEFAULTS)
            raise ValueError(f"hints: {', '.join(unknown)} is not an annotation ({known})")
        return hints


class RateLimit(AgentModel):
    tool: str = "*"
    max_calls: LenientInt = Field(ge=1)
    per_seconds: LenientFloat = Field(gt=0)


class PolicyConfig(AgentModel):
    """The L0 policy engine: ordered first-match-wins rules; no match denies."""

    rules: list[PolicyRule] = Field(default_factory=list)
    rate_limits: list[RateLimit] = Field(default_factory=list)
    loop_detection: LenientBool = True
    supervisor_agent_path: str | None = None
    confidence_threshold: LenientFloat = Field(default=0.8, ge=0.0, le=1.0)
    approval_timeout_seconds: LenientFloat = Field(default=300, gt=0)
    on_timeout: Literal["deny", "allow"] = "deny"
    # the L1 supervisor also judges, unseen, the calls a person decides (docs/policy.md)
    shadow_mode: LenientBool = False


class CollectionConfig(AgentModel):
    """Statistics of the conversation, exportable."""

    export_path: str | None = None


class ArchitectConfig(AgentModel):
    """tsagent's architect has no settings; whatever a file gives it is kept as it is."""


class SupervisorEntryBase(AgentModel):
    id: str = Field(pattern=NAME_PATTERN)
    name: str = ""
    enabled: LenientBool = True


class AgentSupervisorEntry(SupervisorEntryBase):
    type: Literal["agent"]
    config: AgentSupervisorConfig


class GuardianSupervisorEntry(SupervisorEntryBase):
    type: Literal["guardian"]
    config: GuardianConfig = Field(default_factory=GuardianConfig)


class PolicySupervisorEntry(SupervisorEntryBase):
    type: Literal["policy"]
    config: PolicyConfig = Field(default_factory=PolicyConfig)


class CollectionSupervisorEntry(SupervisorEntryBase):
    type: Literal["collection"]
    config: CollectionConfig = Field(default_factory=CollectionConfig)


class ArchitectSupervisorEntry(SupervisorEntryBase):
    """tsagent's built-in architect: watches the conversation for patterns, never blocks."""

    type: Literal["architect"]
    config: ArchitectConfig = Field(default_factory=ArchitectConfig)


SUPERVISOR_TYPES = ("agent", "guardian", "policy", "collection", "architect")

SupervisorEntry = Annotated[
    AgentSupervisorEntry
    | GuardianSupervisorEntry
    | PolicySupervisorEntry
    | CollectionSupervisorEntry
    | ArchitectSupervisorEntry,
    Field(discriminator="type"),
]


class Agent(AgentModel):
    """Everything that defines an agent; fields Foundry does not know are kept as extras."""

    metadata: AgentMetadata
    settings: AgentSettings = Field(default_factory=AgentSettings)
    system_prompt: str = ""
    rules: list[Rule] = Field(default_factory=list)
    references: list[Reference] = Field(default_factory=list)
    providers: dict[str, dict[str, Any]] = Field(default_factory=dict)
    mcp_servers: dict[str, McpServerConfig] = Field(default_factory=dict)
    supervisors: list[SupervisorEntry] = Field(default_factory=list)

    @field_validator("providers")
    @classmethod
    def _providers_are_named(cls, value: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        for name in value:
            if not name.strip():
                raise ValueError("a provider needs a name")
        return value

    def rule(self, name: str) -> Rule | None:
        return next((rule for rule in self.rules if rule.name == name), None)

    def reference(self, name: str) -> Reference | None:
        return next((ref for ref in self.references if ref.name == name), None)
