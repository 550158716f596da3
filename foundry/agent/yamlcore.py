"""YAML as tsagent reads it: the 1.2 core schema, with limits on depth, values and aliases."""

from __future__ import annotations

import math
import re
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.composer import Composer
from ruamel.yaml.error import MarkedYAMLError
from ruamel.yaml.events import AliasEvent
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from ruamel.yaml.representer import RoundTripRepresenter
from ruamel.yaml.resolver import VersionedResolver
from ruamel.yaml.scalarfloat import ScalarFloat
from ruamel.yaml.scanner import RoundTripScanner
from ruamel.yaml.tag import Tag

from foundry.agent.limits import MAX_DEPTH, MAX_INT_DIGITS, MAX_YAML_ALIASES, MAX_YAML_VALUES
from foundry.agent.numbers import js_number_text

_PREFIX = "tag:yaml.org,2002:"
# The core schema of YAML 1.2 (spec 10.3.2), which tsagent's `yaml` library uses: no timestamps,
# no sexagesimal numbers, no yes/no/on/off, no 0b or 1_000, no merge keys; those stay text.
_CORE_SCALARS = {
    "null": r"~|null|Null|NULL|",
    "bool": r"true|True|TRUE|false|False|FALSE",
    "int": r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+",
    "float": r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)",
}
_PATTERNS = {name: re.compile(f"(?:{pattern})\\Z") for name, pattern in _CORE_SCALARS.items()}
_TAGS = {name: Tag(suffix=_PREFIX + name) for name in (*_CORE_SCALARS, "str", "seq", "map")}
_NODE_TAGS = {ScalarNode: _TAGS["str"], SequenceNode: _TAGS["seq"], MappingNode: _TAGS["map"]}
_MAX_INT_BITS = int(MAX_INT_DIGITS * 3.3219)  # log2(10): the bits of a 4300-digit number


class YamlLimitError(MarkedYAMLError):
    """A document that is well-formed but over one of the limits (depth, values, aliases)."""


class CoreResolver(VersionedResolver):
    """Resolves plain scalars by the 1.2 core schema, whatever `%YAML` directive a file has."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        if kind is ScalarNode and implicit[0]:
            for name, pattern in _PATTERNS.items():
                if pattern.match(value):
                    return _TAGS[name]
        return _NODE_TAGS.get(kind, _TAGS["str"])

    @property
    def processing_version(self) -> Any:
        return (1, 2)


class LimitedScanner(RoundTripScanner):
    """Refuses flow collections (`[`, `{`) nested past MAX_DEPTH as soon as it meets them.

    The scanner keeps a possible simple key per open flow collection and checks them all at
    every token, so thousands of `[` on a line would cost it seconds before any node is built.
    """

    def fetch_flow_collection_start(self, TokenClass: Any, to_push: str) -> None:
        if self.flow_level >= MAX_DEPTH:
            raise _limit(f"nested more than {MAX_DEPTH} levels deep", self.reader.get_mark())
        super().fetch_flow_collection_start(TokenClass, to_push)

    def scan_plain_spaces(self, indent: Any, start_mark: Any) -> Any:
        """Takes tabs between the words of a plain text (`Tab<TAB>here`), as YAML 1.2 allows
        and tsagent's library writes them; ruamel's scanner refuses them."""
        length = 0
        while self.reader.peek(length) in " \t":
            length += 1
        whitespace = self.reader.prefix(length)
        if "\t" not in whitespace:
            return super().scan_plain_spaces(indent, start_mark)
        self.reader.forward(length)
        if self.reader.peek() in "\r\n\x85\u2028\u2029":  # before a line break: not text
            return super().scan_plain_spaces(indent, start_mark)
        return [whitespace]


class LimitedComposer(Composer):
    """Builds the node graph, refusing what would make reading slow, deep or endless.

    Nesting past MAX_DEPTH, more than MAX_YAML_ALIASES aliases, more than MAX_YAML_VALUES values
    once aliases are counted as what they stand for, an alias inside the node it names, tags
    outside the core schema and integers too long to convert are refused at their line.
    """

    warn_double_anchors = False

    def compose_document(self: Any) -> Any:
        self._nesting = 0
        self._values = 0
        self._aliases = 0
        self._definitions = 0
        self._bindings: dict[str, int] = {}  # anchor -> the definition its aliases refer to
        self._open: set[int] = set()  # definitions whose node is still being composed
        self._sizes: dict[str, int] = {}  # anchor -> the values its node holds
        return super().compose_document()

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.parser.check_event(AliasEvent):
            self._count_alias(self.parser.peek_event())
            return _scalar_if_key(super().compose_node(parent, index), parent, index)
        event = self.parser.peek_event()
        self._nesting += 1
        if self._nesting > MAX_DEPTH:
            raise _limit(f"nested more than {MAX_DEPTH} levels deep", event.start_mark)
        self._count_values(1, event.start_mark)
        before, anchor = self._values, event.anchor
        definition = self._define(anchor) if anchor is not None else 0
        node = super().compose_node(parent, index)
        if anchor is not None:
            self._open.discard(definition)
            if self._bindings[anchor] == definition:
                self._sizes[anchor] = self._values - before + 1
        self._nesting -= 1
        _check_tag(node)
        return _scalar_if_key(node, parent, index)

    def _define(self, anchor: str) -> int:
        self._definitions += 1
        self._bindings[anchor] = self._definitions
        self._open.add(self._definitions)
        return self._definitions

    def _count_alias(self, event: Any) -> None:
        name = event.anchor
        if self._bindings.get(name) in self._open:
            message = f"the alias *{name} is inside the node it names (a recursive alias)"
            raise _limit(message, event.start_mark)
        self._aliases += 1
        if self._aliases > MAX_YAML_ALIASES:
            message = f"more than {MAX_YAML_ALIASES} aliases (a guard against alias bombs)"
            raise _limit(message, event.start_mark)
        self._count_values(self._sizes.get(name, 1), event.start_mark)

    def _count_values(self, count: int, mark: Any) -> None:
        self._values += count
        if self._values > MAX_YAML_VALUES:
            message = (
                f"holds more than {MAX_YAML_VALUES:,} values (an alias counts as the values it "
                f"stands for); YAML in agent files is limited to {MAX_YAML_VALUES:,}"
            )
            raise _limit(message, mark)


def _scalar_if_key(node: Node, parent: Any, index: Any) -> Node:
    """A mapping key must be text or a number, as in JSON (ruamel cannot hash list keys)."""
    if isinstance(parent, MappingNode) and index is None and not isinstance(node, ScalarNode):
        raise _limit(
            "a mapping key must be text or a number, not a list or mapping", node.start_mark
        )
    return node


def _limit(message: str, mark: Any) -> YamlLimitError:
    return YamlLimitError(None, None, message, mark)


def _check_tag(node: Node) -> None:
    tag = str(node.tag)
    expected = _NODE_TAGS.get(type(node))
    if isinstance(node, ScalarNode) and tag.startswith(_PREFIX):
        name = tag.removeprefix(_PREFIX)
        if name == "str":
            return
        if name in _PATTERNS:
            _check_scalar(node, name)
            return
    if tag != str(expected):
        shown = tag.replace(_PREFIX, "!!", 1)[:60]
        message = f"the tag {shown} is not supported (agent files use the YAML 1.2 core schema)"
        raise _limit(message, node.start_mark)


def _check_scalar(node: ScalarNode, name: str) -> None:
    value = str(node.value)
    if not _PATTERNS[name].match(value):
        raise _limit(f"{value[:40]!r} is not a valid !!{name}", node.start_mark)
    if name == "int" and _int_too_long(value):
        message = f"a number of more than {MAX_INT_DIGITS} digits is too long"
        raise _limit(message, node.start_mark)


def _int_too_long(literal: str) -> bool:
    digits = literal.lstrip("+-")
    if digits.startswith(("0x", "0o")):
        return int(digits[2:], 16 if digits[1] == "x" else 8).bit_length() > _MAX_INT_BITS
    return len(digits) > MAX_INT_DIGITS


class CoreRepresenter(RoundTripRepresenter):
    """Writes floats as tsagent does (JavaScript's spelling), also those read from a file:
    ruamel rebuilds a read float from its digit counts and loses the last digit of some."""

    def represent_js_float(self, value: float) -> Node:
        return self.represent_scalar(str(_TAGS["float"]), yaml_float_text(value))


CoreRepresenter.add_representer(float, CoreRepresenter.represent_js_float)
CoreRepresenter.add_representer(ScalarFloat, CoreRepresenter.represent_js_float)


def yaml_float_text(value: float) -> str:
    """A float in YAML as tsagent's `yaml` library writes it (`.nan`, `-.inf`, `1e-8`)."""
    if math.isnan(value):
        return ".nan"
    if math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    return js_number_text(value)


def round_trip_yaml() -> YAML:
    """ruamel's round-trip loader and dumper, reading and writing by the core schema."""
    yaml = YAML(typ="rt")
    yaml.Resolver = CoreResolver
    yaml.Scanner = LimitedScanner
    yaml.Composer = LimitedComposer
    yaml.Representer = CoreRepresenter
    yaml.preserve_quotes = True
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=4, offset=2)
    return yaml
