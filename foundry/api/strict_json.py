"""Strict JSON request bodies: UTF-8, finite numbers, valid Unicode text without NUL, else 422.

Python's JSON reader accepts what JSON does not (NaN, Infinity, numbers that overflow to
infinity, lone UTF-16 surrogates such as "\\ud800"). Such values cannot be stored, traced or sent
back, so a body that holds one is refused before any endpoint sees it, naming where it is.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute

Location = tuple[str | int, ...]
Handler = Callable[[Request], Coroutine[Any, Any, Response]]
MAX_PROBLEMS = 20
SURROGATES = re.compile("[\ud800-\udfff]")
NOT_FINITE = (
    "must be a finite number: NaN, Infinity and numbers beyond ±1.8e308 are not JSON numbers"
)
SURROGATE = "holds a lone UTF-16 surrogate (\\ud800-\\udfff), which is not text; send valid Unicode"
NUL = "holds a NUL character (\\u0000), which text fields cannot store"


def json_problems(body: bytes) -> list[dict[str, Any]]:
    """What makes `body` unacceptable JSON, as validation errors (type, loc, msg); [] if none."""
    try:
        value = json.loads(body.decode("utf-8"))
    except UnicodeDecodeError as error:
        return [_problem("json_invalid", ("body",), f"the body is not UTF-8 (byte {error.start})")]
    except json.JSONDecodeError as error:
        where = f"line {error.lineno} column {error.colno}"
        return [_problem("json_invalid", ("body",), f"JSON decode error: {error.msg} at {where}")]
    except (ValueError, RecursionError) as error:  # 4,300-digit integers; nesting too deep
        return [_problem("json_invalid", ("body",), f"JSON decode error: {_reason(error)}")]
    return _value_problems(value)


def _value_problems(value: Any) -> list[dict[str, Any]]:
    """Walk the parsed body (without recursion) for non-finite numbers and unstorable text."""
    problems: list[dict[str, Any]] = []
    pending: list[tuple[Location, Any]] = [(("body",), value)]
    while pending and len(problems) < MAX_PROBLEMS:
        where, item = pending.pop()
        if isinstance(item, float) and not math.isfinite(item):
            problems.append(_problem("finite_number", where, NOT_FINITE))
        elif isinstance(item, str):
            problems.extend(_text_problems(where, item))
        elif isinstance(item, dict):
            for key, child in item.items():
                problems.extend(_text_problems((*where, key), key))
                pending.append(((*where, key), child))
        elif isinstance(item, list):
            pending.extend(((*where, index), child) for index, child in enumerate(item))
    return problems[:MAX_PROBLEMS]


def _text_problems(where: Location, text: str) -> list[dict[str, Any]]:
    if SURROGATES.search(text):
        return [_problem("string_unicode", where, SURROGATE)]
    if "\x00" in text:
        return [_problem("string_nul", where, NUL)]
    return []


def _problem(kind: str, where: Location, message: str) -> dict[str, Any]:
    return {"type": kind, "loc": where, "msg": message}


def _reason(error: BaseException) -> str:
    if isinstance(error, RecursionError):
        return "the body is nested too deeply"
    return str(error)


class StrictJsonRoute(APIRoute):
    """A route whose JSON body is checked by `json_problems` before FastAPI validates it."""

    def get_route_handler(self) -> Handler:
        handler = super().get_route_handler()
        if self.body_field is None:
            return handler

        async def strict(request: Request) -> Response:
            body = await request.body()
            problems = json_problems(body) if body else []
            if problems:
                raise RequestValidationError(problems)
            return await handler(request)

        return strict
