"""Numbers spelled as tsagent (JavaScript) writes them, in JSON and YAML, and read back the same."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from foundry.agent.numbers import js_number_text
from foundry.agent.syntax import parse_json, parse_yaml, plain, render_json, render_yaml, same_data
from foundry.agent.tsyaml import render_tsagent_yaml


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


EDGES = [
    (5e-324, "5e-324"),  # the smallest float
    (1.7976931348623157e308, "1.7976931348623157e+308"),  # the largest
    (-7.266993634402752e-05, "-0.00007266993634402752"),
    (-4.597119633775956e-33, "-4.597119633775956e-33"),  # ruamel used to lose its last digit
    (1e21, "1e+21"),
    (1e-7, "1e-7"),
    (-0.0, "-0.0"),  # keeps its sign and stays a float
    (5.0, "5.0"),
    (2**53 + 1, "9007199254740993"),  # an integer beyond 2**53 keeps every digit
    (-(10**30), "-1000000000000000000000000000000"),
    (True, "true"),
]


@pytest.mark.parametrize(("value", "spelling"), EDGES)
def test_json_writes_numbers_as_tsagent_and_reads_them_back_the_same(
    value: float, spelling: str
) -> None:
    text = render_json({"value": value})
    assert text == f'{{\n  "value": {spelling}\n}}\n'
    assert same_data(parse_json(text, Path("x.json")), {"value": value})
    assert math.copysign(1, parse_json(text, Path("x.json"))["value"]) == math.copysign(1, value)


@pytest.mark.parametrize(("value", "spelling"), EDGES)
@pytest.mark.parametrize("render", [render_yaml, render_tsagent_yaml])
def test_yaml_writes_numbers_as_tsagent_and_reads_them_back_the_same(
    render: Callable[[Any], str], value: float, spelling: str
) -> None:
    text = render({"value": value})
    assert text == f"value: {spelling}\n"
    read = parse_yaml(text, Path("x.yaml"))["value"]
    assert same_data(plain(read), value)
    assert math.copysign(1, read) == math.copysign(1, value)


def test_json_writes_nan_and_infinities_as_null_as_json_stringify_does() -> None:
    values = [math.nan, math.inf, -math.inf]
    assert render_json(values) == "[\n  null,\n  null,\n  null\n]\n"


@pytest.mark.parametrize("render", [render_yaml, render_tsagent_yaml])
def test_yaml_writes_nan_and_infinities_as_the_core_schema_spells_them(
    render: Callable[[Any], str],
) -> None:
    text = render({"values": [math.nan, math.inf, -math.inf]})
    assert text == "values:\n  - .nan\n  - .inf\n  - -.inf\n"
    read = parse_yaml(text, Path("x.yaml"))["values"]
    assert math.isnan(read[0]) and read[1:] == [math.inf, -math.inf]


def test_json_changes_nothing_but_the_spelling_of_floats() -> None:
    data = {
        "text": 'é "quoted" \\ \n\t\u2028\x01',
        "nested": {"empty": {}, "none": [], "items": [1, "two", None, False, {"a": [[]]}]},
        7: "a number key",
        "": "",
    }
    assert render_json(data) == json.dumps(data, indent=2, ensure_ascii=False) + "\n"
