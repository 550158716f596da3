"""Reading the body of approve and deny in the forms agent-mesh's clients send: none, a JSON
object, or a form (application/x-www-form-urlencoded)."""

from __future__ import annotations

import json
import math
from typing import Any
from urllib.parse import parse_qsl

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from pydantic import ValidationError

from foundry.api.strict_json import json_problems
from foundry.api.views import Resolution

FORM = "application/x-www-form-urlencoded"
NOT_AN_OBJECT = 'must be a JSON object such as {"resolved_by": "me", "reasoning": "why"}'


async def read_resolution(request: Request) -> Resolution:
    """The resolution the body gives (all defaults without one); RequestValidationError,
    answered as 422 naming each problem, when it cannot be read or holds a wrong type."""
    body = await request.body()
    if not body.strip():
        return Resolution()
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    fields = _form_fields(body) if content_type == FORM else _json_fields(body)
    try:
        return Resolution.model_validate(fields)
    except ValidationError as error:
        problems = [{**problem, "loc": ("body", *problem["loc"])} for problem in error.errors()]
        raise RequestValidationError(problems) from None


def _json_fields(body: bytes) -> dict[str, Any]:
    problems = json_problems(body)
    if problems:
        raise RequestValidationError(problems)
    value = json.loads(body)
    if not isinstance(value, dict):
        problem = {"type": "dict_type", "loc": ("body",), "msg": NOT_AN_OBJECT}
        raise RequestValidationError([problem])
    return value


def _form_fields(body: bytes) -> dict[str, Any]:
    """A form's fields as text, its confidence as the number it spells (a form has no numbers:
    text that is not one stays text, and is refused as a confidence)."""
    try:
        pairs = parse_qsl(body.decode("utf-8"), keep_blank_values=True, strict_parsing=True)
    except (UnicodeDecodeError, ValueError):
        message = "the form is not UTF-8 name=value pairs joined by &"
        problem = {"type": "form_invalid", "loc": ("body",), "msg": message}
        raise RequestValidationError([problem]) from None
    fields: dict[str, Any] = dict(pairs)
    problems = json_problems(json.dumps(fields).encode())
    if problems:
        raise RequestValidationError(problems)
    confidence = fields.get("confidence")
    if isinstance(confidence, str):
        fields["confidence"] = _number(confidence)
    return fields


def _number(text: str) -> float | str:
    try:
        number = float(text)
    except ValueError:
        return text
    return number if math.isfinite(number) else text
