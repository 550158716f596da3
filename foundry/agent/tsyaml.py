"""YAML text as tsagent writes an agent: its `yaml` library (2.x) in tsagent's two-pass save.

tsagent's saveConfig stringifies the agent with the library's defaults (80 columns), parses that
text back, marks the embedding vectors as flow lists `[ ... ]` with a comment on the rules' and
references' `embeddings` key, and writes it again without folding (lineWidth 0). So each string
keeps the style the first pass chose for it (plain, quoted, `|` or `>` block; a multi-line text
with a line too long for 80 columns is `>` folded unless a word cannot be folded) and is written
on as few lines as that style allows. This module chooses the styles as that first pass does and
writes them as the second; the library's own functions are named where they are followed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from typing import Any

from foundry.agent.yamlcore import yaml_float_text

FIRST_PASS_WIDTH = 80  # the library's default lineWidth, used by tsagent's first pass
MIN_CONTENT_WIDTH = 20
DOUBLE_QUOTED_MIN_MULTILINE = 40  # doubleQuotedMinMultiLineLength
MAX_IMPLICIT_KEY = 1024
STEP = "  "
EMBEDDINGS_COMMENT = "# Delete embeddings when editing item, they will be automatically regenerated"

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
_NOT_PLAIN = re.compile(
    r"^[\n\t ,\[\]{}#&*!|>'\"%@`]|^[?-]\Z|^[?-][ \t]|[\n:][ \t]|[ \t]\n|[\n\t ]#|[\n\t :]\Z"
)
_FLOW_INDICATORS = re.compile(r"[\[\]{},]")
_DOCUMENT_MARKER = re.compile(r"^(%|---|\.\.\.)", re.MULTILINE)
_CORE_TESTS = [  # the core schema's tags that a plain string must not look like
    re.compile(pattern.replace("$", r"\Z"))
    for pattern in (
        r"^(?:~|[Nn]ull|NULL)?$",
        r"^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$",
        r"^0o[0-7]+$",
        r"^[-+]?[0-9]+$",
        r"^0x[0-9a-fA-F]+$",
        r"^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$",
        r"^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$",
        r"^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$",
    )
]
_JSON_ESCAPES = {
    "0000": "\\0",
    "0007": "\\a",
    "000b": "\\v",
    "001b": "\\e",
    "0085": "\\N",
    "00a0": "\\_",
    "2028": "\\L",
    "2029": "\\P",
}


@dataclass(frozen=True)
class _Context:
    indent: str = ""
    implicit_key: bool = False
    in_flow: bool = False
    force_block_indent: bool = False


def render_tsagent_yaml(data: Any) -> str:
    """`data` (plain dicts, lists and scalars) as tsagent's save writes it."""
    flows: set[int] = set()
    comments: set[int] = set()
    _mark_embeddings(data, False, flows, comments)
    return _Writer(flows, comments).node(data, _Context()) + "\n"


def _mark_embeddings(node: Any, in_tools: bool, flows: set[int], comments: set[int]) -> None:
    """tsagent's setEmbeddingArraysToFlowStyle: which lists go flow, which keys get the note."""
    if isinstance(node, list):
        for item in node:
            _mark_embeddings(item, in_tools, flows, comments)
        return
    if not isinstance(node, dict):
        return
    in_tools = in_tools or "tools" in node
    embeddings = node.get("embeddings")
    if isinstance(embeddings, list) and _holds_vectors(embeddings):
        flows.update(id(item) for item in embeddings if isinstance(item, list))
        if not in_tools:
            comments.add(id(node))
    for key, value in node.items():
        _mark_embeddings(value, in_tools or key == "tools", flows, comments)


def _holds_vectors(embeddings: list[Any]) -> bool:
    first = embeddings[0] if embeddings else None
    if not isinstance(first, list) or not first:
        return False
    return isinstance(first[0], int | float) and not isinstance(first[0], bool)


class _Writer:
    def __init__(self, flows: set[int], comments: set[int]) -> None:
        self._flows = flows
        self._comments = comments

    def node(self, value: Any, ctx: _Context) -> str:
        if isinstance(value, dict):
            return self._collection(value, ctx, flow=False)
        if isinstance(value, list):
            return self._collection(value, ctx, flow=id(value) in self._flows)
        return _scalar(value, ctx)

    def _collection(self, value: dict[Any, Any] | list[Any], ctx: _Context, flow: bool) -> str:
        if ctx.in_flow or flow:
            return self._flow(value, ctx)
        if not value:
            return "{}" if isinstance(value, dict) else "[]"
        if isinstance(value, dict):
            commented = id(value) in self._comments
            lines = [
                self._pair(key, item, ctx, commented and key == "embeddings")
                for key, item in value.items()
            ]
        else:
            item_ctx = replace(ctx, indent=ctx.indent + STEP)
            lines = ["- " + self.node(item, item_ctx) for item in value]
        return f"\n{ctx.indent}".join(lines)

    def _flow(self, value: dict[Any, Any] | list[Any], ctx: _Context) -> str:
        """stringifyFlowCollection without a line width: one line unless an item has breaks."""
        brackets = "{}" if isinstance(value, dict) else "[]"
        step = STEP if isinstance(value, dict) else STEP * 2
        item_ctx = replace(ctx, indent=ctx.indent + step, in_flow=True)
        if isinstance(value, dict):
            items = [self._pair(key, item, item_ctx, False) for key, item in value.items()]
        else:
            items = [self.node(item, item_ctx) for item in value]
        if not items:
            return brackets
        items = [item + "," for item in items[:-1]] + items[-1:]
        if any("\n" in item for item in items):
            inner = "".join(f"\n{STEP}{ctx.indent}{item}" for item in items)
            return f"{brackets[0]}{inner}\n{ctx.indent}{brackets[1]}"
        return f"{brackets[0]} {' '.join(items)} {brackets[1]}"

    def _pair(self, key: Any, value: Any, ctx: _Context, commented: bool) -> str:
        """stringifyPair: `key: value`, a collection on the lines below its key."""
        inner = replace(ctx, indent=ctx.indent + STEP)
        key_text = _scalar(key, replace(inner, implicit_key=True))
        explicit = not ctx.in_flow and len(key_text) > MAX_IMPLICIT_KEY
        text = f"? {key_text}\n{ctx.indent}:" if explicit else key_text + ":"
        if commented:
            text += " " + EMBEDDINGS_COMMENT
        value_text = self.node(value, inner)
        if isinstance(value, dict | list) and not explicit:
            is_flow = ctx.in_flow or id(value) in self._flows or not value
            if commented or "\n" in value_text or not is_flow:
                return f"{text}\n{inner.indent}{value_text}"
        elif commented:
            return f"{text}\n{inner.indent}{value_text}"
        return f"{text} {value_text}"


def _scalar(value: Any, ctx: _Context) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return yaml_float_text(value)
    return _string(str(value), ctx)


def _string(value: str, ctx: _Context) -> str:
    """stringifyString: the first pass's style for `value`, written as the second pass does."""
    if _CONTROL.search(value):
        return _double_quoted(value, ctx)
    if (ctx.implicit_key and "\n" in value) or (ctx.in_flow and _FLOW_INDICATORS.search(value)):
        return _quoted(value, ctx)
    if _NOT_PLAIN.search(value):
        if ctx.implicit_key or ctx.in_flow or "\n" not in value:
            return _quoted(value, ctx)
        return _block(value, ctx)
    if not ctx.implicit_key and not ctx.in_flow and "\n" in value:
        return _block(value, ctx)
    if _DOCUMENT_MARKER.search(value):
        if ctx.indent == "":
            return _block(value, replace(ctx, force_block_indent=True))
        if ctx.implicit_key and ctx.indent == STEP:
            return _quoted(value, ctx)
    if any(test.search(value) for test in _CORE_TESTS):
        return _quoted(value, ctx)
    return value


def _quoted(value: str, ctx: _Context) -> str:
    """quotedString: single quotes only for text with double quotes and no single ones."""
    if '"' in value and "'" not in value:
        return _single_quoted(value, ctx)
    return _double_quoted(value, ctx)


def _single_quoted(value: str, ctx: _Context) -> str:
    if (ctx.implicit_key and "\n" in value) or re.search(r"[ \t]\n|\n[ \t]", value):
        return _double_quoted(value, ctx)
    indent = _marker_indent(value, ctx)
    body = re.sub(r"\n+", lambda match: f"{match.group()}\n{indent}", value.replace("'", "''"))
    return f"'{body}'"


def _double_quoted(value: str, ctx: _Context) -> str:
    """doubleQuotedString: JSON's escapes in YAML's short forms; line breaks of a long text
    written as breaks (a blank line each), as the library's folding reads them back."""
    text = _js_json_string(value)
    indent = _marker_indent(value, ctx)
    out: list[str] = []
    start = index = 0
    while index < len(text):
        char = text[index]
        if char == " " and text[index + 1 : index + 3] == "\\n":
            out.append(text[start:index] + "\\ ")
            index += 1
            start = index
            char = "\\"
        if char == "\\":
            escaped = text[index + 1]
            if escaped == "u":
                out.append(text[start:index])
                code = text[index + 2 : index + 6]
                out.append(_JSON_ESCAPES.get(code) or _unicode_escape(code, text, index))
                index += 5
                start = index + 1
            elif escaped == "n" and _breaks_line(text, index, ctx):
                out.append(text[start:index] + "\n\n")
                while text[index + 2 : index + 4] == "\\n" and text[index + 4 : index + 5] != '"':
                    out.append("\n")
                    index += 2
                out.append(indent + ("\\" if text[index + 2 : index + 3] == " " else ""))
                index += 1
                start = index + 1
            else:
                index += 1
        index += 1
    return "".join(out) + text[start:] if start else text


def _breaks_line(text: str, index: int, ctx: _Context) -> bool:
    return not (
        ctx.implicit_key
        or text[index + 2 : index + 3] == '"'
        or len(text) < DOUBLE_QUOTED_MIN_MULTILINE
    )


def _unicode_escape(code: str, text: str, index: int) -> str:
    return "\\x" + code[2:] if code.startswith("00") else text[index : index + 6]


def _js_json_string(value: str) -> str:
    """JSON.stringify of a string: Python's json escapes the same characters (lowercase hex)."""
    return json.dumps(value, ensure_ascii=False)


def _marker_indent(value: str, ctx: _Context) -> str:
    return ctx.indent or ("  " if _DOCUMENT_MARKER.search(value) else "")


def _block(value: str, ctx: _Context) -> str:
    """blockString: `|` or `>` as the first pass chose, written without folding."""
    if re.search(r"\n[\t ]+\Z", value):
        return _quoted(value, ctx)
    indent = ctx.indent or (
        "  " if ctx.force_block_indent or _DOCUMENT_MARKER.search(value) else ""
    )
    if not value:
        return "|\n"
    literal = _fits_literal(value, indent)
    end_start = len(value)
    while end_start > 0 and value[end_start - 1] in "\n\t ":
        end_start -= 1
    end = value[end_start:]
    newline_at = end.find("\n")
    if newline_at == -1:
        chomp = "-"
    elif value == end or newline_at != len(end) - 1:
        chomp = "+"
    else:
        chomp = ""
    if end:
        value = value[: -len(end)]
        end = end[:-1] if end.endswith("\n") else end
        end = re.sub(r"(^|(?<!\n))\n+(?!\n|\Z)", lambda m: m.group() + indent, end)
    leading_space = False
    start_end = 0
    last_newline = -1
    while start_end < len(value):
        char = value[start_end]
        if char == " ":
            leading_space = True
        elif char == "\n":
            last_newline = start_end
        else:
            break
        start_end += 1
    start = value[: last_newline + 1 if last_newline < start_end else start_end]
    if start:
        value = value[len(start) :]
        start = re.sub(r"\n+", lambda match: match.group() + indent, start)
    header = ("2" if indent else "1") * leading_space + chomp
    folded = _folded_body(value, indent)
    if not literal and not _folding_overflows(start + folded + end, indent):
        return f">{header}\n{indent}{start}{folded}{end}"
    body = re.sub(r"\n+", lambda match: match.group() + indent, value)
    return f"|{header}\n{indent}{start}{body}{end}"


def _folded_body(value: str, indent: str) -> str:
    doubled = re.sub(r"\n+", lambda match: "\n" + match.group(), value)
    kept = re.sub(
        r"(?:^|\n)([\t ][^\n\r\u2028\u2029]*)(?:([\n\t ]*)\n(?![\n\t ]))?",
        lambda match: match.group(1) + (match.group(2) or ""),
        doubled,
    )
    return re.sub(r"\n+", lambda match: match.group() + indent, kept)


def _fits_literal(value: str, indent: str) -> bool:
    """The first pass writes `|` unless a line is over 80 columns (lineLengthOverLimit)."""
    limit = FIRST_PASS_WIDTH - len(indent)
    return all(len(line) <= limit for line in value.split("\n"))


def _folding_overflows(text: str, indent: str) -> bool:
    """Whether foldFlowLines in block mode at 80 columns meets a word it cannot break: the
    first pass then falls back to `|`."""
    end_step = max(1 + MIN_CONTENT_WIDTH, 1 + FIRST_PASS_WIDTH - len(indent))
    if len(text) <= end_step:
        return False
    end = FIRST_PASS_WIDTH - len(indent)
    index = _more_indented_end(text, -1, len(indent))
    if index != -1:
        end = index + end_step
    split: int | None = None
    previous = ""
    while True:
        index += 1
        if index >= len(text):
            return False
        char = text[index]
        if char == "\n":
            index = _more_indented_end(text, index, len(indent))
            end = index + len(indent) + end_step
            split = None
        else:
            following = text[index + 1] if index + 1 < len(text) else ""
            if (
                char == " "
                and previous not in ("", " ", "\n", "\t")
                and following
                not in (
                    "",
                    " ",
                    "\n",
                    "\t",
                )
            ):
                split = index
            if index >= end:
                if not split:
                    return True
                end = split + end_step
                split = None
        previous = char


def _more_indented_end(text: str, index: int, indent: int) -> int:
    """consumeMoreIndentedLines: the last line break of the more-indented lines after `index`."""
    end = index
    start = index + 1
    char = text[start] if start < len(text) else ""
    while char in (" ", "\t") and char:
        if index < start + indent:
            index += 1
            char = text[index] if index < len(text) else ""
        else:
            while True:
                index += 1
                char = text[index] if index < len(text) else ""
                if not char or char == "\n":
                    break
            end = index
            start = index + 1
            char = text[start] if start < len(text) else ""
    return end
