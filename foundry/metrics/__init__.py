"""Figures derived from the event log: TaskMetrics per task and the series the dashboards plot.

Each name is imported from its module when it is first used, so that a command that needs one
module (`foundry metrics export` reads rows without pydantic or SQLAlchemy) imports no other."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names as mypy should see them
    from foundry.metrics.export import export_csv  # noqa: F401
    from foundry.metrics.figures import (  # noqa: F401
        DashboardFigures,
        Figure,
        TaskBin,
        TimeBin,
        read_figures,
    )
    from foundry.metrics.loader import METRIC_KINDS, load_metric_events, load_task_log  # noqa: F401
    from foundry.metrics.report import PHASE_TITLES, format_task_metrics  # noqa: F401
    from foundry.metrics.series import (  # noqa: F401
        AgreementPoint,
        ConfidencePoint,
        DashboardSeries,
        DecisionPoint,
        HumanWaitPoint,
        IterationsPoint,
        ModelCallPoint,
        PhaseSharePoint,
        QuestionPoint,
        ResolutionPoint,
        SeriesPoint,
        TaskChoice,
        agreement_series,
        confidence_series,
        dashboard_series,
        decision_series,
        human_wait_series,
        iterations_series,
        model_call_series,
        phase_share_series,
        question_series,
        resolution_series,
    )
    from foundry.metrics.stored import (  # noqa: F401
        MetricsState,
        keep_aggregates,
        metrics_state,
        rebuild_aggregates,
    )
    from foundry.metrics.task import (  # noqa: F401
        OTHER,
        PHASE_COLUMNS,
        ConsultSize,
        PhaseTime,
        TaskMetrics,
        phase_times,
        task_metrics,
    )
    from foundry.metrics.terms import (  # noqa: F401
        AGREEMENTS,
        DECISION_LEVELS,
        LEVELS,
        OUTCOMES,
        QUESTION_OUTCOMES,
        TASK_CHECKS,
        TO_A_PERSON,
        MetricsFilter,
        resolution_level,
    )

_NAMES_OF_MODULE = {
    "export": ("export_csv",),
    "figures": ("DashboardFigures", "Figure", "TaskBin", "TimeBin", "read_figures"),
    "loader": ("METRIC_KINDS", "load_metric_events", "load_task_log"),
    "report": ("PHASE_TITLES", "format_task_metrics"),
    "series": (
        "AgreementPoint",
        "ConfidencePoint",
        "DashboardSeries",
        "DecisionPoint",
        "HumanWaitPoint",
        "IterationsPoint",
        "ModelCallPoint",
        "PhaseSharePoint",
        "QuestionPoint",
        "ResolutionPoint",
        "SeriesPoint",
        "TaskChoice",
        "agreement_series",
        "confidence_series",
        "dashboard_series",
        "decision_series",
        "human_wait_series",
        "iterations_series",
        "model_call_series",
        "phase_share_series",
        "question_series",
        "resolution_series",
    ),
    "stored": ("MetricsState", "keep_aggregates", "metrics_state", "rebuild_aggregates"),
    "task": (
        "OTHER",
        "PHASE_COLUMNS",
        "ConsultSize",
        "PhaseTime",
        "TaskMetrics",
        "phase_times",
        "task_metrics",
    ),
    "terms": (
        "AGREEMENTS",
        "DECISION_LEVELS",
        "LEVELS",
        "OUTCOMES",
        "QUESTION_OUTCOMES",
        "TASK_CHECKS",
        "TO_A_PERSON",
        "MetricsFilter",
        "resolution_level",
    ),
}
_MODULE_OF = {name: module for module, names in _NAMES_OF_MODULE.items() for name in names}
__all__ = sorted(_MODULE_OF)


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # found at once from now on
    return value
