"""Apply new data onto the data a file was read from, keeping its order, comments and spelling."""

from __future__ import annotations

import copy
from typing import Any


def overlay(original: Any, updated: Any) -> Any:
    """`updated`, expressed in the shape of `original` wherever the two mean the same thing.

    Keys keep their original order (new ones go last), YAML comments survive, and a value that
    is only spelled differently (the string "10" for the number 10) keeps its original spelling.
    `original` is not modified.
    """
    return _merge(copy.deepcopy(original), updated)


def _merge(original: Any, updated: Any) -> Any:
    if isinstance(original, dict) and isinstance(updated, dict):
        return _merge_mapping(original, updated)
    if isinstance(original, list) and isinstance(updated, list):
        return _merge_list(original, updated)
    return original if same_value(original, updated) else updated


def _merge_mapping(original: dict[Any, Any], updated: dict[Any, Any]) -> dict[Any, Any]:
    for key in [key for key in original if key not in updated]:
        del original[key]
    for key, value in updated.items():
        original[key] = _merge(original[key], value) if key in original else value
    return original


def _identity(item: Any) -> Any:
    if isinstance(item, dict):
        return item.get("name", item.get("id"))
    return None


def _merge_list(original: list[Any], updated: list[Any]) -> list[Any]:
    """Match items by name (or id) when they have one, by position otherwise."""
    by_identity = {_identity(item): item for item in original if _identity(item) is not None}
    if by_identity and all(_identity(item) is not None for item in updated):
        merged = [
            _merge(by_identity[_identity(item)], item) if _identity(item) in by_identity else item
            for item in updated
        ]
    elif len(original) == len(updated):
        merged = [_merge(old, new) for old, new in zip(original, updated, strict=True)]
    else:
        merged = list(updated)
    original[:] = merged
    return original


def same_value(original: Any, updated: Any) -> bool:
    """Whether two scalars mean the same, allowing numbers and booleans written as text."""
    if isinstance(original, bool) or isinstance(updated, bool):
        if isinstance(original, str):
            return original.strip().lower() == str(updated).lower()
        return type(original) is type(updated) and original == updated
    if isinstance(original, str) and isinstance(updated, int | float):
        try:
            return float(original) == float(updated)
        except ValueError:
            return False
    if isinstance(original, int | float) and isinstance(updated, int | float):
        return float(original) == float(updated)
    return bool(original == updated)
