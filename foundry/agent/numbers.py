"""Numbers spelled as tsagent writes them (JavaScript's), so a converted file keeps its numbers.

tsagent's JSON.stringify and its `yaml` library both write a number as JavaScript's
Number.prototype.toString does: the shortest digits that read back as the same number (as
Python's repr), in plain notation from 1e-7 up to 1e21 (`-0.00007266993634402752`, where
Python writes `-7.266993634402752e-05`) and otherwise as `1.5e-8` (Python: `1.5e-08`).
"""

from __future__ import annotations

import math


def js_number_text(value: float) -> str:
    """`value` as JavaScript spells it; a whole float keeps Python's `5.0`, so that it still
    reads back as a float rather than an integer."""
    if not math.isfinite(value) or value == 0 or value.is_integer():
        return repr(value)
    sign = "-" if value < 0 else ""
    digits, point = _shortest_digits(abs(value))
    return sign + _js_layout(digits, point)


def _shortest_digits(value: float) -> tuple[str, int]:
    """(the significant digits of `value`, where its point goes: value = 0.DIGITS x 10^n)."""
    mantissa, _, exponent = f"{value!r}".partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    leading_zeros = len(whole + fraction) - len((whole + fraction).lstrip("0"))
    point = len(whole) - leading_zeros + (int(exponent) if exponent else 0)
    return digits.rstrip("0") or "0", point


def _js_layout(digits: str, point: int) -> str:
    count = len(digits)
    if count <= point <= 21:
        return digits + "0" * (point - count)
    if 0 < point <= 21:
        return f"{digits[:point]}.{digits[point:]}"
    if -6 < point <= 0:
        return "0." + "0" * -point + digits
    exponent = point - 1
    sign = "+" if exponent > 0 else "-"
    mantissa = digits if count == 1 else f"{digits[0]}.{digits[1:]}"
    return f"{mantissa}e{sign}{abs(exponent)}"
