"""Numbers spelled as tsagent (JavaScript) writes them."""

from __future__ import annotations

import pytest

from foundry.agent.numbers import js_number_text


@pytest.mark.parametrize(
    ("value", "spelling"),
    [
        (-7.266993634402752e-05, "-0.00007266993634402752"),
        (1.5e-8, "1.5e-8"),
        (1e-7, "1e-7"),
        (2.5e-6, "0.0000025"),
        (0.5, "0.5"),
        (123.456, "123.456"),
        (1.5e21, "1.5e+21"),
        (5.0, "5.0"),  # a whole float stays a float when read back
    ],
)
def test_numbers_are_spelled_as_javascript_spells_them(value: float, spelling: str) -> None:
    assert js_number_text(value) == spelling
    assert float(spelling) == value
