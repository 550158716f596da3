"""CSV files of the dashboard series: one per series, a header row, one row per point."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path

from foundry.metrics.series import (
    ConfidencePoint,
    DashboardSeries,
    HumanWaitPoint,
    IterationsPoint,
    ModelCallPoint,
    PhaseSharePoint,
    ResolutionPoint,
    SeriesPoint,
)

SERIES_FILES: dict[str, type[SeriesPoint]] = {
    "confidence": ConfidencePoint,
    "iterations": IterationsPoint,
    "phase_shares": PhaseSharePoint,
    "model_calls": ModelCallPoint,
    "resolutions": ResolutionPoint,
    "human_waits": HumanWaitPoint,
}


def write_points_csv(
    path: Path, point_type: type[SeriesPoint], points: Sequence[SeriesPoint]
) -> Path:
    """Write `points` to `path`: the point type's fields as the header, times in ISO 8601."""
    columns = list(point_type.model_fields)
    with path.open("w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(columns)
        for point in points:
            values = point.model_dump(mode="json")
            writer.writerow("" if values[name] is None else values[name] for name in columns)
    return path


def export_csv(directory: Path, series: DashboardSeries) -> list[Path]:
    """One CSV per series in `directory` (created if missing), named after the series."""
    directory.mkdir(parents=True, exist_ok=True)
    return [
        write_points_csv(directory / f"{name}.csv", point_type, getattr(series, name))
        for name, point_type in SERIES_FILES.items()
    ]
