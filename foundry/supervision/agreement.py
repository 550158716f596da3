"""How well a supervisor agrees with people: its shadow verdicts against their decisions.

Each approval a person decided that holds a shadow verdict (shadow.py: Foundry's L1 in shadow
mode, the L1's own escalations, an agent-mesh supervisor under `foundry serve
--shadow-supervisors`) is one question, compared as foundry.metrics.terms.shadow_agreement
compares it, so the dashboards and this report count alike. Per supervisor and per tool: the
verdicts, how many agreed, the calls it would have let through that a person denied or edited,
those it would have denied or sent on that a person approved as asked, and the safest
confidence threshold (`safest_threshold`). Plain Python over the store's records: no Qt.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from foundry.metrics.terms import AGREEMENTS, shadow_agreement
from foundry.store import ApprovalRecord
from foundry.supervision.l1 import UNABLE_PROVIDERS
from foundry.supervision.shadow import L1_NAME

ALL_TOOLS = "*"
STEPS = 100  # thresholds are looked at in hundredths


@dataclass(frozen=True)
class Question:
    """One call a person decided, and the verdict a supervisor gave on it unseen."""

    supervisor: str
    tool: str
    decision: str  # approve, deny, escalate
    confidence: float | None
    agreement: str  # one of AGREEMENTS
    seconds: float | None = None  # what the verdict took, when the supervisor ran in Foundry
    tokens: int | None = None

    @property
    def acting_confidence(self) -> float:
        """The confidence a threshold compares: a verdict that states none acts at any."""
        return 1.0 if self.confidence is None else self.confidence


@dataclass(frozen=True)
class Threshold:
    """The lowest confidence threshold that lets through no call a person refused (`value`,
    None when even 1.0 would let one through), the questions it would have settled as the
    person did, and the calls a person approved that it would have denied."""

    value: float | None
    settled: int = 0
    wrongly_denied: int = 0


@dataclass(frozen=True)
class Agreement:
    """One supervisor's figures, for one tool or for all of them (`tool` is ALL_TOOLS)."""

    supervisor: str
    tool: str
    verdicts: int
    counts: dict[str, int]
    threshold: Threshold
    median_s: float | None = None
    median_tokens: float | None = None

    @property
    def agreed(self) -> int:
        return self.counts["agreed"]

    @property
    def let_through(self) -> int:
        """Calls it would have let through that a person denied or edited."""
        return self.counts["let_through"]

    @property
    def held_back(self) -> int:
        """Calls a person approved as asked that it would have denied or sent on to a person."""
        return self.counts["denied_approved"] + self.counts["escalated_approved"]

    @property
    def percent(self) -> float:
        return self.agreed * 100 / self.verdicts if self.verdicts else 0.0

    def as_json(self) -> dict[str, Any]:
        return {
            "supervisor": self.supervisor,
            "tool": self.tool,
            "verdicts": self.verdicts,
            "agreement_percent": round(self.percent, 1),
            "let_through": self.let_through,
            "held_back": self.held_back,
            **{f"count_{name}": self.counts[name] for name in AGREEMENTS},
            "safest_threshold": self.threshold.value,
            "settled_at_threshold": self.threshold.settled,
            "wrongly_denied_at_threshold": self.threshold.wrongly_denied,
            "median_seconds": self.median_s,
            "median_tokens": self.median_tokens,
        }


def questions(approvals: Iterable[ApprovalRecord], agent: str | None = None) -> list[Question]:
    """The questions among `approvals` (of `agent` only, when given): those with a shadow
    verdict that a person decided (a timeout or a pending one compares with nothing)."""
    found = []
    for approval in approvals:
        verdict = approval.shadow_verdict
        if not verdict or (agent is not None and approval.agent_id != agent):
            continue
        decision = str(verdict.get("decision", ""))
        if decision not in ("approve", "deny", "escalate"):
            continue
        agreement = shadow_agreement(decision, approval.status, approval.edited)
        if agreement is None:
            continue
        found.append(
            Question(
                supervisor=str(verdict.get("supervisor") or "unknown"),
                tool=approval.tool,
                decision=decision,
                confidence=_number(verdict.get("confidence")),
                agreement=agreement,
                seconds=None if verdict.get("seen") else _number(verdict.get("seconds")),
                tokens=_whole(verdict.get("tokens")),
            )
        )
    return found


def safest_threshold(asked: Sequence[Question]) -> Threshold:
    """The lowest threshold, in hundredths, at which no approve verdict on a call a person
    denied or edited is at or above it; with the approve and deny verdicts at or above it that
    agreed (what it would have settled without asking) and the denials of calls a person
    approved."""
    risky = [q.acting_confidence for q in asked if q.agreement == "let_through"]
    steps = math.floor(round(max(risky) * STEPS, 6)) + 1 if risky else 0
    if steps > STEPS:
        return Threshold(value=None)
    value = steps / STEPS
    acting = [
        q
        for q in asked
        if q.decision in ("approve", "deny") and q.acting_confidence >= value - 1e-9
    ]
    return Threshold(
        value=value,
        settled=sum(q.agreement == "agreed" for q in acting),
        wrongly_denied=sum(q.agreement == "denied_approved" for q in acting),
    )


def agreement_report(asked: Iterable[Question]) -> list[Agreement]:
    """For each supervisor (by name): its figures over all tools, then per tool by name."""
    groups: dict[tuple[str, str], list[Question]] = {}
    for question in asked:
        groups.setdefault((question.supervisor, ALL_TOOLS), []).append(question)
        groups.setdefault((question.supervisor, question.tool), []).append(question)
    return [_figures(key, groups[key]) for key in sorted(groups, key=_order)]


def _order(key: tuple[str, str]) -> tuple[str, bool, str]:
    supervisor, tool = key
    return supervisor, tool != ALL_TOOLS, tool


def _figures(key: tuple[str, str], asked: list[Question]) -> Agreement:
    counts = Counter(q.agreement for q in asked)
    seconds = [q.seconds for q in asked if q.seconds is not None and q.seconds > 0]
    tokens = [q.tokens for q in asked if q.tokens]
    return Agreement(
        supervisor=key[0],
        tool=key[1],
        verdicts=len(asked),
        counts={name: counts.get(name, 0) for name in AGREEMENTS},
        threshold=safest_threshold(asked),
        median_s=statistics.median(seconds) if seconds else None,
        median_tokens=statistics.median(tokens) if tokens else None,
    )


def shadow_cost(asked: Iterable[Question]) -> tuple[int, float | None, float | None]:
    """What shadow verdicts cost so far: how many were paid for (an escalation already shown
    costs nothing), their median seconds and median tokens (None when unknown)."""
    paid = [q for q in asked if q.seconds is not None and q.seconds > 0]
    seconds = [q.seconds for q in paid if q.seconds is not None]
    tokens = [q.tokens for q in paid if q.tokens]
    median_s = statistics.median(seconds) if seconds else None
    return len(seconds), median_s, statistics.median(tokens) if tokens else None


def shadow_cost_note(provider: str | None, asked: Iterable[Question]) -> str:
    """What shadow mode costs, said beside its switch: the provider of the supervisor's model
    (None: no supervisor) and the questions recorded so far (Foundry's L1's count)."""
    if provider is None:
        return (
            "No L1 supervisor is set (Policy page, Limits and escalation): shadow mode has "
            "nothing to run."
        )
    if provider in UNABLE_PROVIDERS:
        return "The embedded model cannot judge calls: connect a capable model for the supervisor."
    count, median_s, median_tokens = shadow_cost(q for q in asked if q.supervisor == L1_NAME)
    if not count or median_s is None:
        return "One supervisor model call per question; none made yet."
    tokens = f", {median_tokens:g} tokens" if median_tokens is not None else ""
    return f"One supervisor model call per question; so far: median {median_s:.1f} s{tokens}."


def report_lines(rows: Sequence[Agreement]) -> list[str]:
    """The report as `foundry approvals agreement` prints it."""
    if not rows:
        return [
            "no shadow verdicts yet: turn on shadow mode in the agent's policy (shadowMode), or "
            "serve agent-mesh supervisors with foundry serve --shadow-supervisors"
        ]
    lines: list[str] = []
    for row in rows:
        if row.tool == ALL_TOOLS:
            lines += ["", row.supervisor] if lines else [row.supervisor]
        lines.append(_row_line(row))
    return lines


def _row_line(row: Agreement) -> str:
    tool = "all tools" if row.tool == ALL_TOOLS else row.tool
    threshold = row.threshold
    if threshold.value is None:
        safest = "no safe threshold (it let a refused call through at confidence 1.0)"
    else:
        safest = (
            f"safest threshold {threshold.value:.2f}: it would have settled "
            f"{threshold.settled} of them"
        )
        if threshold.wrongly_denied:
            safest += f" and wrongly denied {threshold.wrongly_denied}"
    cost = ""
    if row.median_s is not None:
        cost = f"; median {row.median_s:.1f} s"
        if row.median_tokens is not None:
            cost += f", {row.median_tokens:g} tokens"
    return (
        f"  {tool}: {row.verdicts} verdict(s), {row.percent:.0f}% agreed; let through "
        f"{row.let_through} a person refused; held back {row.held_back} a person approved; "
        f"{safest}{cost}"
    )


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _whole(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
