"""The arguments of a call that its tool's input schema declares: what is passed on to the server.

A parameter the schema does not name is dropped before anyone judges the call, so the gate
judges exactly what the server receives: a third-party `search_files(keyword)` called with an
extra `"path": "."` is judged (and run) without it. At every level the schema describes an
object (`properties`), a field it does not name is dropped, unless the schema lets other fields
in explicitly (`additionalProperties` true or a schema, `patternProperties`) or combines schemas
(`allOf`, `anyOf`, `oneOf`, `$ref`, `if`, ...), where what it declares cannot be read off one
level; an object it leaves open (no `properties`) is passed on whole. Lists follow `items`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# keywords under which a schema declares fields elsewhere than its own `properties`
COMBINING = ("allOf", "anyOf", "oneOf", "$ref", "$dynamicRef", "if", "dependentSchemas",
             "dependencies", "unevaluatedProperties")  # fmt: skip
NOTE = "Foundry did not pass on what {tool}'s input schema does not declare: {dropped}."


@dataclass(frozen=True)
class Forwarded:
    """A call's arguments as passed on, and where each dropped parameter was (`options.x`)."""

    arguments: dict[str, Any]
    dropped: tuple[str, ...] = ()

    def note(self, tool: str) -> str | None:
        """What was dropped, in words the model and the person reading the result see."""
        if not self.dropped:
            return None
        return NOTE.format(tool=tool, dropped=", ".join(self.dropped))


def forwarded(arguments: dict[str, Any], schema: Mapping[str, Any] | None) -> Forwarded:
    """`arguments` without the parameters `schema` does not declare (all of them when the
    schema is not known)."""
    if not isinstance(schema, Mapping):
        return Forwarded(arguments)
    dropped: list[str] = []
    kept = _declared(arguments, schema, "", dropped)
    return Forwarded(kept, tuple(dropped)) if dropped else Forwarded(arguments)


def with_note(text: str, note: str | None) -> str:
    """A result's text with the note of what was not passed on, after it."""
    return text if note is None else f"{text}\n\n({note})"


def _declared(value: Any, schema: Any, where: str, dropped: list[str]) -> Any:
    if not isinstance(schema, Mapping):
        return value
    properties = schema.get("properties")
    if isinstance(value, Mapping) and isinstance(properties, Mapping):
        open_to_others = (
            schema.get("additionalProperties", False) is not False
            or bool(schema.get("patternProperties"))
            or any(key in schema for key in COMBINING)
        )
        kept = {}
        for key, item in value.items():
            inner = f"{where}.{key}" if where else str(key)
            if key in properties:
                kept[key] = _declared(item, properties[key], inner, dropped)
            elif open_to_others:
                kept[key] = item
            else:
                dropped.append(inner)
        return kept
    items = schema.get("items")
    if isinstance(value, list) and isinstance(items, Mapping):
        return [_declared(item, items, f"{where}[{n}]", dropped) for n, item in enumerate(value)]
    return value
