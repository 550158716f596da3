"""A call's arguments checked against the input schema its tool was offered with, before anyone
decides on it: a call its server would refuse anyway (a required parameter missing, a wrong type)
never asks a person."""

from __future__ import annotations

from typing import Any

from jsonschema.exceptions import SchemaError, best_match
from jsonschema.protocols import Validator
from jsonschema.validators import validator_for
from referencing.exceptions import Unresolvable

from foundry.tools.catalog import ToolInfo

MAX_SAID = 300  # characters of the schema's complaint, which may quote a huge argument


class ArgumentCheck:
    """Each tool's validator, made once per schema it is offered with."""

    def __init__(self) -> None:
        self._validators: dict[str, tuple[dict[str, Any], Validator | None]] = {}

    def problem(self, tool: ToolInfo, arguments: dict[str, Any]) -> str | None:
        """What is wrong with the arguments, in words the client's model can act on; None when
        they fit (or the schema cannot judge them: the server then does)."""
        validator = self._validator(tool)
        try:
            error = None if validator is None else best_match(validator.iter_errors(arguments))
        except Unresolvable:  # a $ref the schema does not hold
            return None
        if error is None:
            return None
        where = error.json_path if error.path else "the arguments"
        said = error.message if len(error.message) <= MAX_SAID else error.message[:MAX_SAID] + "…"
        return f"The arguments do not fit {tool.name}'s input schema: at {where}, {said}"

    def _validator(self, tool: ToolInfo) -> Validator | None:
        known = self._validators.get(tool.name)
        if known is not None and known[0] is tool.parameters:
            return known[1]
        schema = {"type": "object", **tool.parameters}
        try:
            kind = validator_for(schema)
            kind.check_schema(schema)
            validator: Validator | None = kind(schema)
        except SchemaError:  # the server's own schema is broken: it judges its arguments itself
            validator = None
        self._validators[tool.name] = (tool.parameters, validator)
        return validator
