"""Needless questions: how a person answered what each rule asked, and the narrowest allow rules
that would have settled the routine questions.

A question is needless when a person approved it as asked with nothing flagged about it
(`metrics.terms.question_outcome` "unchanged"). Where one agent's calls of one tool, sent to a
person by one rule, were approved so at least ROUTINE_APPROVALS times, and nothing that rule
asked of that tool for that agent was ever denied, edited, flagged or timed out, an `allow` rule
is proposed that lets through only what those calls did, placed just above the rule that asked:

- the asking rule's own conditions, kind and hints, so that the proposal covers no call that
  rule did not ask about (first match wins: nothing another rule decides changes);
- the agent and the tool by their exact names;
- `gives_only` the parameters the approved calls gave (the same ones in each);
- `within` the real folder each path lay in (`rule_from_call.real_folder`: links followed,
  where the server opens it), and `in` the paths themselves when they repeat;
- `in` the few values any other parameter took, a URL's origin when its URLs varied;
- nothing on prose the person read and approved each time (a file's content, a commit's
  message): any other parameter that varied freely (a command, a query, a list of entities)
  means no proposal.

Then every approval of the agent, and its calls that rules denied, are decided again with the
proposal added: it is offered only if no call that was denied, edited, flagged or timed out is
decided differently, and only if it settles a question. Nothing here saves a rule: a person
reviews each in the agent's Policy page.
"""

from __future__ import annotations

import glob
import math
import os
import re
import statistics
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel

from foundry.agent.models import PolicyCondition, PolicyConfig, PolicyMatch, PolicyRule
from foundry.metrics.terms import question_outcome, waited_for_a_person
from foundry.store import ApprovalRecord
from foundry.supervision.paths import ServerPlaces, ServerSite, is_path_name
from foundry.supervision.policy import EVERY_PATH
from foundry.supervision.policy_check import CallToCheck, CheckedCall
from foundry.supervision.rule_from_call import NoRuleProposed, real_folder, rule_name
from foundry.words import counted

ROUTINE_APPROVALS = 3  # approvals as asked, none refused, before a rule is proposed
FEW_VALUES = 3  # at most this many values of a parameter are listed (`in`)
# prose a person reads in the question and approved each time: it may vary under a proposal
PAYLOAD_NAMES = frozenset(
    {"content", "contents", "edits", "text", "body", "message", "description", "comment",
     "title", "summary", "note", "notes", "subject"}
)  # fmt: skip
WITHDRAWN = "withdrawn"  # an approval its call gave up on: nobody answered it
NO_RULE = "(no rule)"
_WORDS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
Decide = Callable[[PolicyConfig, list[CallToCheck]], list[CheckedCall]]


class QuestionCounts(BaseModel, frozen=True):
    """How a person answered the questions one rule asked about one tool of one agent; the
    waits are from the question to its answer, in seconds."""

    agent: str
    tool: str
    rule: str
    asked: int
    unchanged: int
    edited: int
    denied: int
    flagged: int
    timed_out: int
    median_wait_s: float | None = None
    p90_wait_s: float | None = None


class ProposedRule(BaseModel, frozen=True):
    """A rule that would have settled routine questions: `before` is the rule that asked,
    `approvals` the approvals it was made from, `settles` the questions the what-if finds it
    settles, `refused_changed` the refused calls (denied, edited, flagged, timed out) it would
    decide differently: it is offered only when that is 0."""

    rule: PolicyRule
    before: str
    agent: str
    tool: str
    approvals: int
    settles: int = 0
    refused_changed: int = 0


class NeedlessReport(BaseModel, frozen=True):
    """The questions put to a person, by rule, tool and agent; the rules proposed; and why a
    routine group got none (`not_proposed`)."""

    counts: list[QuestionCounts]
    proposals: list[ProposedRule]
    not_proposed: list[str] = []
    settled: int = 0  # the questions all the proposals together would have settled

    @property
    def asked(self) -> int:
        return sum(count.asked for count in self.counts)

    @property
    def needless(self) -> int:
        return sum(count.unchanged for count in self.counts)

    def summary(self) -> str:
        """The report in a sentence, as the Policy page and the CLI show it."""
        return questions_sentence(self.asked, self.needless, len(self.proposals), self.settled)


def questions_sentence(asked: int, needless: int, rules: int, settled: int, agents: int = 1) -> str:
    """What people were asked, how much of it needlessly, and what `rules` proposed (for
    `agents` agents) would have settled, in a sentence."""
    if not asked:
        return "No call has asked a person yet."
    were = "was" if needless == 1 else "were"
    text = f"{needless:,} of your last {counted(asked, 'question')} {were} approved unchanged"
    if not needless:
        return text + "."
    if not rules:
        return text + f"; no narrow rule would settle {'it' if needless == 1 else 'them'}."
    where = f" (for {agents:,} agents)" if agents > 1 else ""
    return f"{text}: {counted(rules, 'rule')}{where} would have settled {settled:,} of them."


# -- the counts -----------------------------------------------------------------------------------


def answered_by_a_person(approval: ApprovalRecord) -> bool:
    """Whether a person (or the timeout of a person's question) answered it: not a supervisor
    through the API, not a call that gave up, not one still pending."""
    by = approval.resolved_by or ""
    return approval.status != "pending" and by != WITHDRAWN and waited_for_a_person(by)


def outcome_of(approval: ApprovalRecord) -> str:
    """How the question was answered (one of metrics.terms.QUESTION_OUTCOMES)."""
    flagged = approval.injection_risk or bool(approval.concerns)
    return question_outcome(approval.status, approval.edited, flagged)


def question_counts(approvals: Iterable[ApprovalRecord]) -> list[QuestionCounts]:
    """The questions a person answered, by agent, tool and rule, the most asked first."""
    groups = _groups(a for a in approvals if answered_by_a_person(a))
    counts = [_counted(key, records) for key, records in groups.items()]
    return sorted(counts, key=lambda c: (-c.asked, c.agent, c.tool, c.rule))


def _groups(
    approvals: Iterable[ApprovalRecord],
) -> dict[tuple[str, str, str], list[ApprovalRecord]]:
    groups: dict[tuple[str, str, str], list[ApprovalRecord]] = defaultdict(list)
    for approval in approvals:
        groups[(approval.agent_id, approval.tool, approval.policy_rule or NO_RULE)].append(approval)
    return groups


def _counted(key: tuple[str, str, str], records: list[ApprovalRecord]) -> QuestionCounts:
    outcomes = [outcome_of(record) for record in records]
    waits = sorted(
        (record.resolved_at - record.created_at).total_seconds()
        for record in records
        if record.resolved_at is not None
    )
    return QuestionCounts(
        agent=key[0],
        tool=key[1],
        rule=key[2],
        asked=len(records),
        unchanged=outcomes.count("unchanged"),
        edited=outcomes.count("edited"),
        denied=outcomes.count("denied"),
        flagged=outcomes.count("flagged"),
        timed_out=outcomes.count("timed_out"),
        median_wait_s=statistics.median(waits) if waits else None,
        p90_wait_s=waits[math.ceil(0.9 * len(waits)) - 1] if waits else None,
    )


# -- the candidates -------------------------------------------------------------------------------


class _NotNarrow(ValueError):
    """No rule narrow enough can be made from the calls (the message says why)."""


def candidate_rules(
    approvals: Iterable[ApprovalRecord],
    config: PolicyConfig,
    workspace: Path,
    server_folders: ServerPlaces | None = None,
) -> tuple[list[ProposedRule], list[str]]:
    """The rules proposed from the routine groups before any what-if, and why each routine
    group that got none got none."""
    asking = {rule.name: rule for rule in reversed(config.rules)}  # the first of a name decides
    taken = {rule.name for rule in config.rules}
    proposals: list[ProposedRule] = []
    refused: list[str] = []
    resolved = [a for a in approvals if a.status != "pending" and a.resolved_by != WITHDRAWN]
    for (agent, tool, rule), records in sorted(_groups(resolved).items()):
        unchanged = [r for r in records if outcome_of(r) == "unchanged" and answered_by_a_person(r)]
        if len(unchanged) < ROUTINE_APPROVALS:
            continue
        label = f"{tool} for {agent}, asked by {rule}"
        why = _why_never(rule, records, asking)
        if why is not None:
            refused.append(f"{label}: {why}")
            continue
        for place, calls in _by_place(tool, unchanged, workspace, server_folders).items():
            if len(calls) < ROUTINE_APPROVALS:
                continue
            try:
                made = _narrowest(asking[rule], agent, tool, calls, place, taken, server_folders)
            except _NotNarrow as why_not:
                refused.append(f"{label}: {why_not}")
                continue
            taken.add(made.name)
            proposals.append(
                ProposedRule(rule=made, before=rule, agent=agent, tool=tool, approvals=len(calls))
            )
    return proposals, refused


def _why_never(
    rule: str, records: Sequence[ApprovalRecord], asking: Mapping[str, PolicyRule]
) -> str | None:
    """Why no rule is proposed for this group whatever its calls were, or None."""
    if rule.startswith("injection:"):
        return "an injection signal asked, which no rule may settle"
    if rule not in asking:
        return "the rule that asked is not in the policy now"
    if asking[rule].action != "human":
        return f"the rule {rule} does not ask a person now"
    refused = sorted({outcome_of(r) for r in records} - {"unchanged"})
    if refused:
        return "some were " + ", ".join(word.replace("_", " ") for word in refused)
    return None


Place = tuple[tuple[str, ...], tuple[tuple[str, str], ...]]  # the keys given, each path's folder


def _by_place(
    tool: str,
    calls: Iterable[ApprovalRecord],
    workspace: Path,
    server_folders: ServerPlaces | None,
) -> dict[Place, list[ApprovalRecord]]:
    """The calls by the parameters they gave and the real folder of each path; a call whose
    paths cannot be placed, or lie in several folders, in none."""
    places: dict[Place, list[ApprovalRecord]] = defaultdict(list)
    for call in calls:
        folders = _folders(tool, call.params, workspace, server_folders)
        if folders is not None:
            places[(tuple(sorted(call.params)), folders)].append(call)
    return places


def _folders(
    tool: str, params: Mapping[str, Any], workspace: Path, server_folders: ServerPlaces | None
) -> tuple[tuple[str, str], ...] | None:
    found = []
    for key, value in sorted(params.items()):
        if not is_path_name(key):
            continue
        paths = [value] if isinstance(value, str) else value
        if not isinstance(paths, list) or not paths or not all(isinstance(p, str) for p in paths):
            return None
        try:
            folders = {real_folder(tool, key, p, workspace, server_folders)[0] for p in paths}
        except NoRuleProposed:
            return None
        folder = folders.pop() if len(folders) == 1 else None
        if folder is None or _around(folder, workspace):
            return None
        found.append((key, folder))
    return tuple(found)


def _around(folder: str, workspace: Path) -> bool:
    """Whether `folder` (absolute when outside the workspace) holds the workspace or is the
    home folder: a rule within it would reach all that lies around the project."""
    if not os.path.isabs(folder):
        return False
    real = os.path.realpath(workspace)
    home = os.path.realpath(os.path.expanduser("~"))
    return folder == home or os.path.commonpath([folder, real]) == folder


def _narrowest(
    asking: PolicyRule,
    agent: str,
    tool: str,
    calls: Sequence[ApprovalRecord],
    place: Place,
    taken: Iterable[str],
    server_folders: ServerPlaces | None,
) -> PolicyRule:
    keys, folders = place
    conditions = [PolicyCondition(param=EVERY_PATH, op="gives_only", value=list(keys))]
    for key, folder in folders:
        conditions.append(PolicyCondition(param=key, op="within", value=folder))
    for key in keys:
        conditions += _pinned(key, [call.params[key] for call in calls], is_path_name(key))
    when = asking.when or PolicyMatch()
    where = f"in-{_folder_words(folders[0][1])}" if folders else "as-approved"
    return PolicyRule(
        name=rule_name(f"routine-{tool}-{where}", taken),
        agent=glob.escape(agent),
        tool=glob.escape(tool),
        kind=asking.kind or _kind_of(tool, server_folders),
        hints=asking.hints,
        when=PolicyMatch(
            all=[*when.all, *(c for c in conditions if c not in when.all)], any=list(when.any)
        ),
        action="allow",
    )


def _pinned(key: str, values: list[Any], is_path: bool) -> list[PolicyCondition]:
    """The conditions that hold `key` to what the approved calls gave it."""
    distinct = _distinct(values)
    few = len(distinct) <= FEW_VALUES and _listable(distinct)
    if few and len(distinct) < len(values):  # the same few values again and again
        return [_among(key, distinct)]
    if is_path or _is_payload(key):
        return []  # a path is held by `within` its folder; prose was read each time
    origins = _origins(values)
    if origins is not None and len(origins) <= FEW_VALUES:
        pattern = "^(?:" + "|".join(re.escape(o) for o in origins) + r")(?:[/?#]|$)"
        return [PolicyCondition(param=key, op="matches", value=pattern)]
    if few:
        return [_among(key, distinct)]
    raise _NotNarrow(f"{key} took {len(distinct)} different values")


def _among(key: str, values: list[Any]) -> PolicyCondition:
    if len(values) == 1:
        return PolicyCondition(param=key, op="==", value=values[0])
    return PolicyCondition(param=key, op="in", value=values)


def _is_payload(key: str) -> bool:
    return "".join(word.lower() for word in _WORDS.findall(key)) in PAYLOAD_NAMES


def _kind_of(tool: str, server_folders: ServerPlaces | None) -> str | None:
    """The kind of the tool's server, when Foundry knows it: the rule then covers no other."""
    site = (server_folders or {}).get(tool.partition(".")[0])
    return site.kind if isinstance(site, ServerSite) else None


def _distinct(values: Iterable[Any]) -> list[Any]:
    distinct: list[Any] = []
    for value in values:
        if not any(type(value) is type(seen) and value == seen for seen in distinct):
            distinct.append(value)
    return distinct


def _listable(values: Iterable[Any]) -> bool:
    """Whether `==`/`in` compare these values as the calls gave them (text, numbers, yes/no,
    lists of text)."""
    return all(
        isinstance(value, str | int | float | bool)
        or (isinstance(value, list) and all(isinstance(item, str) for item in value))
        for value in values
    )


def _origins(values: Iterable[Any]) -> list[str] | None:
    """The scheme and host of each URL, when every value is an http(s) URL read one way (no
    user information, no backslash); else None."""
    origins: list[str] = []
    for value in values:
        if not isinstance(value, str) or "\\" in value or any(c.isspace() for c in value):
            return None
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname or "@" in parts.netloc:
            return None
        origin = f"{parts.scheme}://{parts.netloc}"
        if origin not in origins:
            origins.append(origin)
    return origins


def _folder_words(folder: str) -> str:
    return "workspace" if folder == "." else folder.rstrip("/\\").rsplit("/", 1)[-1] or "root"


# -- the what-if ----------------------------------------------------------------------------------


def with_rules(config: PolicyConfig, proposals: Iterable[ProposedRule]) -> PolicyConfig:
    """The policy with each proposed rule just above the first rule of the name that asked."""
    rules = list(config.rules)
    for proposal in proposals:
        names = [rule.name for rule in rules]
        rules.insert(names.index(proposal.before), proposal.rule)
    return config.model_copy(update={"rules": rules})


def call_of(approval: ApprovalRecord) -> CallToCheck:
    """The approval's call (its final parameters), decided at the moment it was asked."""
    return CallToCheck(
        id=approval.id,
        agent=approval.agent_id,
        tool=approval.tool,
        params=dict(approval.params),
        at=approval.created_at,
        session=approval.session_id,
    )


def needless_report(
    approvals: Sequence[ApprovalRecord],
    config: PolicyConfig,
    workspace: Path,
    decide: Decide,
    server_folders: ServerPlaces | None = None,
    denied_calls: Sequence[CallToCheck] = (),
) -> NeedlessReport:
    """The counts, and the proposals that pass the what-if: `decide` decides calls under a
    policy (policy_check.what_if); `denied_calls` are the agent's recorded calls that rules
    denied, which no proposal may change either."""
    candidates, not_proposed = candidate_rules(approvals, config, workspace, server_folders)
    answered = sorted(
        (a for a in approvals if a.status != "pending" and a.resolved_by != WITHDRAWN),
        key=lambda a: a.created_at,
    )
    labels = {a.id: outcome_of(a) for a in answered}
    labels |= {call.id: "denied by a rule" for call in denied_calls}
    calls = sorted([*map(call_of, answered), *denied_calls], key=_time_of)
    baseline = {checked.id: checked.outcome for checked in decide(config, calls)}

    def judged(proposals: list[ProposedRule]) -> tuple[int, int]:
        now = decide(with_rules(config, proposals), calls)
        changed = [c for c in now if c.outcome != baseline.get(c.id)]
        refused = sum(labels.get(c.id) != "unchanged" for c in changed)
        settles = sum(
            labels.get(c.id) == "unchanged"
            and baseline.get(c.id) == "human"
            and c.outcome == "allow"
            for c in changed
        )
        return settles, refused

    offered = []
    for candidate in candidates:
        settles, refused = judged([candidate])
        checked = candidate.model_copy(update={"settles": settles, "refused_changed": refused})
        if refused:
            not_proposed.append(f"{candidate.rule.name}: it would change {refused} refused calls")
        elif settles:
            offered.append(checked)
    settled, refused = judged(offered) if offered else (0, 0)
    if refused:  # together they reach what none reaches alone: offer none
        not_proposed.append(f"the proposals together would change {refused} refused calls")
        offered, settled = [], 0
    return NeedlessReport(
        counts=question_counts(approvals),
        proposals=offered,
        not_proposed=not_proposed,
        settled=settled,
    )


def _time_of(call: CallToCheck) -> float:
    return call.at.timestamp() if call.at is not None else 0.0
