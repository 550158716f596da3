"""A tool call's parameters for a reviewer: a tree of their structure; edited JSON parsed."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from foundry.supervision.redaction import content_metadata, redact_params

CONTENT_METADATA_KEYS = frozenset(content_metadata("").keys())


class ParamsError(ValueError):
    """Edited parameters that are not a JSON object; the message says where and why."""


@dataclass(frozen=True)
class ParamNode:
    """One parameter (or an item of one) as a row of the parameters tree."""

    key: str
    value: str
    note: str = ""
    children: tuple[ParamNode, ...] = ()
    hidden: bool = False  # content replaced by its length, hash and type


def param_tree(params: dict[str, Any], show_content: bool) -> list[ParamNode]:
    """The parameters as tree rows, secrets masked; without `show_content`, content reads as
    the supervisor sees it: its type, size and hash, never its text."""
    shown = redact_params(params, expose_content=show_content)
    return [_node(str(key), value) for key, value in shown.items()]


def _node(key: str, value: Any) -> ParamNode:
    if isinstance(value, dict) and set(value) == CONTENT_METADATA_KEYS:
        note = f"{value['content_length']:,} bytes · sha256 {value['content_sha256'][:12]}…"
        return ParamNode(key, f"⟨{value['content_type_detected']} content⟩", note, hidden=True)
    if isinstance(value, dict):
        children = tuple(_node(str(name), item) for name, item in value.items())
        return ParamNode(key, f"{{{len(value)} keys}}", children=children)
    if isinstance(value, list | tuple):
        children = tuple(_node(f"[{number}]", item) for number, item in enumerate(value))
        return ParamNode(key, f"[{len(value)} items]", children=children)
    if isinstance(value, str):
        return ParamNode(key, value, f"{len(value):,} characters" if len(value) > 60 else "")
    return ParamNode(key, json.dumps(value))


def params_text(params: dict[str, Any]) -> str:
    """The parameters as the JSON a reviewer edits."""
    return json.dumps(params, indent=2, ensure_ascii=False)


def parse_edited_params(text: str) -> dict[str, Any]:
    """The edited parameters, or ParamsError saying at which line and column they go wrong."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise ParamsError(f"line {error.lineno}, column {error.colno}: {error.msg}") from None
    if not isinstance(value, dict):
        raise ParamsError("the parameters must be a JSON object, {…}")
    return value
