"""TaskMetrics printed as a table and as JSON."""

from __future__ import annotations

import json

from foundry.metrics import TaskMetrics, format_task_metrics

from .test_task_metrics import EXPECTED


def test_the_table_shows_the_figures_and_marks_the_bottleneck() -> None:
    table = format_task_metrics(EXPECTED).splitlines()
    assert "Iterations            2" in table
    assert "Supervisor calls      2" in table
    assert "Interrogation rounds  1" in table
    assert "Prompt size           8,750 chars (1,250 per consult)" in table
    assert "Confidence scores     82, 40, 55, 90, 45" in table
    assert "  2. the same error twice: AssertionError in test_get_user" in table
    assert "agent execution       1 min 45.0 s     32.8%  <- bottleneck" in table
    assert "waiting for a human   1 min 05.0 s     20.3%" in table
    assert table[-1] == "total                 5 min 20.0 s    100.0%"


def test_the_json_reads_back_as_the_same_metrics() -> None:
    text = format_task_metrics(EXPECTED, as_json=True)
    data = json.loads(text)
    assert data["prompt_chars_per_consult"] == 1250.0
    data.pop("prompt_chars_per_consult")
    data.pop("response_chars_per_consult")
    assert TaskMetrics.model_validate(data) == EXPECTED
