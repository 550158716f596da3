"""The metrics dashboards: pyqtgraph charts of the series computed by foundry.metrics."""

from foundry.ui.dashboards.controller import DashboardController
from foundry.ui.dashboards.view import DashboardView, build_view

__all__ = ["DashboardController", "DashboardView", "build_view"]
