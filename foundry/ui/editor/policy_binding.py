"""PolicyBinding: the Policy page edits the working agent's policy supervisor, one undo step per
edit; its try panel (TryBinding) decides calls under the policy as edited.

The policy edited is the agent's first policy supervisor. Every edit goes through the editor,
so a value that is not valid stays in its cell, flagged, and the save waits for a fix.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pydantic.alias_generators import to_camel
from PySide6.QtCore import QItemSelection, QObject

from foundry.agent.default_policy import default_policy
from foundry.agent.models import (
    Agent,
    PolicyConfig,
    PolicyMatch,
    PolicyRule,
    RateLimit,
)
from foundry.agent.names import free_name
from foundry.agent.templates import default_policy_entry
from foundry.supervision.paths import server_folders
from foundry.supervision.rule_from_call import NoRuleProposed, rule_from_call
from foundry.ui.editor.policy_models import GROUPS, value_from_text
from foundry.ui.editor.policy_section import PolicySection
from foundry.ui.editor.questions_binding import QuestionsBinding
from foundry.ui.editor.try_binding import TryBinding

if TYPE_CHECKING:
    from foundry.ui.editor.controller import EditorController

Location = tuple[str | int, ...]
RECORDED_IN_PICKER = 50
SHOWN_PARAMS = 80
OUTCOME_WORDS = {"allow": "ALLOWED", "deny": "DENIED", "human": "ASKS A PERSON"}


def policy_index(agent: Agent | None) -> int | None:
    """Where the agent's first policy supervisor is in its supervisors list, if it has one."""
    if agent is None:
        return None
    return next((i for i, e in enumerate(agent.supervisors) if e.type == "policy"), None)


class PolicyBinding(QObject):
    def __init__(self, section: PolicySection, editor: EditorController) -> None:
        super().__init__(section)
        self.section = section
        self.editor = editor
        self.rule: int | None = None
        section.rules_model.commit = self._commit_rule
        section.conditions_model.commit = self._commit_condition
        section.limits_model.commit = self._commit_limit
        self._connect_rules()
        self._connect_settings()
        self.trying = TryBinding(section.try_panel, editor)
        self.questions = QuestionsBinding(section, editor, self)

    def _connect_rules(self) -> None:
        section = self.section
        section.rules.selectionModel().selectionChanged.connect(self._rule_selected)
        section.new_rule.clicked.connect(self.add_rule)
        section.new_rule_shortcut.activated.connect(self.add_rule)
        section.delete_rule.clicked.connect(self.delete_rule)
        section.rule_up.clicked.connect(lambda: self.move_rule(-1))
        section.rule_down.clicked.connect(lambda: self.move_rule(1))
        section.up_shortcut.activated.connect(lambda: self.move_rule(-1))
        section.down_shortcut.activated.connect(lambda: self.move_rule(1))
        section.reset.clicked.connect(self.reset_to_default)
        section.add_policy.clicked.connect(self.add_policy)
        section.add_condition.clicked.connect(self.add_condition)
        section.remove_condition.clicked.connect(self.remove_condition)

    def _connect_settings(self) -> None:
        section = self.section
        section.loop_detection.toggled.connect(lambda on: self._set("loop_detection", on))
        section.approval_timeout.valueChanged.connect(
            lambda value: self._set("approval_timeout_seconds", value)
        )
        section.on_timeout.currentIndexChanged.connect(
            lambda _: self._set("on_timeout", section.on_timeout.currentData())
        )
        section.supervisor_path.textEdited.connect(
            lambda text: self._set("supervisor_agent_path", text.strip() or None)
        )
        section.threshold.valueChanged.connect(
            lambda value: self._set("confidence_threshold", value)
        )
        section.add_limit.clicked.connect(self.add_limit)
        section.remove_limit.clicked.connect(self.remove_limit)

    # -- showing --------------------------------------------------------------------------------

    @property
    def index(self) -> int | None:
        return policy_index(self.editor.working)

    @property
    def config(self) -> PolicyConfig | None:
        agent, index = self.editor.working, self.index
        if agent is None or index is None:
            return None
        config = agent.supervisors[index].config
        return config if isinstance(config, PolicyConfig) else None

    def show(self, agent: Agent) -> None:
        index = policy_index(agent)
        entry = agent.supervisors[index] if index is not None else None
        label = f"from the supervisor '{entry.name or entry.id}'" if entry else ""
        self.section.show_policy(entry is not None, label)
        self.trying.agent_changed()
        config = self.config
        if config is None:
            return
        pending = bool(self.editor.pending_keys())
        if self.rule is not None and self.rule >= len(config.rules):
            self.rule = None
        with self.editor.refresh_guard():
            self.section.rules_model.show_rules(config.rules, keep_pending=pending)
            self.section.overview.show_config(config)
            self._select_rule_row(self.rule)
            self._show_conditions(pending)
            self.section.limits_model.show_limits(config.rate_limits, keep_pending=pending)
            self._show_settings(config)

    def _show_settings(self, config: PolicyConfig) -> None:
        section = self.section
        section.loop_detection.setChecked(config.loop_detection)
        section.approval_timeout.setValue(config.approval_timeout_seconds)
        section.on_timeout.setCurrentIndex(section.on_timeout.findData(config.on_timeout))
        path = config.supervisor_agent_path or ""
        if section.supervisor_path.text().strip() != path:
            section.supervisor_path.setText(path)
        section.threshold.setValue(config.confidence_threshold)

    def _show_conditions(self, keep_pending: bool = False) -> None:
        config = self.config
        rule = config.rules[self.rule] if config and self.rule is not None else None
        self.section.conditions_model.show_conditions(rule, keep_pending)
        self.section.add_condition.setEnabled(rule is not None)
        self.section.remove_condition.setEnabled(rule is not None)

    def _select_rule_row(self, row: int | None) -> None:
        rules = self.section.rules
        if row is None:
            rules.clearSelection()
            return
        rules.selectRow(row)
        rules.scrollTo(self.section.rules_model.index(row, 1))

    def _rule_selected(self, _selected: QItemSelection, _deselected: QItemSelection) -> None:
        if self.editor.refreshing:
            return
        rows = self.section.rules.selectionModel().selectedRows()
        self.rule = rows[0].row() if rows else None
        self._show_conditions()

    def _refresh(self) -> None:
        """After an edit made here: the page follows the agent, keeping input not yet valid."""
        if self.editor.working is not None:
            self.show(self.editor.working)

    # -- editing --------------------------------------------------------------------------------

    def _edit(self, location: Location, change: Callable[[Agent], None]) -> str | None:
        """Apply `change` as one undoable step of the policy; why not, if it is not valid."""
        index = self.index
        if index is None:
            return "the agent has no policy"
        full = ("supervisors", index, "config", *location)
        if self.editor.edit(full, change, mergeable=False):
            self._refresh()
            return None
        return self.editor.problem_at(full) or "not valid"

    def _policy(self, agent: Agent) -> PolicyConfig:
        config = agent.supervisors[self.index or 0].config
        assert isinstance(config, PolicyConfig)
        return config

    def _set(self, name: str, value: Any) -> None:
        if not self.editor.refreshing:
            self._edit((to_camel(name),), lambda agent: setattr(self._policy(agent), name, value))

    def _commit_rule(self, row: int, field: str, value: Any) -> str | None:
        if self.editor.refreshing:
            return None
        text = str(value).strip()
        return self._edit(
            ("rules", row, field),
            lambda agent: setattr(self._policy(agent).rules[row], field, text),
        )

    def _commit_condition(self, row: int, field: str, value: Any) -> str | None:
        rule = self.rule
        if rule is None or self.editor.refreshing:
            return None
        model = self.section.conditions_model
        rows = [dict(r) for r in model.rows]
        for (pending_row, column), (text, _) in model.pending.items():
            name = model.columns[column][1]
            rows[pending_row][name] = value_from_text(text) if name == "value" else text
        rows[row][field] = value
        return self._set_conditions(rule, rows)

    def _set_conditions(self, rule: int, rows: list[dict[str, Any]]) -> str | None:
        def change(agent: Agent) -> None:
            groups: dict[str, list[dict[str, Any]]] = {group: [] for group in GROUPS}
            for row in rows:
                condition = {key: row.get(key) for key in ("param", "op", "value")}
                groups.setdefault(str(row.get("group")), []).append(condition)
            when = PolicyMatch.model_validate(groups) if rows else None
            self._policy(agent).rules[rule].when = when

        return self._edit(("rules", rule, "when"), change)

    def _commit_limit(self, row: int, field: str, value: Any) -> str | None:
        if self.editor.refreshing:
            return None
        return self._edit(
            ("rateLimits", row, to_camel(field)),
            lambda agent: setattr(self._policy(agent).rate_limits[row], field, value),
        )

    def add_rule(self) -> None:
        config = self.config
        if config is None:
            return
        taken = {rule.name for rule in config.rules}
        rule = PolicyRule(name=free_name("new-rule", taken), tool="*", action="human")
        self.insert_rule(rule, self._new_rule_position(config))
        rules = self.section.rules
        rules.setFocus()
        rules.edit(self.section.rules_model.index(self.rule or 0, 1))

    def insert_rule(self, rule: PolicyRule, position: int) -> None:
        def change(agent: Agent) -> None:
            rules = list(self._policy(agent).rules)
            rules.insert(position, rule)
            self._policy(agent).rules = rules

        self.rule = position
        self._edit(("rules",), change)

    def _new_rule_position(self, config: PolicyConfig) -> int:
        """Above the selected rule; else above the catch-all that ends the list (a rule after it
        would never decide anything); else at the end."""
        if self.rule is not None:
            return self.rule
        last = config.rules[-1] if config.rules else None
        catch_all = last is not None and last.tool == "*" and last.when is None
        return len(config.rules) - 1 if catch_all else len(config.rules)

    async def propose_rule(
        self, agent: str, tool: str, params: dict[str, Any], decided_by: str | None
    ) -> None:
        """A rule made from an approval's call, placed above the rule that sent the call to a
        person, and what it would change among the recorded calls: for review, not saved. Its
        path is placed as the gate places it (off the GUI thread: it reads the filesystem)."""
        if self.config is None:
            self.add_policy()
        snapshot, document = self.editor.snapshot(), self.editor.document
        if self.config is None or snapshot is None or document is None:
            return
        self.editor.show_page("Policy")
        taken, workspace = {r.name for r in self.config.rules}, document.base_dir

        def made() -> PolicyRule:  # the servers' folders and the path read the filesystem
            folders = server_folders(snapshot.mcp_servers, workspace)
            return rule_from_call(agent, tool, params, taken, workspace, folders)

        try:
            rule = await asyncio.to_thread(made)
        except NoRuleProposed as why:
            self.section.try_panel.show_verdict(f"No rule was made from the approval: {why}.")
            return
        self.offer_rule(
            rule,
            decided_by,
            "Rule '{name}' was made from the approval and placed above the rule that asked "
            "you. Review it, then save (Ctrl+S); Undo (Ctrl+Z) takes it back.",
        )

    def offer_rule(self, rule: PolicyRule, before: str | None, verdict: str) -> str | None:
        """Add `rule` to the working policy, unsaved and undoable, above the rule named
        `before` (else where a new rule goes), and replay the recorded calls with it; the
        name it got, or None when the agent has no policy. `verdict` may name it ({name})."""
        if self.config is None:
            self.add_policy()
        config = self.config
        if config is None:
            return None
        self.editor.show_page("Policy")
        names = [r.name for r in config.rules]
        rule = rule.model_copy(update={"name": free_name(rule.name, set(names))})
        self.rule = None
        position = names.index(before) if before in names else self._new_rule_position(config)
        self.insert_rule(rule, position)
        self.section.try_panel.show_verdict(verdict.format(name=rule.name))
        self.test_recorded()
        return rule.name

    def delete_rule(self) -> None:
        config, row = self.config, self.rule
        if config is None or row is None:
            return

        def change(agent: Agent) -> None:
            policy = self._policy(agent)
            policy.rules = [rule for i, rule in enumerate(policy.rules) if i != row]

        self.rule = min(row, len(config.rules) - 2) if len(config.rules) > 1 else None
        self._edit(("rules",), change)

    def move_rule(self, step: int) -> None:
        config, row = self.config, self.rule
        if config is None or row is None or not 0 <= row + step < len(config.rules):
            return

        def change(agent: Agent) -> None:
            rules = list(self._policy(agent).rules)
            rules[row], rules[row + step] = rules[row + step], rules[row]
            self._policy(agent).rules = rules

        self.rule = row + step
        self._edit(("rules",), change)

    def add_condition(self) -> None:
        if self.rule is None:
            return
        rows = [dict(row) for row in self.section.conditions_model.rows]
        rows.append({"group": "all", "param": "path", "op": "within", "value": "."})
        self._set_conditions(self.rule, rows)

    def remove_condition(self) -> None:
        selected = self.section.conditions.selectionModel().selectedRows()
        if self.rule is None or not selected:
            return
        gone = selected[0].row()
        rows = [dict(r) for i, r in enumerate(self.section.conditions_model.rows) if i != gone]
        self._set_conditions(self.rule, rows)

    def add_limit(self) -> None:
        def change(agent: Agent) -> None:
            policy = self._policy(agent)
            limit = RateLimit(tool="*", max_calls=30, per_seconds=60)
            policy.rate_limits = [*policy.rate_limits, limit]

        self._edit(("rateLimits",), change)

    def remove_limit(self) -> None:
        selected = self.section.limits.selectionModel().selectedRows()
        if not selected:
            return
        gone = selected[0].row()

        def change(agent: Agent) -> None:
            policy = self._policy(agent)
            policy.rate_limits = [limit for i, limit in enumerate(policy.rate_limits) if i != gone]

        self._edit(("rateLimits",), change)

    def reset_to_default(self) -> None:
        index = self.index
        if index is None:
            return
        self.rule = None
        self.editor.edit(
            ("supervisors", index, "config"),
            lambda agent: setattr(agent.supervisors[index], "config", default_policy()),
            mergeable=False,
        )
        self._refresh()
        self.section.try_panel.show_verdict("The policy is Foundry's careful default again.")

    def add_policy(self) -> None:
        agent = self.editor.working
        if agent is None or self.index is not None:
            return
        entries = [*agent.supervisors, default_policy_entry()]
        self.editor.edit(
            ("supervisors",), lambda agent: setattr(agent, "supervisors", entries), False
        )
        self.editor.refresh_all()

    # -- trying calls ---------------------------------------------------------------------------

    def config_of(self, agent: Agent | None) -> PolicyConfig | None:
        """The policy `agent` is decided by here: its first policy supervisor's."""
        index = policy_index(agent)
        if agent is None or index is None:
            return None
        config = agent.supervisors[index].config
        return config if isinstance(config, PolicyConfig) else None

    def show_matched(self, rule: str | None) -> None:
        """Select the rule that decided a try, so that its conditions show beneath."""
        row = self.section.rules_model.mark_matched(rule)
        if row is not None:
            self._select_rule_row(row)

    def test_recorded(self) -> None:
        self.trying.test_recorded()

    async def load_recorded(self) -> None:
        await self.trying.load_recorded()

    def close(self) -> None:
        self.trying.close()
        self.section.overview.close_tasks()
