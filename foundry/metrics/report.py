"""TaskMetrics as text: a table for people, JSON for programs."""

from __future__ import annotations

from foundry.metrics.task import TaskMetrics

PHASE_TITLES = {
    "planning": "planning",
    "agent_execution": "agent execution",
    "validation": "validation",
    "helper": "helper",
    "interrogation": "interrogation",
    "rescue": "rescue",
    "waiting_for_approval": "waiting for a human",
    "other": "other",
}


def format_task_metrics(metrics: TaskMetrics, as_json: bool = False) -> str:
    """The metrics of a task as a readable table, or as indented JSON with `as_json`."""
    if as_json:
        return metrics.model_dump_json(indent=2)
    return "\n".join([*_summary(metrics), "", *_phase_table(metrics)])


def _summary(metrics: TaskMetrics) -> list[str]:
    scores = ", ".join(f"{score:g}" for score in metrics.confidence_scores) or "none"
    rows = [
        ("Task", f"{metrics.name}  ({metrics.task_id})"),
        ("Status", metrics.status),
        ("Started", f"{metrics.started_at:%Y-%m-%d %H:%M:%S %Z}"),
        ("Active time", _duration(metrics.total_seconds)),
        ("Iterations", str(metrics.iterations)),
        ("Supervisor calls", str(metrics.supervisor_calls)),
        ("Operator calls", str(metrics.operator_calls)),
        ("Helper calls", str(metrics.helper_calls)),
        ("Worker calls", str(metrics.worker_calls)),
        ("Interrogation rounds", str(metrics.interrogation_rounds)),
        ("Rescues", ", ".join(metrics.rescues) or "none"),
        ("Prompt size", _chars(metrics.prompt_chars, metrics.prompt_chars_per_consult)),
        ("Response size", _chars(metrics.response_chars, metrics.response_chars_per_consult)),
        ("Tokens in / out", f"{metrics.input_tokens:,} / {metrics.output_tokens:,}"),
        ("Confidence scores", scores),
    ]
    lines = [f"{label:<22}{value}" for label, value in rows]
    lines.append(f"{'Retry reasons':<22}none" if not metrics.retry_reasons else "Retry reasons")
    lines += [f"  {number}. {reason}" for number, reason in enumerate(metrics.retry_reasons, 1)]
    return lines


def _phase_table(metrics: TaskMetrics) -> list[str]:
    lines = [f"{'Phase':<22}{'Time':>12}{'Share':>10}"]
    for entry in metrics.phases:
        mark = "  <- bottleneck" if entry.phase == metrics.bottleneck else ""
        title = PHASE_TITLES.get(entry.phase, entry.phase)
        lines.append(f"{title:<22}{_duration(entry.seconds):>12}{entry.share:>9.1f}%{mark}")
    lines.append(f"{'total':<22}{_duration(metrics.total_seconds):>12}{100.0:>9.1f}%")
    return lines


def _chars(total: int, per_consult: float) -> str:
    return f"{total:,} chars ({per_consult:,.0f} per consult)"


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(seconds, 60)
    return f"{int(minutes)} min {rest:04.1f} s"
