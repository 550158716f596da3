"""The supervision timeline of one session: every supervisor's and approver's decision, in order."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor

from foundry.session.events import (
    ApprovalRequested,
    ApprovalResolved,
    Event,
    SupervisorDecided,
    SupervisorDeferred,
    ToolCallDecided,
    ToolConcernRaised,
)
from foundry.supervision.concerns import heading

MESSAGE_ROLE = Qt.ItemDataRole.UserRole + 1
ACTION_ROLE = Qt.ItemDataRole.UserRole + 2
COLOURS = {
    "allow": "#2e7d32",
    "approve": "#2e7d32",
    "modify": "#1565c0",
    "block": "#c62828",
    "deny": "#c62828",
    "human_review": "#ef6c00",
    "waiting": "#ef6c00",
    "deferred": "#6d4c41",
    "concern": "#ad1457",
}
Index = QModelIndex | QPersistentModelIndex


@dataclass(frozen=True)
class Decision:
    title: str
    reasoning: str
    action: str
    message_index: int | None = None


def describe(event: Event) -> Decision | None:
    """A timeline row for the events that are decisions; None for all others."""
    body = event.body
    if isinstance(body, SupervisorDecided):
        confidence = f" · confidence {body.confidence:.2f}" if body.confidence is not None else ""
        fallback = " · FALLBACK" if body.fallback else ""
        took = f" · {body.duration_s:.1f} s" if body.duration_s is not None else ""
        later = " · after the reply" if body.background else ""
        changes = f"\nchanges: {'; '.join(body.changes)}" if body.changes else ""
        notes = f"{confidence}{fallback}{took}{later}"
        return Decision(
            title=f"{body.direction} · {body.supervisor} · {body.action}{notes}",
            reasoning="; ".join(body.reasons) + changes,
            action=body.action,
            message_index=body.message_index,
        )
    if isinstance(body, SupervisorDeferred):
        title = f"{body.direction} · {body.supervisor} · deferred to after the reply"
        return Decision(title, body.reason, "deferred", body.message_index)
    if isinstance(body, ToolCallDecided):
        action = "allow" if body.allowed else "deny"
        return Decision(f"tool {body.call.name} · {action} by {body.by}", body.reason, action)
    if isinstance(body, ToolConcernRaised):
        return Decision(f"tool {body.tool} · ⚠ {heading(body.concern)}", body.reason, "concern")
    if isinstance(body, ApprovalRequested):
        held = " · ⚠ held: " + ", ".join(
            heading(str(concern.get("kind", ""))).lower() for concern in body.concerns
        )
        return Decision(
            f"tool {body.tool} · waiting for a human ({body.level}){held if body.concerns else ''}",
            body.reason,
            "waiting",
        )
    if isinstance(body, ApprovalResolved):
        action = "allow" if body.status == "approved" else "deny"
        return Decision(
            f"approval {body.status} by {body.resolved_by} after {body.waited_s:.1f} s",
            body.reasoning,
            action,
        )
    return None


class TimelineModel(QAbstractListModel):
    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.rows: list[Decision] = []

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 (Qt's signature)
        return 0 if parent.isValid() else len(self.rows)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row = self.rows[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return f"{row.title}\n{row.reasoning}" if row.reasoning else row.title
        if role == Qt.ItemDataRole.ForegroundRole:
            return QColor(COLOURS.get(row.action, "#424242"))
        if role == Qt.ItemDataRole.ToolTipRole:
            return row.reasoning or None
        if role == MESSAGE_ROLE:
            return row.message_index
        if role == ACTION_ROLE:
            return row.action
        return None

    def replay(self, events: list[Event]) -> None:
        self.beginResetModel()
        self.rows = [decision for event in events if (decision := describe(event)) is not None]
        self.endResetModel()

    def apply(self, event: Event) -> None:
        decision = describe(event)
        if decision is None:
            return
        self.beginInsertRows(QModelIndex(), len(self.rows), len(self.rows))
        self.rows.append(decision)
        self.endInsertRows()
