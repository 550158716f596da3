"""Reviewing a task's work: validation, the helper's verification, and interrogation."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from pydantic import BaseModel, Field

from foundry.orchestration import prompts
from foundry.orchestration.desk import AgentDesk, Emit, Reply
from foundry.orchestration.events import CriterionScored
from foundry.orchestration.plan import ReplyNotUnderstood, parse_reply
from foundry.orchestration.taskfile import Criterion, TaskSpec
from foundry.orchestration.validation import (
    Checker,
    CriterionScore,
    Evidence,
    ValidationCache,
    check_evidence,
    read_answer,
    score,
    validate,
)

HELPER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "criteria": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "criterion": {"type": "string"},
                    "verified": {"type": "boolean"},
                    "evidence": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {"file": {"type": "string"}, "quote": {"type": "string"}},
                            "required": ["file", "quote"],
                        },
                    },
                    "confidence": {"type": "number"},
                },
                "required": ["criterion", "verified", "evidence"],
            },
        }
    },
    "required": ["criteria"],
}
NOT_IMPLEMENTED = re.compile(r"\bnot (yet )?implemented\b|\bnot done\b|\bdid not\b", re.I)
AskOperator = Callable[[str], Awaitable[Reply]]


class HelperVerdict(BaseModel):
    criterion: str
    verified: bool
    evidence: list[dict[str, str]] = Field(default_factory=list)
    confidence: float | None = None


class HelperAnswer(BaseModel):
    criteria: list[HelperVerdict] = Field(default_factory=list)


def scores_result(scores: Sequence[CriterionScore], **fields: Any) -> dict[str, Any]:
    """A review step's journaled result."""
    return {"scores": [s.model_dump(mode="json") for s in scores], **fields}


class Review:
    """The review steps of an iteration; each returns its journaled result."""

    def __init__(self, spec: TaskSpec, desk: AgentDesk, emit: Emit) -> None:
        self.spec = spec
        self.desk = desk
        self.emit = emit
        self.checker = Checker(desk.task.workspace)
        self.cache = ValidationCache()

    async def validate(self, reply: str, iteration: int) -> dict[str, Any]:
        spec = self.spec
        scores = await validate(
            spec.criteria, self.checker, reply, spec.thresholds, self.cache, spec.goal
        )
        await self._emit_scores(scores, iteration, "checks")
        passed = sum(s.level == "pass" for s in scores)
        cached = sum(s.cached for s in scores)
        summary = f"{passed}/{len(scores)} pass, {cached} cached"
        return scores_result(scores, ok=passed == len(scores), summary=summary)

    async def verify(
        self, scores: list[CriterionScore], reply: str, iteration: int
    ) -> dict[str, Any]:
        """The helper's verdicts on the uncertain criteria; only quoted evidence counts."""
        doubtful = [s for s in scores if s.level == "uncertain"]
        text = prompts.helper_prompt(self.spec, reply, doubtful, self.checker.files)
        answer = await self.desk.consult("helper", "helper", text, HELPER_SCHEMA)
        try:
            verdicts = {v.criterion: v for v in parse_reply(answer.text, HelperAnswer).criteria}
        except ReplyNotUnderstood:
            verdicts = {}
        rescored = []
        for current in scores:
            verdict = verdicts.get(current.criterion)
            doubted = current.level == "uncertain" and verdict
            cited = await asyncio.to_thread(self._cited, verdict) if doubted else []
            rescored.append(self._rescore(current, cited) if cited else current)
        changed = [s for s in rescored if s not in scores]
        await self._emit_scores(changed, iteration, "helper")
        return scores_result(rescored, summary=f"{len(changed)} criteria confirmed with evidence")

    def _cited(self, verdict: HelperVerdict | None) -> list[Evidence]:
        """The helper's evidence that holds: quotes really found in the files it names
        (blocking: it reads them)."""
        if verdict is None:
            return []
        found = []
        for item in verdict.evidence if verdict.verified else []:
            relative, quote = item.get("file", ""), item.get("quote", "").strip()
            if quote and relative in self.checker.files and quote in self._text(relative):
                detail = f"helper: quoted {relative}"
                found.append(Evidence(factor="code", value=1.0, detail=detail, files=(relative,)))
        return found

    def _text(self, relative: str) -> str:
        return (self.desk.task.workspace / relative).read_text(errors="replace")

    def _rescore(self, current: CriterionScore, extra: Sequence[Evidence]) -> CriterionScore:
        kept = tuple(e for e in current.evidence if e.factor != "claim")
        claimed = current.factors.get("claim", 0) > 0
        return score(current.criterion, (*kept, *extra), claimed, self.spec.thresholds)

    async def interrogate(
        self,
        scores: list[CriterionScore],
        reply: str,
        iteration: int,
        round_number: int,
        ask_operator: AskOperator,
    ) -> dict[str, Any]:
        """Ask the operator where the failing criteria are met, then check the files it names."""
        failing = [s for s in scores if s.level != "pass"]
        criteria = {c.text: c for c in self.spec.criteria}
        candidates = await asyncio.to_thread(
            self._candidates, [criteria[s.criterion] for s in failing]
        )
        rounds = self.spec.limits.interrogation_rounds
        answer = await ask_operator(
            prompts.interrogation_prompt(failing, candidates, round_number, rounds)
        )
        named = [f for f in self.checker.files if f in answer.text]
        rescored = [
            await self._recheck(criteria[s.criterion], s, named, reply)
            if s.level != "pass" and named
            else s
            for s in scores
        ]
        changed = [s for s in rescored if s not in scores]
        await self._emit_scores(changed, iteration, "interrogation")
        return scores_result(
            rescored,
            gave_up=bool(NOT_IMPLEMENTED.search(answer.text)) or not answer.ok,
            summary=f"round {round_number}: the operator named {', '.join(named) or 'no file'}",
        )

    def _candidates(self, criteria: Sequence[Criterion]) -> dict[str, list[str]]:
        """The files likely to hold each criterion, from the workspace as it is now (blocking)."""
        self.checker.refresh()
        return {criterion.text: self.checker.candidates(criterion) for criterion in criteria}

    async def _recheck(
        self, criterion: Criterion, current: CriterionScore, named: list[str], reply: str
    ) -> CriterionScore:
        """Run the criterion's checks again on the named files; keep the better evidence."""
        checks = criterion.effective_checks()
        answer = read_answer(reply, self.spec.goal, [c.text for c in self.spec.criteria])
        fresh = [await check_evidence(self.checker, check, answer, named) for check in checks]
        before = [e for e in current.evidence if e.factor != "claim"]
        # one piece of evidence per check comes first; a helper's quotes may follow, and stay
        pairs = zip(before[: len(checks)], fresh, strict=True)
        best = [max(old, new, key=lambda e: e.value) for old, new in pairs]
        claimed = current.factors.get("claim", 0) > 0
        extra = before[len(checks) :]
        return score(current.criterion, [*best, *extra], claimed, self.spec.thresholds)

    async def _emit_scores(self, scores: Sequence[CriterionScore], iteration: int, by: str) -> None:
        for s in scores:
            await self.emit(
                CriterionScored(
                    criterion=s.criterion,
                    iteration=iteration,
                    score=s.score,
                    level=s.level,
                    factors=s.factors,
                    evidence=tuple(e.detail for e in s.evidence),
                    cached=s.cached,
                    by=by,
                ),
                once=True,
            )
