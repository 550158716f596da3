"""What an edit changed, in words ("edit rule 'be-brief'"), and the editor page it belongs to."""

from __future__ import annotations

from typing import Any

from foundry.agent.models import Agent

Location = tuple[str | int, ...]

PAGES = {
    "metadata": "Agent",
    "systemPrompt": "System prompt",
    "settings": "Settings",
    "providers": "Providers",
    "rules": "Rules",
    "references": "References",
    "mcpServers": "Tools",
    "supervisors": "Supervisors",
}
POLICY_PAGE = "Policy"
NOUNS = {"rules": "rule", "references": "reference", "mcpServers": "tool server"}
SETTING_WORDS = {"model": "the model", "toolPermission": "tool approval"}


def page_of(location: Location, agent: Agent | None = None) -> str:
    """The editor page that shows the field at `location`."""
    if not location:
        return "Agent"
    if location[0] == "settings" and location[1:2] == ("model",):
        return "Settings"
    if _policy_location(location, agent):
        return POLICY_PAGE
    return PAGES.get(str(location[0]), "Agent")


def edit_label(location: Location, before: Agent, after: Agent) -> str:
    """Words for the edit of `location` that turned `before` into `after`."""
    head = str(location[0]) if location else ""
    if head == "metadata":
        return f"edit the agent's {_words(location[-1])}"
    if head == "systemPrompt":
        return "edit the system prompt"
    if head == "settings":
        key = str(location[-1])
        return f"edit {SETTING_WORDS.get(key, 'setting ' + _words(key))}"
    if head == "providers":
        return f"edit provider '{location[1]}'" if len(location) > 1 else "change the providers"
    if head in ("rules", "references", "mcpServers"):
        return _collection_label(head, location, before, after)
    if head == "supervisors":
        return _supervisors_label(location, before, after)
    return f"edit {head}"


def _collection_label(head: str, location: Location, before: Agent, after: Agent) -> str:
    noun = NOUNS[head]
    old, new = _names(getattr_camel(before, head)), _names(getattr_camel(after, head))
    if len(location) > 1:
        key = location[1]
        name = old[key] if isinstance(key, int) and key < len(old) else key
        return f"edit {noun} '{name}'"
    added = [name for name in new if name not in old]
    removed = [name for name in old if name not in new]
    if added and not removed:
        return f"add {noun} '{added[0]}'"
    if removed and not added:
        return f"delete {noun} '{removed[0]}'"
    return f"change the {noun}s"


def _supervisors_label(location: Location, before: Agent, after: Agent) -> str:
    if _policy_location(location, before) and location[3:] == ("rules",):
        return _rules_label(int(location[1]), before, after)
    if _policy_location(location, before) and len(location) > 5 and location[3] == "rules":
        rules = before.supervisors[int(location[1])].config.rules  # type: ignore[union-attr]
        index = int(location[4])
        if index < len(rules):
            return f"edit rule '{rules[index].name}'"
    if len(location) > 1 and isinstance(location[1], int):
        entries = before.supervisors if location[1] < len(before.supervisors) else []
        entry = entries[location[1]] if entries else None
        what = f"{entry.type} supervisor '{entry.id}'" if entry else "a supervisor"
        if _policy_location(location, before):
            return f"edit the policy's {_words(location[-1])}"
        return f"edit {what}"
    old = [entry.id for entry in before.supervisors]
    new = [entry.id for entry in after.supervisors]
    added = [name for name in new if name not in old]
    removed = [name for name in old if name not in new]
    if added and not removed:
        return f"add supervisor '{added[0]}'"
    if removed and not added:
        return f"remove supervisor '{removed[0]}'"
    if sorted(old) == sorted(new) and old != new:
        return "reorder the supervisors"
    return "edit the supervisors"


def _rules_label(index: int, before: Agent, after: Agent) -> str:
    """A change of the policy's list of rules: one added, one deleted, or their order."""
    old = [rule.name for rule in before.supervisors[index].config.rules]  # type: ignore[union-attr]
    new = [rule.name for rule in after.supervisors[index].config.rules]  # type: ignore[union-attr]
    added = [name for name in new if name not in old]
    removed = [name for name in old if name not in new]
    if added and not removed:
        return f"add rule '{added[0]}'"
    if removed and not added:
        return f"delete rule '{removed[0]}'"
    if sorted(old) == sorted(new) and old != new:
        return "reorder the rules"
    return "edit the policy's rules"


def _policy_location(location: Location, agent: Agent | None) -> bool:
    if agent is None or len(location) < 3 or location[0] != "supervisors":
        return False
    index = location[1]
    if not isinstance(index, int) or index >= len(agent.supervisors):
        return False
    return agent.supervisors[index].type == "policy" and location[2] == "config"


def getattr_camel(agent: Agent, key: str) -> Any:
    return {"rules": agent.rules, "references": agent.references}.get(key, agent.mcp_servers)


def _names(items: Any) -> list[str]:
    if isinstance(items, dict):
        return list(items)
    return [item.name for item in items]


def _words(key: str | int) -> str:
    """`maxChatTurns` -> `max chat turns`."""
    text = str(key)
    return "".join(f" {c.lower()}" if c.isupper() else c for c in text).strip()
