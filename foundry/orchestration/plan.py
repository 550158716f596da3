"""The supervisor's plan and rescue decisions, as JSON under a schema, and the rule-based gate
that decides whether a task needs a plan at all."""

from __future__ import annotations

import json
import re
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from foundry.orchestration.taskfile import TaskSpec

Complexity = Literal["trivial", "simple", "moderate", "complex"]
REASONING = re.compile(
    r"\b(refactor|design|architect|analy[sz]e|optimi[sz]e|migrate|debug|investigate|rewrite|plan)\w*",
    re.I,
)
M = TypeVar("M", bound=BaseModel)
SEVERAL = re.compile(r"\b(and then|then|after that|as well as|both|each|all)\b", re.I)


class PlanStep(BaseModel):
    model_config = ConfigDict(frozen=True)

    step: int
    action: str
    params: dict[str, Any] = Field(default_factory=dict)
    fallback: str | None = None


class Plan(BaseModel):
    model_config = ConfigDict(frozen=True)

    understanding: str
    complexity: int = Field(ge=1, le=5)
    confidence: float = Field(ge=0.0, le=1.0)
    steps: list[PlanStep] = Field(default_factory=list)
    operator: str = ""
    operator_prompt: str
    timeout_seconds: float = Field(default=30.0, gt=0)
    max_retries: int = Field(default=2, ge=0, le=10)


class RescueDecision(BaseModel):
    model_config = ConfigDict(frozen=True)

    analysis: str
    action: Literal["ADJUST_PLAN", "CHANGE_AGENT", "TAKEOVER"]
    adjusted_plan: Plan | None = None
    new_operator: str | None = None
    direct_result: str | None = None


PLAN_SCHEMA: dict[str, Any] = Plan.model_json_schema()
RESCUE_SCHEMA: dict[str, Any] = RescueDecision.model_json_schema()


class ReplyNotUnderstood(ValueError):
    pass


def parse_reply(text: str, model: type[M]) -> M:
    """The first JSON object in a model's reply, validated; a clear error if there is none."""
    start = text.find("{")
    if start < 0:
        raise ReplyNotUnderstood("the reply holds no JSON object")
    try:
        data, _ = json.JSONDecoder().raw_decode(text[start:])
        return model.model_validate(data)
    except json.JSONDecodeError as error:
        raise ReplyNotUnderstood(f"the reply's JSON is broken: {error.msg}") from None
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise ReplyNotUnderstood(
            f"the reply's JSON does not fit: {where}: {first['msg']}"
        ) from None


def classify(spec: TaskSpec) -> Complexity:
    """Rule-based, no model: how much planning a task needs."""
    words = len(spec.goal.split())
    only_answer = all(check.reply for c in spec.criteria for check in c.checks) and all(
        c.checks for c in spec.criteria
    )
    if only_answer and words <= 12 and len(spec.criteria) == 1:
        return "trivial"
    if REASONING.search(spec.goal) or len(spec.criteria) >= 4:
        return "complex"
    if len(spec.criteria) >= 2 or SEVERAL.search(spec.goal):
        return "moderate"
    return "simple"


def needs_plan(complexity: Complexity) -> bool:
    return complexity in ("moderate", "complex")


def direct_plan(spec: TaskSpec, operator: str, prompt: str) -> Plan:
    """The plan of a task that goes straight to its operator: one step, the task itself."""
    return Plan(
        understanding=spec.goal,
        complexity=1,
        confidence=1.0,
        steps=[PlanStep(step=1, action="complete the task")],
        operator=operator,
        operator_prompt=prompt,
        timeout_seconds=spec.limits.step_timeouts[-1],
        max_retries=spec.limits.max_retries,
    )
