"""An agent whose definition does not validate, opened anyway so that it can be fixed.

The parts that fail are set aside, as read: a supervisors list with a bad entry, a setting or a
metadata field with a bad value, a rule or reference (whose file a save never touches). What is
left validates and can be edited; the editor shows each part set aside as input still to fix,
and a save waits until it is fixed, so nothing read from the files is dropped by a save. Other
failures (a tool server, a provider) are not set aside: such an agent still does not open in the
editor.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from foundry.agent.models import Agent
from foundry.agent.problems import field_path

LEAF_SECTIONS = ("settings", "metadata")
ITEM_SECTIONS = ("rules", "references")  # a broken one is its own file, set aside on reading
MAX_ROUNDS = 20


@dataclass
class Salvaged:
    """The agent without the parts set aside (None when it could not be had), and those parts
    by field path (`supervisors`, `settings.temperature`) with the values that were read."""

    agent: Agent | None
    set_aside: dict[str, Any] = field(default_factory=dict)


def salvage(data: dict[str, Any]) -> Salvaged:
    """Validate `data` (an agent as read, tsagent's field names), setting aside what fails."""
    remaining = copy.deepcopy(data)
    set_aside: dict[str, Any] = {}
    for _ in range(MAX_ROUNDS):
        try:
            return Salvaged(Agent.model_validate(remaining), set_aside)
        except ValidationError as error:
            if not _set_aside(error, remaining, set_aside, data):
                return Salvaged(None, set_aside)
    return Salvaged(None, set_aside)


def _set_aside(
    error: ValidationError,
    remaining: dict[str, Any],
    set_aside: dict[str, Any],
    original: dict[str, Any],
) -> bool:
    """Take out of `remaining` each part an error is about; False when one cannot be."""
    broken_items: dict[str, set[int]] = {}
    for problem in error.errors():
        location = problem["loc"]
        head = location[0] if location else None
        if head in ITEM_SECTIONS and len(location) >= 2 and isinstance(location[1], int):
            broken_items.setdefault(str(head), set()).add(location[1])
        elif head == "supervisors" and "supervisors" in remaining:
            set_aside["supervisors"] = original.get("supervisors")
            remaining["supervisors"] = []
        elif head in LEAF_SECTIONS and len(location) >= 2 and _drop_leaf(remaining, location):
            key = field_path(location[:2])
            set_aside[key] = original.get(str(head), {}).get(location[1])
        elif head is not None and field_path(location[:2]) in set_aside:
            continue
        else:
            return False
    for section, indexes in broken_items.items():
        items = remaining.get(section, [])
        remaining[section] = [item for i, item in enumerate(items) if i not in indexes]
    return True


def _drop_leaf(remaining: dict[str, Any], location: tuple[Any, ...]) -> bool:
    section = remaining.get(str(location[0]))
    if not isinstance(section, dict) or location[1] not in section:
        return False
    del section[location[1]]
    return True
