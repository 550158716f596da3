"""ToolForm: a form built from a tool's JSON input schema, turning what is typed into arguments."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QWidget,
)

SCALARS = ("string", "number", "integer", "boolean")
WHOLE_OBJECT = ""  # the name of the one raw-JSON field used when the schema lists no properties


class ArgumentError(ValueError):
    """What is wrong with the values typed into the form, one plain sentence per field."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class FieldSpec:
    """One argument: its kind decides the widget (enum and boolean: a choice; strings: lines)."""

    name: str
    kind: str  # string, number, integer, boolean, enum, strings or json
    required: bool
    description: str = ""
    default: Any = None
    choices: tuple[Any, ...] = ()


def field_specs(schema: dict[str, Any]) -> list[FieldSpec]:
    """The fields of an object schema; one raw-JSON field when it names no properties."""
    properties = schema.get("properties")
    if not isinstance(properties, dict) or not properties:
        if schema.get("type") == "object" and schema.get("additionalProperties") is False:
            return []
        return [FieldSpec(WHOLE_OBJECT, "json", False, "All arguments as a JSON object")]
    required = set(schema.get("required") or ())
    return [
        _spec(name, _without_null(prop if isinstance(prop, dict) else {}), name in required)
        for name, prop in properties.items()
    ]


def _without_null(schema: dict[str, Any]) -> dict[str, Any]:
    """`X | None` written as anyOf or a type list is shown as X."""
    options = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(options, list):
        kept = [option for option in options if option.get("type") != "null"]
        if len(kept) == 1:
            return {**{k: v for k, v in schema.items() if k not in ("anyOf", "oneOf")}, **kept[0]}
    kind = schema.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        if len(kinds) == 1:
            return {**schema, "type": kinds[0]}
    return schema


def _spec(name: str, schema: dict[str, Any], required: bool) -> FieldSpec:
    choices = schema.get("enum")
    return FieldSpec(
        name=name,
        kind=_kind(schema),
        required=required,
        description=str(schema.get("description") or schema.get("title") or ""),
        default=schema.get("default"),
        choices=tuple(choices) if isinstance(choices, list) else (),
    )


def _kind(schema: dict[str, Any]) -> str:
    kind = schema.get("type")
    if isinstance(schema.get("enum"), list):
        return "enum"
    if kind in SCALARS:
        return str(kind)
    items = schema.get("items")
    if kind == "array" and isinstance(items, dict) and items.get("type") == "string":
        return "strings"
    return "json"


def parse_value(spec: FieldSpec, text: str) -> Any:
    """The argument for `text` typed into a text field; raises ValueError in plain words."""
    if spec.kind == "string":
        return text
    if spec.kind == "number":
        try:
            return float(text) if any(c in text.lower() for c in ".e") else int(text)
        except ValueError:
            raise ValueError(f"{spec.name} must be a number, not {text!r}") from None
    if spec.kind == "integer":
        try:
            return int(text)
        except ValueError:
            raise ValueError(f"{spec.name} must be a whole number, not {text!r}") from None
    if spec.kind == "strings":
        return [line.strip() for line in text.splitlines() if line.strip()]
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        label = spec.name or "the arguments"
        raise ValueError(f"{label} is not valid JSON: {error.msg} (line {error.lineno})") from None


NOT_SET = object()


class ToolForm(QWidget):
    """One widget per field of the schema; `arguments()` reads them back as the call's input."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.layout_ = QFormLayout(self)
        self.layout_.setContentsMargins(0, 0, 0, 0)
        self.specs: list[FieldSpec] = []
        self.fields: dict[str, QWidget] = {}

    def build(self, schema: dict[str, Any]) -> None:
        while self.layout_.rowCount():
            self.layout_.removeRow(0)
        self.specs = field_specs(schema)
        self.fields = {spec.name: _widget(spec) for spec in self.specs}
        for spec in self.specs:
            label = QLabel(f"{spec.name or 'Arguments'}{' *' if spec.required else ''}:")
            label.setToolTip(spec.description)
            self.layout_.addRow(label, self.fields[spec.name])
        if not self.specs:
            self.layout_.addRow(QLabel("This tool takes no arguments."))

    def arguments(self) -> dict[str, Any]:
        """The arguments typed; raises ArgumentError listing every field that is wrong."""
        values: dict[str, Any] = {}
        problems: list[str] = []
        for spec in self.specs:
            try:
                value = self._value(spec)
            except ValueError as error:
                problems.append(str(error))
                continue
            if value is NOT_SET:
                if spec.required:
                    problems.append(f"{spec.name} is required")
            elif spec.name == WHOLE_OBJECT:
                if not isinstance(value, dict):
                    problems.append("the arguments must be a JSON object")
                else:
                    values.update(value)
            else:
                values[spec.name] = value
        if problems:
            raise ArgumentError(problems)
        return values

    def set_text(self, name: str, text: str) -> None:
        """Type `text` into a text field, or choose the item shown as `text` (tests, examples)."""
        widget = self.fields[name]
        if isinstance(widget, QComboBox):
            widget.setCurrentIndex(widget.findText(text))
        elif isinstance(widget, QLineEdit):
            widget.setText(text)
        elif isinstance(widget, QPlainTextEdit):
            widget.setPlainText(text)

    def _value(self, spec: FieldSpec) -> Any:
        widget = self.fields[spec.name]
        if isinstance(widget, QComboBox):
            return widget.currentData()
        text = widget.text() if isinstance(widget, QLineEdit) else _plain_text(widget)
        return parse_value(spec, text) if text.strip() else NOT_SET


def _plain_text(widget: QWidget) -> str:
    return widget.toPlainText() if isinstance(widget, QPlainTextEdit) else ""


def _widget(spec: FieldSpec) -> QWidget:
    if spec.kind in ("enum", "boolean"):
        return _choice(spec)
    hint = spec.description
    if spec.default is not None:
        hint = f"{hint} (default: {json.dumps(spec.default)})".strip()
    if spec.kind in ("strings", "json"):
        text = QPlainTextEdit()
        text.setPlaceholderText("one value a line" if spec.kind == "strings" else "JSON")
        text.setFixedHeight(70)
        text.setToolTip(hint)
        if spec.kind == "json":
            text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        return text
    line = QLineEdit()
    line.setPlaceholderText(hint or spec.kind)
    line.setToolTip(f"{spec.kind}: {hint}" if hint else spec.kind)
    return line


def _choice(spec: FieldSpec) -> QComboBox:
    combo = QComboBox()
    if not spec.required:
        combo.addItem("(not set)", NOT_SET)
    choices = spec.choices if spec.kind == "enum" else (True, False)
    for choice in choices:
        combo.addItem(json.dumps(choice).strip('"'), choice)
    if spec.default in choices:
        combo.setCurrentIndex(combo.findData(spec.default))
    combo.setToolTip(spec.description)
    return combo
