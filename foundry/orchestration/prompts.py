"""What the agents of a task are told: task-aware context, guidance by task type, and the prompts
of each phase (plan, operate, fix, verify, interrogate, rescue)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from foundry.orchestration.plan import Plan, PlanStep
from foundry.orchestration.taskfile import Criterion, TaskSpec, TaskType
from foundry.orchestration.validation import CriterionScore

GUIDANCE: dict[TaskType, str] = {
    "implementation": (
        "Write the code in the workspace's files. Follow the structure that is already there, "
        "keep functions small and name things after what they do."
    ),
    "configuration": (
        "Change configuration files in place; keep their format, comments and unrelated keys. "
        "Say which file and key you changed and which environment variables are involved."
    ),
    "testing": (
        "Write tests that can fail: assert on behaviour, cover the edge cases named in the "
        "criteria, and run them before you answer."
    ),
    "documentation": (
        "Write for the reader named in the task; be complete and exact, with one example per "
        "feature, and keep the documents' existing headings."
    ),
    "refactoring": (
        "Keep behaviour unchanged: change structure in small steps and keep the tests passing "
        "after each."
    ),
}
TYPE_WORDS: tuple[tuple[TaskType, re.Pattern[str]], ...] = (
    ("testing", re.compile(r"\btests?\b|\btesting\b|\bcoverage\b", re.I)),
    ("configuration", re.compile(r"\bconfig\w*|\bsetup\b|\bsettings\b|\benvironment\b", re.I)),
    ("documentation", re.compile(r"\bdocument\w*|\breadme\b|\bdocs?\b|\bguide\b", re.I)),
    ("refactoring", re.compile(r"\brefactor\w*|\bimprove\b|\bclean ?up\b|\brestructure\b", re.I)),
)
MENTIONS_GOAL = re.compile(r"\b(goal|project|overall|mission)\b", re.I)
MENTIONS_PREVIOUS = re.compile(
    r"\b(previous|earlier|last task|extend|build on|builds on|existing work|continue)\b", re.I
)
MENTIONS_QUEUE = re.compile(r"\b(next|queue|later|upcoming|unblock\w*|blocked)\b", re.I)
STATUS_PROTOCOL = (
    "End your answer with one line `STATUS: done` when the work is finished, or "
    "`STATUS: failed: <reason>` when you could not do it."
)
TEAM_PROTOCOL = (
    "You coordinate workers. Call `delegate(worker, instructions)` to give a worker a piece of "
    "the task; workers see only your instructions. Several delegations in one answer run at the "
    "same time. If one worker's answer is already the final answer, call "
    "`forward_message(worker)` and stop: that answer is returned word for word."
)


def task_type(spec: TaskSpec) -> TaskType:
    if spec.type:
        return spec.type
    text = f"{spec.name} {spec.goal}"
    return next((kind for kind, words in TYPE_WORDS if words.search(text)), "implementation")


def task_context(spec: TaskSpec, workspace: str, aware: bool = True) -> dict[str, Any]:
    """What an operator is told about where the task stands. Task-aware, it passes on the
    project's goal, completed, blocked and queued tasks only when the task refers to them."""
    text = f"{spec.goal} {' '.join(c.text for c in spec.criteria)}"
    project = spec.project
    context: dict[str, Any] = {"workspace": workspace}
    if project.root:
        context["project"] = project.root
    if project.goal and (not aware or MENTIONS_GOAL.search(text)):
        context["goal"] = project.goal
    if project.completed and (not aware or MENTIONS_PREVIOUS.search(text)):
        recent = project.completed[-5:] if aware else project.completed
        context["completed"] = [t.model_dump() for t in recent]
    if project.blocked and (not aware or MENTIONS_QUEUE.search(text)):
        context["blocked"] = [t.model_dump() for t in project.blocked]
    if project.queue and (not aware or MENTIONS_QUEUE.search(text)):
        context["queue"] = project.queue if not aware else project.queue[:3]
    return context


def criteria_list(criteria: Sequence[Criterion | str]) -> str:
    texts = [c if isinstance(c, str) else c.text for c in criteria]
    return "\n".join(f"{n}. {text}" for n, text in enumerate(texts, 1))


def operator_prompt(spec: TaskSpec, context: dict[str, Any], minimal: bool = False) -> str:
    """The task for its operator; `minimal` (a trivial task) leaves out the how-to guidance."""
    parts = [f"# Task: {spec.name}", spec.goal, "## Acceptance criteria"]
    parts += [criteria_list(spec.criteria), "## Context", json.dumps(context, indent=1)]
    if not minimal:
        parts += ["## How", GUIDANCE[task_type(spec)]]
    parts.append(STATUS_PROTOCOL)
    return "\n\n".join(parts)


def step_prompt(plan: Plan, step: PlanStep, first: bool, fallback: bool = False) -> str:
    heading = f"Step {step.step} of {len(plan.steps)}: {step.action}"
    if fallback and step.fallback:
        heading += f"\nThe first attempt failed; instead: {step.fallback}"
    params = f"\nParameters: {json.dumps(step.params)}" if step.params else ""
    body = f"{plan.operator_prompt}\n\n{heading}{params}" if first else f"{heading}{params}"
    return f"{body}\n\n{STATUS_PROTOCOL}"


def planning_prompt(spec: TaskSpec, context: dict[str, Any], operators: Sequence[str]) -> str:
    return "\n\n".join(
        [
            "You plan a task for an operator agent. Answer with one JSON object: understanding "
            "(one sentence), complexity (1-5), confidence (0-1), steps (each with step, action, "
            "params, fallback), operator (one of the names below), operator_prompt (precise "
            "instructions for the operator), timeout_seconds, max_retries.",
            f"# Task: {spec.name}\n{spec.goal}",
            "## Acceptance criteria\n" + criteria_list(spec.criteria),
            "## Operators\n" + ", ".join(operators),
            "## Context\n" + json.dumps(context, indent=1),
        ]
    )


def fix_prompt(failures: Sequence[CriterionScore], approach: str, repeated: str = "") -> str:
    lines = [
        f"- {f.criterion} ({f.score:.0f}/100): {'; '.join(f.failed_details) or 'no evidence'}"
        for f in failures
    ]
    parts = ["Validation found criteria that are not met yet:", "\n".join(lines)]
    if approach == "change_approach":
        parts.append(
            f"The same problem came back ({repeated}). Your approach is not working: take a "
            "different one instead of repeating it."
        )
    if approach == "strict":
        parts.append(
            "Strict mode: change only what the failing criteria need, check each one yourself "
            "and say where (file and line) each is met."
        )
    parts.append(STATUS_PROTOCOL)
    return "\n\n".join(parts)


def interrogation_prompt(
    failures: Sequence[CriterionScore],
    candidates: dict[str, list[str]],
    round_number: int,
    rounds: int,
) -> str:
    sections = []
    for failure in failures:
        found = candidates.get(failure.criterion) or []
        sections.append(
            f"Criterion: {failure.criterion}\n"
            f"- files that may hold it: {', '.join(found) or 'none found'}\n"
            f"- missing: {'; '.join(failure.failed_details) or 'nothing specific'}"
        )
    return "\n\n".join(
        [
            f"Question {round_number} of {rounds}. Validation could not confirm these criteria.",
            *sections,
            "For each, name the exact file path(s) where it is met, or say plainly that it is "
            "not implemented. Do not change files in this answer.",
        ]
    )


def helper_prompt(
    spec: TaskSpec, reply: str, criteria: Sequence[CriterionScore], files: Sequence[str]
) -> str:
    shown = ", ".join(files[:20]) + (" ..." if len(files) > 20 else "")
    return "\n\n".join(
        [
            "Verify, do not assume. For each criterion below, decide whether the workspace meets "
            "it. A criterion counts as verified only with evidence: the file and an exact quote "
            "from it. The operator's own description is not evidence.",
            f"Task: {spec.goal}",
            "Criteria:\n" + criteria_list([c.criterion for c in criteria]),
            f"Workspace files: {shown or 'none'}",
            f"The operator said:\n{reply[:2000]}",
            'Answer with JSON: {"criteria": [{"criterion": ..., "verified": true|false, '
            '"evidence": [{"file": ..., "quote": ...}], "confidence": 0-1}]}',
        ]
    )


def rescue_prompt(
    spec: TaskSpec, plan: Plan, failures: Sequence[str], operators: Sequence[str]
) -> str:
    return "\n\n".join(
        [
            "The operator failed this task repeatedly. Decide what to do and answer with one JSON "
            "object: analysis, action (ADJUST_PLAN, CHANGE_AGENT or TAKEOVER), adjusted_plan (for "
            "ADJUST_PLAN), new_operator (for CHANGE_AGENT), direct_result (for TAKEOVER: your own "
            "answer; you will also get the workspace tools).",
            f"# Task: {spec.name}\n{spec.goal}",
            "## Plan\n" + plan.model_dump_json(indent=1),
            "## Failures\n" + "\n".join(f"- {f}" for f in failures),
            "## Operators\n" + ", ".join(operators),
        ]
    )


def team_prompt(spec: TaskSpec, workers: dict[str, str], plan: Plan | None) -> str:
    listed = "\n".join(
        f"- {name}: {description or 'no description'}" for name, description in workers.items()
    )
    parts = [TEAM_PROTOCOL, f"## Workers\n{listed}", f"# Task: {spec.name}\n{spec.goal}"]
    parts.append("## Acceptance criteria\n" + criteria_list(spec.criteria))
    if plan is not None:
        parts.append("## Plan\n" + plan.operator_prompt)
    return "\n\n".join(parts)
