"""Apply new data onto the data a file was read from, keeping its order, comments and spelling."""

from __future__ import annotations

import math
from typing import Any

from foundry.agent.syntax import scalar_value, shallow_copy


def overlay(original: Any, updated: Any) -> Any:
    """`updated`, expressed in the shape of `original` wherever the two mean the same thing.

    Keys keep their original order (new ones go last), YAML comments survive, and a value that
    is only spelled differently (the string "10" for the number 10) keeps its original spelling.
    `original` is not modified: a container with changes inside is copied, the others are
    returned as they are. A YAML anchor stays on its value and aliases stay aliases unless the
    value was changed differently at different places; each place then gets its own copy.
    """
    merger = _Overlay()
    result = merger.merge(original, updated)
    merger.settle_anchors()
    return result


class _Overlay:
    def __init__(self) -> None:
        # id(original container) -> (original, [(update, result), ...])
        self._results: dict[int, tuple[Any, list[tuple[Any, Any]]]] = {}

    def merge(self, original: Any, updated: Any) -> Any:
        if isinstance(original, dict) and isinstance(updated, dict):
            return self._once(original, updated)
        if isinstance(original, list) and isinstance(updated, list):
            return self._once(original, updated)
        return original if same_value(original, updated) else updated

    def _once(self, original: Any, updated: Any) -> Any:
        """The same result for the same container and the same update: shared stays shared."""
        _, seen = self._results.setdefault(id(original), (original, []))
        for earlier, result in seen:
            if earlier == updated:
                return result
        if isinstance(original, dict):
            result = self._merge_mapping(original, updated)
        else:
            result = self._merge_list(original, updated)
        seen.append((updated, result))
        return result

    def _merge_mapping(self, original: dict[Any, Any], updated: dict[Any, Any]) -> Any:
        values = {
            key: self.merge(original[key], value) if key in original else value
            for key, value in updated.items()
        }
        removed = [key for key in original if key not in updated]
        if not removed and all(key in original and values[key] is original[key] for key in values):
            return original
        result = shallow_copy(original)
        for key in removed:
            del result[key]
        for key, value in values.items():
            result[key] = value
        return result

    def _merge_list(self, original: list[Any], updated: list[Any]) -> Any:
        merged = self._matched_items(original, updated)
        if len(merged) == len(original) and all(
            a is b for a, b in zip(merged, original, strict=True)
        ):
            return original
        result = shallow_copy(original)
        result[:] = merged
        return result

    def _matched_items(self, original: list[Any], updated: list[Any]) -> list[Any]:
        """Match items by name (or id) when they have one, by position otherwise."""
        by_identity: dict[Any, Any] = {}
        for item in original:
            by_identity.setdefault(_identity(item), item)
        by_identity.pop(None, None)
        if by_identity and all(_identity(item) is not None for item in updated):
            return [
                self.merge(by_identity.pop(_identity(item)), item)
                if _identity(item) in by_identity
                else item
                for item in updated
            ]
        if len(original) == len(updated):
            return [self.merge(old, new) for old, new in zip(original, updated, strict=True)]
        return list(updated)

    def settle_anchors(self) -> None:
        """A copy keeps its original's anchor only when it replaced the original everywhere."""
        for original, seen in self._results.values():
            copies = [result for _, result in seen if result is not original]
            kept = len(copies) == 1 and len(seen) == 1
            for result in copies:
                if not kept and hasattr(result, "yaml_set_anchor"):
                    result.yaml_set_anchor(None)


def _identity(item: Any) -> Any:
    if isinstance(item, dict):
        identity = item.get("name", item.get("id"))
        return identity if isinstance(identity, str | int) else None
    return None


def same_value(original: Any, updated: Any) -> bool:
    """Whether two scalars mean the same, allowing numbers and booleans written as text.

    A YAML `.inf` or `.nan` is the same as None: pydantic dumps non-finite numbers as null.
    """
    original = scalar_value(original)
    if isinstance(original, float) and not math.isfinite(original) and updated is None:
        return True
    if isinstance(original, bool) or isinstance(updated, bool):
        if isinstance(original, str):
            return original.strip().lower() == str(updated).lower()
        return type(original) is type(updated) and original == updated
    if isinstance(original, str) and isinstance(updated, int | float):
        try:
            return float(original) == float(updated)
        except (ValueError, OverflowError):
            return False
    if isinstance(original, int | float) and isinstance(updated, int | float):
        return _same_number(original, updated)
    return bool(original == updated)


def _same_number(original: int | float, updated: int | float) -> bool:
    try:
        first, second = float(original), float(updated)
    except OverflowError:
        return original == updated
    return first == second or (math.isnan(first) and math.isnan(second))


def equivalent(original: Any, updated: Any) -> bool:
    """Whether data as written (`original`) means `updated`, by the rules of same_value."""
    if isinstance(original, dict) and isinstance(updated, dict):
        return original.keys() == updated.keys() and all(
            equivalent(original[key], updated[key]) for key in original
        )
    if isinstance(original, list) and isinstance(updated, list):
        return len(original) == len(updated) and all(
            equivalent(old, new) for old, new in zip(original, updated, strict=True)
        )
    if isinstance(original, dict | list) or isinstance(updated, dict | list):
        return False
    return same_value(original, updated)
