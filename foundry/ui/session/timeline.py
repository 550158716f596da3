"""The supervision timeline of one session: every supervisor's and approver's decision, in order.

Each row has a verdict (allowed, changed, denied, asked, failed, deferred, concern, statistics)
drawn with its own colour, symbol and word. Repeated identical notices are folded into one row
that counts them (x12) and moves to where the latest one happened; a statistics supervisor's
entries are one row per turn.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, replace
from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor

from foundry.session.events import (
    AgentSave,
    ApprovalRequested,
    ApprovalResolved,
    ErrorOccurred,
    Event,
    MessageAdded,
    SupervisorDecided,
    SupervisorDeferred,
    SupervisorOff,
    ToolCallDecided,
    ToolCallFinished,
    ToolConcernRaised,
    ToolServerChanged,
)
from foundry.session.readable import readable
from foundry.supervision.concerns import heading

MESSAGE_ROLE = Qt.ItemDataRole.UserRole + 1
ACTION_ROLE = Qt.ItemDataRole.UserRole + 2
VERDICT_ROLE = Qt.ItemDataRole.UserRole + 3
SUPERVISOR_ROLE = Qt.ItemDataRole.UserRole + 4
COUNT_ROLE = Qt.ItemDataRole.UserRole + 5
TITLE_ROLE = Qt.ItemDataRole.UserRole + 6
REASONING_ROLE = Qt.ItemDataRole.UserRole + 7
FILES = "Agent's files"  # the timeline's filter for what was saved to them
TIMES = "\u00d7"  # the sign of a count of repeats
Index = QModelIndex | QPersistentModelIndex


@dataclass(frozen=True)
class Verdict:
    """How a kind of outcome is drawn: a word and a symbol beside the colour, never colour alone."""

    word: str
    symbol: str
    colour: str


VERDICTS = {
    "allowed": Verdict("allowed", "✓", "#2e7d32"),
    "changed": Verdict("changed", "✎", "#1565c0"),
    "denied": Verdict("denied", "✕", "#c62828"),
    "asked": Verdict("asked", "?", "#b45309"),
    "failed": Verdict("failed", "!", "#7b1fa2"),  # failures, fallbacks, timeouts, errors
    "deferred": Verdict("deferred", "»", "#5d4037"),
    "off": Verdict("off", "○", "#616161"),  # a supervisor left off for the session
    "concern": Verdict("concern", "⚠", "#ad1457"),
    "statistics": Verdict("statistics", "Σ", "#546e7a"),
}
COLOURS = {verdict: shown.colour for verdict, shown in VERDICTS.items()}
ACTION_VERDICTS = {
    "allow": "allowed",
    "modify": "changed",
    "block": "denied",
    "human_review": "asked",
}
ACTION_WORDS = {"human_review": "asks a person"}
TOOL_DECIDERS = {  # who decided a tool call, by the first part of its `by`
    "policy": "Policy (L0)",
    "grant": "Grant",
    "agent": "Supervisor (L1)",
    "supervisor": "Supervisor (L1)",
    "human": "Human (L2)",
    "timeout": "Approval timeout",
}


@dataclass(frozen=True)
class Decision:
    title: str
    reasoning: str
    action: str  # the event's own word: allow, deny, modify, block, human_review, waiting, ...
    message_index: int | None = None
    verdict: str = "allowed"
    supervisor: str = ""  # who decided, for the filter
    count: int = 1  # how many identical notices this row stands for
    fold_key: tuple[object, ...] | None = None  # rows with the same key fold into one
    detail: str = ""  # what the title leaves out (a certain confidence, an instant review)


def describe(event: Event) -> Decision | None:
    """A timeline row for the events that are decisions or failures; None for all others."""
    body = event.body
    if isinstance(body, SupervisorDecided):
        return _supervisor_decided(body)
    if isinstance(body, SupervisorDeferred):
        title = f"{body.direction} · {body.supervisor} · deferred to after the reply"
        return Decision(
            title, readable(body.reason), "deferred", body.message_index, "deferred",
            body.supervisor, fold_key=("deferred", body.supervisor_id, body.direction, body.reason),
        )  # fmt: skip
    if isinstance(body, SupervisorOff):
        return Decision(
            f"{body.supervisor} · off for this chat",
            readable(body.reason),
            "off",
            None,
            "off",
            body.supervisor,
        )
    if isinstance(body, ToolCallDecided):
        action = "allow" if body.allowed else "deny"
        return Decision(
            f"tool {body.call.name} · {action} by {body.by}", readable(body.reason), action,
            verdict="allowed" if body.allowed else "denied", supervisor=_decider(body.by),
        )  # fmt: skip
    if isinstance(body, ToolConcernRaised):
        return Decision(
            f"tool {body.tool} · ⚠ {heading(body.concern)}", readable(body.reason), "concern",
            verdict="concern", supervisor="Tool checks",
            fold_key=("concern", body.tool, body.concern, body.reason),
        )  # fmt: skip
    if isinstance(body, ApprovalRequested | ApprovalResolved):
        return _approval(body)
    if isinstance(body, AgentSave):  # the agent changed its files, or a supervisor this chat's
        who = FILES if body.in_files else body.by.removeprefix("supervisor:")
        return Decision(readable(body.sentence()), "", "saved", verdict="changed", supervisor=who)
    return _failure(body)


def _supervisor_decided(body: SupervisorDecided) -> Decision:
    # a certain verdict (a deterministic check's 1.00) and an instant review say nothing
    uncertain = body.confidence is not None and body.confidence < 1.0
    confidence = f" · confidence {body.confidence:.2f}" if uncertain else ""
    fallback = " · FALLBACK" if body.fallback else ""
    slow = body.duration_s is not None and body.duration_s >= 0.05
    took = f" · {body.duration_s:.1f} s" if slow else ""
    later = " · after the reply" if body.background else ""
    changes = f"\nchanges: {'; '.join(body.changes)}" if body.changes else ""
    reasoning = readable("; ".join(body.reasons) + changes)
    key = None
    if body.fallback:  # the same failure on every message is one row
        key = ("fallback", body.supervisor_id, body.direction, body.action, body.reasons)
    return Decision(
        title=f"{body.direction} · {body.supervisor} · {ACTION_WORDS.get(body.action, body.action)}"
        f"{confidence}{fallback}{took}{later}",
        reasoning=reasoning,
        action=body.action,
        message_index=body.message_index,
        verdict="failed" if body.fallback else ACTION_VERDICTS[body.action],
        supervisor=body.supervisor,
        fold_key=key,
        detail=_measures(body),
    )


def _measures(body: SupervisorDecided) -> str:
    parts = []
    if body.confidence is not None:
        parts.append(f"confidence {body.confidence:.2f}")
    if body.duration_s is not None:
        parts.append(f"took {body.duration_s:.2f} s")
    return ", ".join(parts)


def _approval(body: ApprovalRequested | ApprovalResolved) -> Decision:
    if isinstance(body, ApprovalRequested):
        held = " · ⚠ held: " + ", ".join(
            heading(str(concern.get("kind", ""))).lower() for concern in body.concerns
        )
        return Decision(
            f"tool {body.tool} · waiting for a human ({body.level}){held if body.concerns else ''}",
            readable(body.reason), "waiting", verdict="asked", supervisor="Human (L2)",
        )  # fmt: skip
    action = "allow" if body.status == "approved" else "deny"
    verdict = {"approved": "allowed", "timed_out": "failed"}.get(body.status, "denied")
    status = body.status.replace("_", " ")
    return Decision(
        f"approval {status} by {body.resolved_by} after {body.waited_s:.1f} s",
        readable(body.reasoning), action, verdict=verdict, supervisor=_decider(body.resolved_by),
    )  # fmt: skip


def _failure(body: object) -> Decision | None:
    """A model error, a tool that failed or a tool server that did not start."""
    if isinstance(body, ErrorOccurred) and body.where == "tools":
        return None  # the conversation's notice of a failed server: its tool_server row says it
    if isinstance(body, ErrorOccurred):
        where = f" · {body.where}" if body.where else ""
        return Decision(
            f"error{where}", readable(body.message), "error", verdict="failed",
            supervisor="Model", fold_key=("error", body.where, body.message),
        )  # fmt: skip
    if isinstance(body, ToolCallFinished) and body.is_error:
        return Decision(
            f"tool {body.name} · failed after {body.duration_s:.1f} s", readable(body.text),
            "error", verdict="failed", supervisor="Tools",
        )  # fmt: skip
    if isinstance(body, ToolServerChanged) and body.error:
        held = body.error.startswith("held:")  # not started until you trust its command
        state = "held until you trust it" if held else body.state
        return Decision(
            f"tool server {body.name} · {state}", readable(body.error), "error",
            verdict="asked" if held else "failed", supervisor="Tools",
            fold_key=("server", body.name, body.state, body.error),
        )  # fmt: skip
    return None


def _decider(by: str) -> str:
    return TOOL_DECIDERS.get(by.split(":", 1)[0], by)


class TimelineModel(QAbstractListModel):
    """The rows of one session's timeline; `tally_supervisors` names the supervisors whose
    decisions are running counts (a statistics supervisor), shown as one row per turn."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.rows: list[Decision] = []
        self.tally_supervisors: frozenset[str] = frozenset()
        self._turn_of_message: list[int] = []  # session message index -> its turn (from 1)
        self._fold_keys: set[tuple[object, ...]] = set()  # the keys of the rows shown
        self._bulk = False

    def set_tally_supervisors(self, supervisor_ids: Collection[str]) -> None:
        self.tally_supervisors = frozenset(supervisor_ids)

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 (Qt's signature)
        return 0 if parent.isValid() else len(self.rows)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row = self.rows[index.row()]
        values: dict[int, Any] = {
            Qt.ItemDataRole.DisplayRole: _display(row),
            Qt.ItemDataRole.ForegroundRole: QColor(COLOURS[row.verdict]),
            Qt.ItemDataRole.ToolTipRole: _tooltip(row),
            MESSAGE_ROLE: row.message_index,
            ACTION_ROLE: row.action,
            VERDICT_ROLE: row.verdict,
            SUPERVISOR_ROLE: row.supervisor,
            COUNT_ROLE: row.count,
            TITLE_ROLE: row.title,
            REASONING_ROLE: row.reasoning,
        }
        return values.get(role)

    def replay(self, events: list[Event]) -> None:
        self.beginResetModel()
        self.rows = []
        self._turn_of_message = []
        self._fold_keys = set()
        self._bulk = True
        try:
            for event in events:
                self.apply(event)
        finally:
            self._bulk = False
            self.endResetModel()

    def apply(self, event: Event) -> None:
        body = event.body
        if isinstance(body, MessageAdded):
            self._note_message(body)
            return
        decision = describe(event)
        if decision is None:
            return
        if isinstance(body, SupervisorDecided) and body.supervisor_id in self.tally_supervisors:
            decision = self._tally(body, decision)
        self._add(decision)

    def _note_message(self, body: MessageAdded) -> None:
        turn = self._turn_of_message[-1] if self._turn_of_message else 0
        self._turn_of_message.append(turn + 1 if body.message.role == "user" else turn)

    def _tally(self, body: SupervisorDecided, decision: Decision) -> Decision:
        """One line for the turn: the supervisor's latest count of it."""
        turn = self._turn(body.message_index, body.direction)
        summary = decision.reasoning.replace("\n", "; ")
        return replace(
            decision,
            title=f"{body.supervisor} · turn {turn}: {summary}" if summary else body.supervisor,
            reasoning="",
            verdict="failed" if body.fallback else "statistics",
            fold_key=("tally", body.supervisor_id, turn),
        )

    def _turn(self, message_index: int, direction: str) -> int:
        """The turn of a message; a request reviewed before it is stored opens the next turn."""
        if 0 <= message_index < len(self._turn_of_message):
            return self._turn_of_message[message_index]
        last = self._turn_of_message[-1] if self._turn_of_message else 0
        return last + 1 if direction == "request" else last

    def _add(self, decision: Decision) -> None:
        folded = self._folded_row(decision)
        if folded is not None:
            earlier = self.rows[folded]
            decision = replace(decision, count=earlier.count + 1)
            if decision.fold_key is not None and decision.fold_key[0] == "tally":
                decision = replace(decision, count=1)  # the latest count stands for the turn
            self._remove(folded)
        self._append(decision)

    def _folded_row(self, decision: Decision) -> int | None:
        """The row `decision` folds into. A folded row moves to the end, so the one to fold
        into is found near the end; a key never seen is not looked for."""
        key = decision.fold_key
        if key is None or key not in self._fold_keys:
            if key is not None:
                self._fold_keys.add(key)
            return None
        for row in range(len(self.rows) - 1, -1, -1):
            if self.rows[row].fold_key == decision.fold_key:
                return row
        return None

    def _remove(self, row: int) -> None:
        if self._bulk:
            del self.rows[row]
            return
        self.beginRemoveRows(QModelIndex(), row, row)
        del self.rows[row]
        self.endRemoveRows()

    def _append(self, decision: Decision) -> None:
        if self._bulk:
            self.rows.append(decision)
            return
        self.beginInsertRows(QModelIndex(), len(self.rows), len(self.rows))
        self.rows.append(decision)
        self.endInsertRows()


def _display(row: Decision) -> str:
    count = f"  {TIMES}{row.count}" if row.count > 1 else ""
    return f"{row.title}{count}\n{row.reasoning}" if row.reasoning else f"{row.title}{count}"


def _tooltip(row: Decision) -> str:
    shown = VERDICTS[row.verdict]
    repeated = f"\nHappened {row.count} times; this row is the latest." if row.count > 1 else ""
    detail = f" ({row.detail})" if row.detail else ""
    return f"{shown.symbol} {shown.word}: {row.title}{detail}\n{row.reasoning}{repeated}".strip()
