"""Table models of the Policy page: its rules, the selected rule's conditions, the rate limits.

A model shows rows of plain values and hands each edit to its `commit` callback, which applies it
to the working agent and answers with the reason it is not valid, if it is not. A cell whose
input is not valid keeps that input, shown in red with the reason as its tip, until it is fixed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, get_args

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor

from foundry.agent.models import PolicyCondition, PolicyOperator, PolicyRule, RateLimit
from foundry.supervision.policy import describe_condition

Index = QModelIndex | QPersistentModelIndex
Commit = Callable[[int, str, Any], str | None]
INVALID = QBrush(QColor("#ffcdd2"))
MATCHED = QBrush(QColor("#fff59d"))
ACTIONS: tuple[str, ...] = get_args(PolicyRule.model_fields["action"].annotation)
OPERATORS: tuple[str, ...] = get_args(PolicyOperator)
GROUPS = ("all", "any")
SERVER_TIP = (
    "The servers the rule covers: any, or only servers of one kind (as Foundry identifies them "
    "from their command, or the agent declares), and only tools whose trusted server declares "
    "these annotations (edit them in the JSON view)"
)


class EditableTable(QAbstractTableModel):
    """Rows of values; `columns` are (heading, field, editable). Pending cells keep bad input."""

    columns: tuple[tuple[str, str, bool], ...] = ()

    def __init__(self, commit: Commit) -> None:
        super().__init__()
        self.commit = commit
        self.rows: list[dict[str, Any]] = []
        self.pending: dict[tuple[int, int], tuple[str, str]] = {}

    def set_rows(self, rows: Sequence[dict[str, Any]], keep_pending: bool = False) -> None:
        self.beginResetModel()
        self.rows = list(rows)
        if not keep_pending:
            self.pending = {}
        self.endResetModel()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.columns)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = 0) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return self.columns[section][0]
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        base = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        return base | Qt.ItemFlag.ItemIsEditable if self.columns[index.column()][2] else base

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        key = (index.row(), index.column())
        pending = self.pending.get(key)
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            return pending[0] if pending else self.text(index.row(), index.column())
        if role == Qt.ItemDataRole.BackgroundRole and pending:
            return INVALID
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"Not valid: {pending[1]}" if pending else self.tip(index.row(), index.column())
        return None

    def setData(self, index: Index, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:
        if role != Qt.ItemDataRole.EditRole or not index.isValid():
            return False
        key = (index.row(), index.column())
        field = self.columns[index.column()][1]
        problem = self.commit(index.row(), field, self.parse(field, str(value)))
        if problem is None:
            self.pending.pop(key, None)
        else:
            self.pending[key] = (str(value), problem)
        self.dataChanged.emit(index, index)
        return True

    def text(self, row: int, column: int) -> str:
        value = self.rows[row].get(self.columns[column][1])
        return "" if value is None else str(value)

    def tip(self, row: int, column: int) -> str | None:
        return None

    def parse(self, field: str, text: str) -> Any:
        return text


class RulesModel(EditableTable):
    """The rules in order (first match wins); `matched` marks the rule a tried call matched."""

    columns = (
        ("#", "order", False),
        ("Name", "name", True),
        ("Agent", "agent", True),
        ("Tool", "tool", True),
        ("When", "when", False),
        ("Action", "action", True),
        ("Servers", "server", False),
    )

    def __init__(self, commit: Commit) -> None:
        super().__init__(commit)
        self.matched: str | None = None

    def show_rules(self, rules: Sequence[PolicyRule], keep_pending: bool = False) -> None:
        rows = [
            {
                "order": number,
                "name": rule.name,
                "agent": rule.agent,
                "tool": rule.tool,
                "server": server_summary(rule),
                "when": conditions_summary(rule) or "(always)",
                "action": rule.action,
            }
            for number, rule in enumerate(rules, start=1)
        ]
        self.set_rows(rows, keep_pending)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if (
            role == Qt.ItemDataRole.BackgroundRole
            and (index.row(), index.column()) not in self.pending
            and self.matched is not None
            and self.rows[index.row()]["name"] == self.matched
        ):
            return MATCHED
        return super().data(index, role)

    def tip(self, row: int, column: int) -> str | None:
        field = self.columns[column][1]
        if field == "when":
            return self.rows[row]["when"] or "Always (no conditions)"
        if field == "server":
            return SERVER_TIP
        return None

    def mark_matched(self, rule: str | None) -> int | None:
        """Highlight the rule named `rule`; its row, if it is listed."""
        self.matched = rule
        last = self.index(self.rowCount() - 1, len(self.columns) - 1)
        self.dataChanged.emit(self.index(0, 0), last)
        names = [row["name"] for row in self.rows]
        return names.index(rule) if rule in names else None


class ConditionsModel(EditableTable):
    """The selected rule's conditions: those that must all hold, then those of which one must."""

    columns = (
        ("Group", "group", True),
        ("Parameter", "param", True),
        ("Operator", "op", True),
        ("Value", "value", True),
    )

    def show_conditions(self, rule: PolicyRule | None, keep_pending: bool = False) -> None:
        rows: list[dict[str, Any]] = []
        if rule is not None and rule.when is not None:
            for group in GROUPS:
                for condition in getattr(rule.when, group):
                    rows.append({"group": group, **condition.model_dump()})
        self.set_rows(rows, keep_pending)

    def text(self, row: int, column: int) -> str:
        field = self.columns[column][1]
        value = self.rows[row].get(field)
        if field == "value":
            return value if isinstance(value, str) else json.dumps(value)
        return str(value)

    def parse(self, field: str, text: str) -> Any:
        return value_from_text(text) if field == "value" else text.strip()


class RateLimitsModel(EditableTable):
    columns = (
        ("Tool", "tool", True),
        ("Calls", "max_calls", True),
        ("Per seconds", "per_seconds", True),
    )

    def show_limits(self, limits: Sequence[RateLimit], keep_pending: bool = False) -> None:
        self.set_rows([limit.model_dump() for limit in limits], keep_pending)


def value_from_text(text: str) -> Any:
    """A condition's value as typed: JSON when it reads as JSON (42, true, ["a", "b"], null),
    else the text itself (a path, a glob, a regular expression)."""
    stripped = text.strip()
    try:
        return json.loads(stripped)
    except json.JSONDecodeError:
        return text


def server_summary(rule: PolicyRule) -> str:
    """Which servers' tools the rule covers: its kind and the annotations it asks for."""
    parts = [f"{rule.kind} servers"] if rule.kind else []
    parts += [f"{hint}: {str(value).lower()}" for hint, value in (rule.hints or {}).items()]
    return ", ".join(parts) or "any"


def conditions_summary(rule: PolicyRule) -> str:
    """`path within . and (command matches … or cmd matches …)`; empty when always."""
    if rule.when is None:
        return ""
    parts = [describe_condition(condition) for condition in rule.when.all]
    if rule.when.any:
        either = " or ".join(describe_condition(condition) for condition in rule.when.any)
        parts.append(f"({either})" if len(rule.when.any) > 1 else either)
    return " and ".join(parts)


def condition_from_row(row: dict[str, Any]) -> PolicyCondition:
    return PolicyCondition(param=row["param"], op=row["op"], value=row.get("value"))
