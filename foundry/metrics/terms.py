"""The terms of the metrics in plain Python (no pydantic, no database), for the series, the
aggregates and the export alike: which points a filter keeps, the level and outcome of a
supervisor's decision, a phase's share of a task's time."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

LEVELS = ("policy", "grant", "supervisor", "human", "timeout")  # that decide a tool call
TO_A_PERSON = ("human", "timeout")  # the levels of a tool call that waited for a person
# every level of supervisor decision the dashboards count: the tool call's, then a message
# supervisor's verdict on a message, then a task's check of a criterion
DECISION_LEVELS = (*LEVELS, "message", "task")
OUTCOMES = ("allowed", "changed", "escalated", "denied")
TASK_CHECKS = "task checks"  # the decider of a criterion's score, among the supervisors
L1_SUPERVISOR = "tool supervisor (L1)"  # the decider of the calls L1 decided
_OUTCOME_OF_ACTION = {
    "allow": "allowed",
    "modify": "changed",
    "human_review": "escalated",
    "block": "denied",
}
_OUTCOME_OF_CRITERION = {"pass": "allowed", "uncertain": "escalated", "fail": "denied"}
# how a person answered a question (an approval): "unchanged" is a needless question, approved
# as asked with nothing flagged about it
QUESTION_OUTCOMES = ("unchanged", "edited", "denied", "flagged", "timed_out")
# the L1 supervisor's unseen verdict (shadow mode) against the person's decision: agreed; it
# would have let through a call the person denied or changed; denied, or sent on to a person,
# a call the person approved as asked; sent on a call the person then denied or changed
AGREEMENTS = ("agreed", "let_through", "denied_approved", "escalated_approved", "escalated_denied")
_LEVEL_OF_PREFIX = {
    "policy": "policy",
    "grant": "grant",
    "agent": "supervisor",
    "supervisor": "supervisor",  # a supervisor through the approvals API (supervisor:agent7)
    "timeout": "timeout",
}


@dataclass(frozen=True)
class MetricsFilter:
    """Which points to keep; an empty set or None keeps everything on that axis."""

    agents: frozenset[str] = frozenset()
    task_ids: frozenset[str] = frozenset()
    since: datetime | None = None
    until: datetime | None = None

    def admits(self, time: datetime, task_id: str, agents: Collection[str]) -> bool:
        if self.since is not None and time < self.since:
            return False
        if self.until is not None and time > self.until:
            return False
        if self.task_ids and task_id not in self.task_ids:
            return False
        return not self.agents or not self.agents.isdisjoint(agents)


def resolution_level(by: str) -> str:
    """The level that decided a tool call, from the decider's name (`policy:rule`, `agent:...`)."""
    return _LEVEL_OF_PREFIX.get(by.split(":", 1)[0], "human")


def waited_for_a_person(resolved_by: str) -> bool:
    """Whether an approval's resolution ended a wait for a person: not when a supervisor
    resolved it through the approvals API (`supervisor:agent7`), which decided it at L1."""
    return resolution_level(resolved_by) != "supervisor"


def question_outcome(status: str, edited: bool, flagged: bool) -> str:
    """How a person answered a question (one of QUESTION_OUTCOMES)."""
    if status == "timed_out":
        return "timed_out"
    if flagged:
        return "flagged"
    if status != "approved":
        return "denied"
    return "edited" if edited else "unchanged"


def shadow_agreement(shadow: str, status: str, edited: bool) -> str | None:
    """How the L1 supervisor's unseen verdict (approve, deny, escalate) compares with what a
    person decided (one of AGREEMENTS); None when no person decided (a timeout). An approval
    with edited parameters counts as a refusal of the call as it was asked."""
    if status not in ("approved", "denied"):
        return None
    allowed = status == "approved" and not edited
    if shadow == "approve":
        return "agreed" if allowed else "let_through"
    if shadow == "deny":
        return "denied_approved" if allowed else "agreed"
    return "escalated_approved" if allowed else "escalated_denied"


def verdict_agreement(shadow: str | None, person: str | None, edited: bool) -> str | None:
    """The agreement (one of AGREEMENTS) of an event that may carry both a shadow verdict and a
    person's decision (an approval's resolution, a shadow verdict given late); None unless it
    carries both."""
    if shadow is None or person is None:
        return None
    return shadow_agreement(shadow, person, edited)


def message_outcome(action: str) -> str:
    """The outcome (one of OUTCOMES) of a message supervisor's action."""
    return _OUTCOME_OF_ACTION.get(action, "escalated")


def criterion_outcome(level: str) -> str:
    """The outcome (one of OUTCOMES) of a task criterion's score level."""
    return _OUTCOME_OF_CRITERION.get(level, "escalated")


def decider_of_call(by: str) -> str | None:
    """The name a tool call's decider goes by among the supervisors with a confidence (the
    L1 supervisor's), or None for a decider that states none (a rule, a grant, a person)."""
    return L1_SUPERVISOR if resolution_level(by) == "supervisor" else None


def phase_shares(seconds: Mapping[str, float]) -> Iterable[tuple[str, float, float]]:
    """Each phase, its seconds and its percent of the time of all of them, in their order."""
    total = sum(seconds.values())
    return ((name, value, value * 100 / total if total else 0.0) for name, value in seconds.items())
